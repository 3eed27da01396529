// The strings the de-duplication remembers as finished, as columns: a ring of finishes in the
// order they happened (typed arrays), and an open-addressing index over it. A string is its scope
// (organization, project, step, language; interned to a small number while a finish in the ring
// names it) and its id, so that nothing per finished string is a JavaScript object or a string.
// With a Map of key strings it was 140-170 bytes per finished string (by how full the Map's table
// and the arrays were), most of it the keys (an organization's id is a UUID) and the table: 17.5
// MB, a quarter of the main thread's live heap, in the million-pair burst, where a hundred
// thousand finished strings are remembered (DEDUPE_MAX; issue 16). Here it is 41 bytes per place
// in the ring (33 in its columns, 8 in the index): 41-82 per string as the ring grows by
// doubling, 5.4 MB for a hundred thousand.
import type { Job } from '../protocol/job.js'

/** A string as the de-duplication knows it, whatever its revision. */
export type StringRef = Pick<Job, 'organizationId' | 'projectId' | 'stepId' | 'languageId' | 'stringId'>

const MIN_CAPACITY = 1024

/** A hash of a scope and a string id (ids are safe integers: both halves count). Exported for the tests. */
export function hashOf(scope: number, id: number): number {
  let h = Math.imul(scope + 0x165667b1, 0x9e3779b1) ^ (id >>> 0)
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) ^ Math.floor(id / 4294967296)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) | 0
}

/** Put a ring place with hash `h` into an index (linear probing; the index always has room). */
function insert(index: Int32Array, h: number, place: number): void {
  const mask = index.length - 1
  let i = h & mask
  while (index[i] !== 0) i = (i + 1) & mask
  index[i] = place + 1
}

export class FinishedStrings {
  /** Ring places (a power of two); a finish's place is its sequence number modulo this. */
  private capacity = 0
  private scope = new Int32Array(0)
  private id = new Float64Array(0)
  private revision = new Float64Array(0)
  private finishedAt = new Float64Array(0)
  private hash = new Int32Array(0)
  /** 1 while the finish at this place is its string's latest (the index points at it). */
  private latest = new Uint8Array(0)
  /** Sequence numbers of the oldest finish in the ring and of the next one. */
  private head = 0
  private end = 0
  /** Open addressing with linear probing, twice the ring's places: a place + 1, or 0 (empty). */
  private index = new Int32Array(0)
  /** Strings whose latest finish is in the ring. */
  private strings = 0

  /** Scopes by key, their finishes in the ring, and numbers free for reuse. */
  private readonly scopes = new Map<string, number>()
  private scopeKeys: string[] = []
  private scopeRefs: number[] = []
  private freeScopes: number[] = []
  /** The last scope looked up, -1 for none (finishes come in runs of one step and language). */
  private lastScope = -1
  private lastOrganization = ''
  private lastProject = 0
  private lastStep = 0
  private lastLanguage = ''

  /** Strings remembered. */
  get size(): number {
    return this.strings
  }

  /** Finishes in the ring, the latest of their string or not. */
  get finishes(): number {
    return this.end - this.head
  }

  /** When the oldest finish in the ring happened (ms), or undefined when there is none. */
  oldestAt(): number | undefined {
    return this.head < this.end ? this.finishedAt[this.head & (this.capacity - 1)] : undefined
  }

  /** The revision remembered for the string, or undefined. */
  revisionOf(ref: StringRef): number | undefined {
    const place = this.find(ref)
    return place < 0 ? undefined : this.revision[place]
  }

  /** Remember the string's finish of a revision at a time; it replaces what was remembered of it. */
  add(ref: StringRef, revision: number, at: number): void {
    this.forget(ref)
    if (this.end - this.head === this.capacity) this.relayout(Math.max(MIN_CAPACITY, this.capacity * 2))
    const scope = this.scopeOf(ref, true)
    const place = this.end & (this.capacity - 1)
    const h = hashOf(scope, ref.stringId)
    this.scope[place] = scope
    this.id[place] = ref.stringId
    this.revision[place] = revision
    this.finishedAt[place] = at
    this.hash[place] = h
    this.latest[place] = 1
    this.scopeRefs[scope]!++
    this.end++
    this.strings++
    insert(this.index, h, place)
  }

