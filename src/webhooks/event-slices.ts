// A large batch, cut into batches of a few events each as its bytes are read (from the file it was
// written to, large-body.ts): `{"events":[e1,e2,...]}` becomes `{"events":[e1,...,ek]}`,
// `{"events":[ek+1,...]}`, ... with every event's bytes as they were. Each slice is then decoded as
// a batch of its own, so that a body of a hundred megabytes is never parsed (or held) whole.
//
// The cutter follows JSON's structure byte by byte (strings and their escapes, nesting), so a
// `},{"` inside an event or a string never cuts it. It knows the batch's shape: an object with an
// `events` array, any whitespace, other members skipped (the batch schema allows them; events may
// gain siblings). What it cannot vouch for is `NotSliceable`: no `events`, `events` twice or not an
// array, a member that is not JSON, an empty element (`[a,,b]`, `[a,]`), bytes after the end. The
// caller then decodes that body whole, so its answer is the same as for any other body. Anything
// else that is not JSON lands inside an event's bytes, and that slice fails to parse.

export class NotSliceable extends Error {}

export const EVENTS_TWICE = 'the batch has its events twice'

const OPEN = Buffer.from('{"events":[')
const COMMA = Buffer.from(',')
const CLOSE = Buffer.from(']}')

/** A slice of the batch: a batch of its own, and the index its first event had in the whole. */
export interface Slice {
  body: Buffer
  first: number
  events: number
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

// Where the cutter is in the body's structure.
const enum Phase {
  /** Before the opening `{`. */
  Start,
  /** Before a member's key (or, for the first, the closing `}`). */
  BeforeKey,
  /** In a member's key. */
  InKey,
  /** After a key: `:`. */
  AfterKey,
  /** Before a member's value. */
  BeforeValue,
  /** In the value of a member other than `events`: skipped. */
  InOther,
  /** After a member: `,` or `}`. */
  AfterMember,
  /** In the events array, before an event (or the array's `]`). */
  BeforeEvent,
  /** Inside an event. */
  InEvent,
  /** After an event: `,` or `]`. */
  AfterEvent,
  /** After the closing `}`: only whitespace. */
  Done,
}

/**
 * Cuts a batch's bytes, given in chunks of any size, into slices of about `sliceBytes` each (an
 * event larger than that is a slice alone). `push` and `end` return the slices completed by then.
 */
export class EventSlicer {
  private phase = Phase.Start
  private members = 0
  private sawEvents = false
  /** The bytes of the key being read, and whether the last key read was `events`. */
  private key: number[] = []
  private keyIsEvents = false
  private depth = 0
  private inString = false
  private escaped = false
  /** The current event's bytes from earlier chunks. */
  private partial: Buffer[] = []
  /** Events of the slice being filled. */
  private events: Buffer[] = []
  private bytes = 0
  private index = 0
  private first = 0

  constructor(private readonly sliceBytes: number) {}

  push(chunk: Buffer): Slice[] {
    const out: Slice[] = []
    // Where the current event starts in this chunk: it began here, or (0) in an earlier chunk.
    let start = 0
    let i = 0
    while (i < chunk.length) {
      if (this.phase === Phase.InEvent || this.phase === Phase.InOther) {
        const end = this.scanValue(chunk, i)
        if (end === -1) {
          this.partial.push(chunk.subarray(start))
          return out
        }
        if (this.phase === Phase.InEvent) {
          this.finishEvent(chunk.subarray(start, end), out)
          this.phase = Phase.AfterEvent
        } else {
          this.finishOther(chunk.subarray(start, end))
          this.phase = Phase.AfterMember
        }
        i = end
        continue
      }
      const c = chunk[i]!
      if (this.phase === Phase.InKey) this.readKey(c)
      else if (!isSpace(c)) {
        if (this.phase === Phase.BeforeEvent) {
          if (c === 0x5d /* ] */ && this.index === 0) this.phase = Phase.AfterMember
          else if (c === 0x2c /* , */ || c === 0x5d) throw new NotSliceable(`event ${this.index} is empty`)
          else {
            this.phase = Phase.InEvent
            this.depth = 0
            start = i
            continue // the byte is the event's first: scanned with it
          }
        } else if (this.phase === Phase.BeforeValue) {
          if (!this.keyIsEvents) {
            if (c === 0x2c || c === 0x7d || c === 0x5d) throw new NotSliceable('a member of the batch has no value')
            this.phase = Phase.InOther
            this.depth = 0
            start = i
            continue
          }
          if (c !== 0x5b /* [ */) throw new NotSliceable('the events are not an array')
          this.phase = Phase.BeforeEvent
        } else this.structural(c)
      }
      i++
    }
    return out
  }

