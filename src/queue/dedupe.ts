// De-duplication by (organization, project, step, language, string, revision). A job that is
// already queued or running absorbs a repeat; a finished one absorbs repeats for a while (the
// service may deliver a batch again); a newer revision supersedes an older one still in flight.

interface Entry {
  revision: number
  active: boolean
  /** When it finished (ms), for the recently-done window. */
  doneAt: number
}

export type Admission = 'new' | 'duplicate' | 'stale'

export class Dedupe {
  private readonly entries = new Map<string, Entry>()
  /** Finished string keys in the order they finished, for expiry. */
  private readonly finished: Array<[string, number]> = []
  private head = 0

  constructor(private readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  /** Decide about a job and, when it is new, remember it as active. */
  admit(stringKey: string, revision: number): Admission {
    this.expire()
    const e = this.entries.get(stringKey)
    if (e) {
      if (revision < e.revision) return 'stale'
      if (revision === e.revision) return 'duplicate'
    }
    this.entries.set(stringKey, { revision, active: true, doneAt: 0 })
    return 'new'
  }

  /** Forget an admission that was never acknowledged (the journal write failed). */
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
    this.finished.push([stringKey, e.doneAt])
  }

  isActive(stringKey: string): boolean {
    return this.entries.get(stringKey)?.active ?? false
  }

  get size(): number {
    return this.entries.size
  }

  private expire(): void {
    const cutoff = this.now() - this.ttlMs
    while (this.head < this.finished.length && this.finished[this.head]![1] <= cutoff) {
      const [key, doneAt] = this.finished[this.head++]!
      const e = this.entries.get(key)
      if (e && !e.active && e.doneAt === doneAt) this.entries.delete(key)
    }
    if (this.head > 4096 && this.head * 2 > this.finished.length) {
      this.finished.splice(0, this.head)
      this.head = 0
    }
  }
}
