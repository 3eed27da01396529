// De-duplication by (organization, project, step, language, string, revision), from memory only
// while a string is queued or running: a repeat then is absorbed. A string that arrives again after
// it finished is not decided here: it may be a repeat of a delivery already reported, or it may have
// come back to the step (a reviewer sent it back, a manager pressed Resend) with the same revision.
// It arrives as `finished`, and the service's status decides (platform notes, "A string comes
// back"). A newer revision supersedes an older one still in flight.
// The memory of finished strings is bounded twice: by time (ttlMs) and by count (maxFinished),
// so a flood can't grow it without end; a string forgotten is simply `new`. Finished strings are
// kept as columns, not as keys (finished-strings.ts): a hundred thousand of them are remembered
// through every large burst.
import { stringKeyOf } from '../protocol/job.js'
import { FinishedStrings, type StringRef } from './finished-strings.js'

export type { StringRef }

/**
 * `new`: run it. `duplicate`: the same revision is queued or running. `stale`: a newer revision is
 * known. `finished`: this revision finished here before; it is active again, and the service's
 * status decides whether it runs (NEED_PROCESS) or was a repeat.
 */
export type Arrival = 'new' | 'duplicate' | 'stale' | 'finished'

export class Dedupe {
  /** Strings queued or running: their revision, by key. */
  private readonly active = new Map<string, number>()
  /** Finished strings, in columns (see finished-strings.ts). */
  private readonly finished = new FinishedStrings()

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
  private revisionOf(ref: StringRef, key: string): number | undefined {
    return this.active.get(key) ?? this.finished.revisionOf(ref)
  }

  /** What an arriving job is and, unless it is a duplicate or stale, remember it as active. */
  arrive(ref: StringRef, revision: number): Arrival {
    this.expire()
    const key = stringKeyOf(ref)
    const active = this.active.get(key)
    if (active !== undefined) {
      if (revision < active) return 'stale'
      if (revision === active) return 'duplicate'
      this.active.set(key, revision)
      return 'new'
    }
    const known = this.finished.revisionOf(ref)
    if (known !== undefined) {
      if (revision < known) return 'stale'
      this.finished.forget(ref)
      this.active.set(key, revision)
      return revision === known ? 'finished' : 'new'
    }
    this.active.set(key, revision)
    return this.now() < this.uncertainUntil ? 'finished' : 'new'
  }

  /** Forget an arrival that was never acknowledged (the journal write failed). */
  release(ref: StringRef, revision: number): void {
    const key = stringKeyOf(ref)
    if (this.active.get(key) === revision) this.active.delete(key)
  }

  /** Is this revision still the newest known for the string? Older ones are not reported. */
  isCurrent(ref: StringRef, revision: number): boolean {
    const known = this.revisionOf(ref, stringKeyOf(ref))
    return known === undefined || known <= revision
  }

  finish(ref: StringRef, revision: number): void {
    const key = stringKeyOf(ref)
    // The revision known for it (a finished one finishing again starts its window anew).
    if (this.revisionOf(ref, key) !== revision) return
    this.active.delete(key)
    if (this.ttlMs <= 0) {
      this.finished.forget(ref)
      return
    }
    this.finished.add(ref, revision, this.now())
    if (this.finished.finishes > this.maxFinished) this.expire(true)
  }

  isActive(ref: StringRef): boolean {
    return this.active.has(stringKeyOf(ref))
  }

  get size(): number {
    return this.active.size + this.finished.size
  }

  /** Forget finished strings older than the window, or beyond the count (`overCount`). */
  private expire(overCount = false): void {
    const cutoff = this.now() - this.ttlMs
    for (let at = this.finished.oldestAt(); at !== undefined && (at <= cutoff || (overCount && this.finished.finishes > this.maxFinished)); at = this.finished.oldestAt()) {
      this.finished.dropOldest()
    }
  }
}
