// De-duplication by (organization, project, step, language, string, revision), from memory only
// while a string is queued or running: a repeat then is absorbed. A string that arrives again after
// it finished is not decided here: it may be a repeat of a delivery already reported, or it may have
// come back to the step (a reviewer sent it back, a manager pressed Resend) with the same revision.
// It arrives as `finished`, and the service's status decides (platform notes, "A string comes
// back"). A newer revision supersedes an older one still in flight.
// The memory of finished strings is bounded twice: by time (ttlMs) and by count (maxFinished),
// so a flood can't grow it without end; a string forgotten is simply `new`.

/**
 * `new`: run it. `duplicate`: the same revision is queued or running. `stale`: a newer revision is
 * known. `finished`: this revision finished here before; it is active again, and the service's
 * status decides whether it runs (NEED_PROCESS) or was a repeat.
 */
export type Arrival = 'new' | 'duplicate' | 'stale' | 'finished'

export class Dedupe {
  // Two maps, so that nothing per string is an object of its own: a finished string can be a
  // hundred thousand entries (DEDUPE_MAX), 277 bytes each as one object per entry with its time
  // boxed, about 40% of the main heap's live set in the million-pair burst (issue 16).
  /** Strings queued or running: their revision. */
  private readonly active = new Map<string, number>()
  /** Finished strings: the sequence number of their finish (a place in the arrays below). */
  private readonly finished = new Map<string, number>()
  /** Finishes in the order they happened (sequence numbers from `base`): key, when (ms), revision. */
  private finishedKeys: string[] = []
  private finishedAt: number[] = []
  private finishedRevision: number[] = []
  /** Sequence number of the arrays' first element, and of the first finish not yet expired. */
  private base = 0
  private head = 0

  /**
   * Until then, a string unknown here may still have finished before the process restarted (its
   * memory did not survive the restart): it arrives as `finished`, so the service decides.
   */
  private uncertainUntil = 0

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxFinished = 100_000,
  ) {}

  /**
   * An earlier process finished strings on this journal until `lastAliveAt` (ms): what it
   * remembered would have been remembered up to ttlMs later, so until then nothing is taken as new.
   */
  restartedAfter(lastAliveAt: number): void {
    this.uncertainUntil = Math.max(this.uncertainUntil, lastAliveAt + this.ttlMs)
  }

  /** The newest revision known for the string, if any. */
  private revisionOf(stringKey: string): number | undefined {
    const active = this.active.get(stringKey)
    if (active !== undefined) return active
    const seq = this.finished.get(stringKey)
    return seq === undefined ? undefined : this.finishedRevision[seq - this.base]
  }

  /** What an arriving job is and, unless it is a duplicate or stale, remember it as active. */
  arrive(stringKey: string, revision: number): Arrival {
    this.expire()
    const active = this.active.get(stringKey)
    if (active !== undefined) {
      if (revision < active) return 'stale'
      if (revision === active) return 'duplicate'
      this.active.set(stringKey, revision)
      return 'new'
    }
    const known = this.revisionOf(stringKey)
    if (known !== undefined) {
      if (revision < known) return 'stale'
      this.finished.delete(stringKey)
      this.active.set(stringKey, revision)
      return revision === known ? 'finished' : 'new'
    }
    this.active.set(stringKey, revision)
    return this.now() < this.uncertainUntil ? 'finished' : 'new'
  }

  /** Forget an arrival that was never acknowledged (the journal write failed). */
  release(stringKey: string, revision: number): void {
    if (this.active.get(stringKey) === revision) this.active.delete(stringKey)
  }

  /** Is this revision still the newest known for the string? Older ones are not reported. */
  isCurrent(stringKey: string, revision: number): boolean {
    const known = this.revisionOf(stringKey)
    return known === undefined || known <= revision
  }

  finish(stringKey: string, revision: number): void {
    // The revision known for it (a finished one finishing again starts its window anew).
    if (this.revisionOf(stringKey) !== revision) return
    this.active.delete(stringKey)
    if (this.ttlMs <= 0) {
      this.finished.delete(stringKey)
      return
    }
    this.finished.set(stringKey, this.base + this.finishedKeys.length)
    this.finishedKeys.push(stringKey)
    this.finishedAt.push(this.now())
    this.finishedRevision.push(revision)
    if (this.base + this.finishedKeys.length - this.head > this.maxFinished) this.expire(true)
  }

  isActive(stringKey: string): boolean {
    return this.active.has(stringKey)
  }

  get size(): number {
    return this.active.size + this.finished.size
  }

  /** Forget finished strings older than the window, or beyond the count (`overCount`). */
  private expire(overCount = false): void {
    const cutoff = this.now() - this.ttlMs
    const keys = this.finishedKeys
    const end = this.base + keys.length
    while (this.head < end && (this.finishedAt[this.head - this.base]! <= cutoff || (overCount && end - this.head > this.maxFinished))) {
      const i = this.head - this.base
      const key = keys[i]!
      // Only if this finish is the string's latest (it may have come back and finished again since).
      if (this.finished.get(key) === this.head) this.finished.delete(key)
      this.head++
    }
    const drop = this.head - this.base
    if (drop > 4096 && drop * 2 > keys.length) {
      this.finishedKeys = keys.slice(drop)
      this.finishedAt = this.finishedAt.slice(drop)
      this.finishedRevision = this.finishedRevision.slice(drop)
      this.base = this.head
    }
  }
}