  /** The last slice; throws NotSliceable if the body ended before the batch did. */
  end(): Slice[] {
    if (this.phase !== Phase.Done || !this.sawEvents) throw new NotSliceable(this.phase !== Phase.Done ? 'the body ends before the batch does' : 'the batch has no events')
    return this.events.length ? [this.take()] : []
  }

  /** A byte outside strings and values: the object's own punctuation. */
  private structural(c: number) {
    const p = this.phase
    if (p === Phase.Start && c === 0x7b /* { */) this.phase = Phase.BeforeKey
    else if (p === Phase.BeforeKey && c === 0x22 /* " */) this.beginKey()
    else if (p === Phase.BeforeKey && c === 0x7d /* } */ && this.members === 0) this.phase = Phase.Done
    else if (p === Phase.AfterKey && c === 0x3a /* : */) this.phase = Phase.BeforeValue
    else if (p === Phase.AfterMember && c === 0x2c) this.phase = Phase.BeforeKey
    else if (p === Phase.AfterMember && c === 0x7d) this.phase = Phase.Done
    else if (p === Phase.AfterEvent && c === 0x2c) this.phase = Phase.BeforeEvent
    else if (p === Phase.AfterEvent && c === 0x5d) this.phase = Phase.AfterMember
    else throw new NotSliceable(p === Phase.Done ? 'bytes after the end of the batch' : `unexpected byte ${c} in the batch's structure`)
  }

  private beginKey() {
    this.phase = Phase.InKey
    this.members++
    this.key = []
  }

  /** A byte of a key: it ends at an unescaped `"`, and is then read as JSON reads it. */
  private readKey(c: number) {
    if (this.escaped) this.escaped = false
    else if (c === 0x5c /* \ */) this.escaped = true
    else if (c === 0x22 /* " */) {
      let key: unknown
      try {
        key = JSON.parse(`"${Buffer.from(this.key).toString('utf8')}"`)
      } catch {
        throw new NotSliceable('a key of the batch is not a JSON string')
      }
      this.keyIsEvents = key === 'events'
      if (this.keyIsEvents) {
        if (this.sawEvents) throw new NotSliceable(EVENTS_TWICE)
        this.sawEvents = true
      }
      this.phase = Phase.AfterKey
      return
    }
    this.key.push(c)
  }

  /**
   * Scan the current value (an event, or another member's value) from `i`: the index just past
   * its end in `chunk` (its closing bracket, or the `,`, `]` or `}` that ends a bare value), or -1
   * if it goes on in the next chunk.
   */
  private scanValue(chunk: Buffer, i: number): number {
    for (; i < chunk.length; i++) {
      const c = chunk[i]!
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === 0x5c /* \ */) this.escaped = true
        else if (c === 0x22 /* " */) this.inString = false
        continue
      }
      if (c === 0x22) this.inString = true
      else if (c === 0x7b /* { */ || c === 0x5b /* [ */) this.depth++
      else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
        if (this.depth === 0) return i // a bare value ends at its container's close
        if (--this.depth === 0) return i + 1
      } else if (c === 0x2c /* , */ && this.depth === 0) return i
    }
    return -1
  }

  /** Another member's value, skipped, but only if it is JSON (else the whole parse would fail). */
  private finishOther(last: Buffer) {
    const value = this.partial.length ? Buffer.concat([...this.partial, last]) : last
    this.partial = []
    try {
      JSON.parse(value.toString('utf8'))
    } catch {
      throw new NotSliceable('a member of the batch other than its events is not JSON')
    }
  }

  private finishEvent(last: Buffer, out: Slice[]) {
    const event = this.partial.length ? Buffer.concat([...this.partial, last]) : last
    this.partial = []
    if (this.events.length && this.bytes + event.length > this.sliceBytes) out.push(this.take())
    this.events.push(event)
    this.bytes += event.length + 1
    this.index++
  }

  private take(): Slice {
    const parts: Buffer[] = [OPEN]
    for (let k = 0; k < this.events.length; k++) {
      if (k) parts.push(COMMA)
      parts.push(this.events[k]!)
    }
    parts.push(CLOSE)
    const slice = { body: Buffer.concat(parts), first: this.first, events: this.events.length }
    this.first += this.events.length
    this.events = []
    this.bytes = 0
    return slice
  }
}
