// A large batch, cut into batches of a few events each as its bytes are read (from the file it was
// written to, large-body.ts): `{"events":[e1,e2,...]}` becomes `{"events":[e1,...,ek]}`,
// `{"events":[ek+1,...]}`, ... with every event's bytes as they were. Each slice is then decoded as
// a batch of its own, so that a body of a hundred megabytes is never parsed (or held) whole.
//
// The cutter follows JSON's structure byte by byte (strings and their escapes, nesting), so a
// `},{"` inside an event or a string never cuts it. It knows one shape only: an object whose one
// key is `events`, an array (any whitespace). Anything else (another key, a value that is not an
// array, bytes after the end) is `NotSliceable`: the caller decodes that body whole, so its answer
// is the same as for any other body.

export class NotSliceable extends Error {}

const OPEN = Buffer.from('{"events":[')
const COMMA = Buffer.from(',')
const CLOSE = Buffer.from(']}')
/** The tokens a sliceable batch starts with. */
const HEAD = ['{', '"events"', ':', '['].map((t) => Buffer.from(t))

/** A slice of the batch: a batch of its own, and the index its first event had in the whole. */
export interface Slice {
  body: Buffer
  first: number
  events: number
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

// Where the cutter is in the body's structure.
const enum Phase {
  /** Before the opening `{`, then through `"events"`, `:` and `[`. */
  Head,
  /** In the array, before an event (or its closing `]`). */
  BeforeEvent,
  /** Inside an event. */
  InEvent,
  /** After an event: `,` or `]`. */
  AfterEvent,
  /** After the array's `]`: only `}` and whitespace. */
  Tail,
  /** After the closing `}`: only whitespace. */
  Done,
}

/**
 * Cuts a batch's bytes, given in chunks of any size, into slices of about `sliceBytes` each (an
 * event larger than that is a slice alone). `push` and `end` return the slices completed by then.
 */
export class EventSlicer {
  private phase = Phase.Head
  /** The head's token being read, and how many of its bytes were. */
  private token = 0
  private keyAt = 0
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
      if (this.phase === Phase.InEvent) {
        const end = this.scanEvent(chunk, i)
        if (end === -1) {
          this.partial.push(chunk.subarray(start))
          return out
        }
        this.finishEvent(chunk.subarray(start, end), out)
        this.phase = Phase.AfterEvent
        i = end
        continue
      }
      const c = chunk[i]!
      if (this.phase === Phase.Head) this.readHead(c)
      else if (!isSpace(c)) {
        if (this.phase === Phase.BeforeEvent) {
          if (c === 0x5d /* ] */ && this.index === 0) this.phase = Phase.Tail
          else {
            this.phase = Phase.InEvent
            this.depth = 0
            start = i
            continue // the byte is the event's first: scanned with it
          }
        } else if (this.phase === Phase.AfterEvent) {
          if (c === 0x2c /* , */) this.phase = Phase.BeforeEvent
          else if (c === 0x5d /* ] */) this.phase = Phase.Tail
          else throw new NotSliceable(`unexpected byte after event ${this.index - 1}`)
        } else if (this.phase === Phase.Tail && c === 0x7d /* } */) this.phase = Phase.Done
        else throw new NotSliceable(this.phase === Phase.Tail ? 'the batch holds more than its events' : 'bytes after the end of the batch')
      }
      i++
    }
    return out
  }

  /** The last slice; throws NotSliceable if the body ended before the batch did. */
  end(): Slice[] {
    if (this.phase !== Phase.Done) throw new NotSliceable('the body ends before the batch does')
    return this.events.length ? [this.take()] : []
  }

  /** The head, token by token: `{`, `"events"`, `:`, `[`, whitespace only between them. */
  private readHead(c: number) {
    if (this.keyAt === 0 && isSpace(c)) return
    const token = HEAD[this.token]!
    if (c !== token[this.keyAt]) throw new NotSliceable('the batch does not start with its events')
    if (++this.keyAt < token.length) return
    this.keyAt = 0
    if (++this.token === HEAD.length) this.phase = Phase.BeforeEvent
  }

  /**
   * Scan the current event from `i`: the index just past its end in `chunk` (its closing bracket,
   * or the `,` or `]` that ends a bare value), or -1 if it goes on in the next chunk.
   */
  private scanEvent(chunk: Buffer, i: number): number {
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
        if (this.depth === 0) return i // a bare value ends at the array's `]` (or a stray `}`)
        if (--this.depth === 0) return i + 1
      } else if (c === 0x2c /* , */ && this.depth === 0) return i
    }
    return -1
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