  /** Forget the string (its finishes stay in the ring until they are the oldest, but count for nothing). */
  forget(ref: StringRef): void {
    const place = this.find(ref)
    if (place >= 0) this.unindex(place)
  }

  /** Drop the oldest finish from the ring (and the string, if it was its latest). */
  dropOldest(): void {
    if (this.head === this.end) return
    const place = this.head & (this.capacity - 1)
    if (this.latest[place]) this.unindex(place)
    this.release(this.scope[place]!)
    this.head++
    if (this.capacity > MIN_CAPACITY && (this.end - this.head) * 4 <= this.capacity) this.relayout(this.capacity / 2)
  }

  /** The ring place of the string's latest finish, or -1. */
  private find(ref: StringRef): number {
    if (this.strings === 0) return -1
    const scope = this.scopeOf(ref, false)
    if (scope < 0) return -1
    const h = hashOf(scope, ref.stringId)
    const mask = this.index.length - 1
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = this.index[i]!
      if (v === 0) return -1
      const place = v - 1
      if (this.hash[place] === h && this.id[place] === ref.stringId && this.scope[place] === scope) return place
    }
  }

  /** Take the finish at a place out of the index (backward-shift deletion: no tombstones). */
  private unindex(place: number): void {
    const index = this.index
    const mask = index.length - 1
    let i = this.hash[place]! & mask
    while (index[i] !== place + 1) i = (i + 1) & mask
    for (let j = (i + 1) & mask; index[j] !== 0; j = (j + 1) & mask) {
      const v = index[j]!
      const home = this.hash[v - 1]! & mask
      // The entry at j may fill the hole at i unless its home lies cyclically in (i, j].
      if (i <= j ? home <= i || home > j : home <= i && home > j) {
        index[i] = v
        i = j
      }
    }
    index[i] = 0
    this.latest[place] = 0
    this.strings--
  }

  /** Move the ring to `capacity` places (in order) and build the index again. */
  private relayout(capacity: number): void {
    const scope = new Int32Array(capacity)
    const id = new Float64Array(capacity)
    const revision = new Float64Array(capacity)
    const finishedAt = new Float64Array(capacity)
    const hash = new Int32Array(capacity)
    const latest = new Uint8Array(capacity)
    const index = new Int32Array(capacity * 2)
    for (let seq = this.head; seq < this.end; seq++) {
      const from = seq & (this.capacity - 1)
      const to = seq & (capacity - 1)
      scope[to] = this.scope[from]!
      id[to] = this.id[from]!
      revision[to] = this.revision[from]!
      finishedAt[to] = this.finishedAt[from]!
      hash[to] = this.hash[from]!
      latest[to] = this.latest[from]!
      if (latest[to]) insert(index, hash[to]!, to)
    }
    this.capacity = capacity
    this.scope = scope
    this.id = id
    this.revision = revision
    this.finishedAt = finishedAt
    this.hash = hash
    this.latest = latest
    this.index = index
  }

  /** The scope's number; with `create`, made if there is none (else -1). */
  private scopeOf(ref: StringRef, create: boolean): number {
    if (this.lastScope >= 0 && this.lastOrganization === ref.organizationId && this.lastProject === ref.projectId && this.lastStep === ref.stepId && this.lastLanguage === ref.languageId) return this.lastScope
    const key = `${ref.organizationId}|${ref.projectId}|${ref.stepId}|${ref.languageId}`
    let scope = this.scopes.get(key)
    if (scope === undefined) {
      if (!create) return -1
      scope = this.freeScopes.pop() ?? this.scopeRefs.length
      this.scopes.set(key, scope)
      this.scopeKeys[scope] = key
      this.scopeRefs[scope] = 0
    }
    this.lastScope = scope
    this.lastOrganization = ref.organizationId
    this.lastProject = ref.projectId
    this.lastStep = ref.stepId
    this.lastLanguage = ref.languageId
    return scope
  }

  private release(scope: number): void {
    if (--this.scopeRefs[scope]! > 0) return
    this.scopes.delete(this.scopeKeys[scope]!)
    this.scopeKeys[scope] = ''
    this.freeScopes.push(scope)
    if (this.lastScope === scope) this.lastScope = -1
  }
}
