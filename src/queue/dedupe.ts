// De-duplication by (organization, project, step, language, string, revision), from memory only
// while a string is queued or running: a repeat then is absorbed. A string that arrives again after
// it finished is not decided here: it may be a repeat of a delivery already reported, or it may have
// come back to the step (a reviewer sent it back, a manager pressed Resend) with the same revision.
// It arrives as `finished`, and the service's status decides (platform notes, "A string comes
// back"). A newer revision supersedes an older one still in flight.
// The memory of finished strings is bounded twice: by time (ttlMs) and by count (maxFinished),
// so a flood can't grow it without end; a string forgotten is simply `new`.

interface Entry {
  revision: number
  active: boolean
  /** When it finished (ms), for the recently-done window. */
  doneAt: number
}

/**
 * `new`: run it. `duplicate`: the same revision is queued or running. `stale`: a newer revision is
 * known. `finished`: this revision finished here before; it is active again, and the service's
 * status decides whether it runs (NEED_PROCESS) or was a repeat.
 */
export type Arrival = 'new' | 'duplicate' | 'stale' | 'finished'

export class Dedupe {
  private readonly entries = new Map<string, Entry>()
  /** Finished string keys in the order they finished, and when: two flat arrays, for expiry. */
  private finishedKeys: string[] = []
  private finishedAt: number[] = []
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

  /** What an arriving job is and, unless it is a duplicate or stale, remember it as active. */
  arrive(stringKey: string, revision: number): Arrival {
    this.expire()
    const e = this.entries.get(stringKey)
    if (e) {
      if (revision < e.revision) return 'stale'
      if (revision === e.revision) {
        if (e.active) return 'duplicate'
        e.active = true
        e.doneAt = 0
        return 'finished'
      }
    }
    const unsure = !e && this.now() < this.uncertainUntil
    this.entries.set(stringKey, { revision, active: true, doneAt: 0 })
    return unsure ? 'finished' : 'new'
  }

  /** Forget an arrival that was never acknowledged (the journal write failed). */
  release(stringKey: string, revision: number): void {
    const e = this.entries.get(stringKey)
    if (e && e.revision === revision && e.active) this.entries.delete(stringKey)
  }

  /** Is this revision still the newest known for the string? Older ones are not reported. */
  isCurrent(stringKey: string, revision: number): boolean {
    const e = this.entries.get(stringKey)
    return !e || e.revision <= revision
  }

  finish(stringKey: string, revision: number): void {
    const e = this.entries.get(stringKey)
    if (!e || e.revision !== revision) return
    if (this.ttlMs <= 0) {
      this.entries.delete(stringKey)
      return
    }
    e.active = false
    e.doneAt = this.now()
    this.finishedKeys.push(stringKey)
    this.finishedAt.push(e.doneAt)
    if (this.finishedKeys.length - this.head > this.maxFinished) this.expire(true)
  }

  isActive(stringKey: string): boolean {
    return this.entries.get(stringKey)?.active ?? false
  }

  get size(): number {
    return this.entries.size
  }

  /** Forget finished strings older than the window, or beyond the count (`overCount`). */
  private expire(overCount = false): void {
    const cutoff = this.now() - this.ttlMs
    const keys = this.finishedKeys
    const at = this.finishedAt
    while (this.head < keys.length && (at[this.head]! <= cutoff || (overCount && keys.length - this.head > this.maxFinished))) {
      const key = keys[this.head]!
      const doneAt = at[this.head]!
      this.head++
      const e = this.entries.get(key)
      if (e && !e.active && e.doneAt === doneAt) this.entries.delete(key)
    }
    if (this.head > 4096 && this.head * 2 > keys.length) {
      this.finishedKeys = keys.slice(this.head)
      this.finishedAt = at.slice(this.head)
      this.head = 0
    }
  }
}
