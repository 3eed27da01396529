// De-duplication by (organization, project, step, language, string, revision), from memory only
// while a string is queued or running: a repeat then is absorbed, but only until the status update
// of the copy running goes out (`sending`). From then on the service may have applied it, and the
// string been sent back, fixed and delivered again before the update's answer comes: such an
// arrival is new work, not a repeat. It is kept (`kept`: journaled, not run) until that copy ends,
// then released (the constructor's `released`) as `finished`, so that the service's status decides
// once the update has settled, never while it may still land. A string that arrives again after
// it finished is not decided here: it may be a repeat of a delivery already reported, or it may have
// come back to the step (a reviewer sent it back, a manager pressed Resend) with the same revision.
// It arrives as `finished`, and the service's status decides (platform notes, "A string comes
// back"). A newer revision supersedes an older one still in flight.
// The memory of finished strings is bounded twice: by time (ttlMs) and by count (maxFinished),
// so a flood can't grow it without end; past it, a Bloom filter of the last million or two
// finishes (finished-filter.ts) says whether a string may have finished here: then it arrives as
// `finished` (asked about), else as `new`. Finished strings are
// kept as columns, not as keys (finished-strings.ts): a hundred thousand of them are remembered
// through every large burst.
import { FinishedFilter } from './finished-filter.js'
import { LastScopeHash } from './last-scope-hash.js'
import { FinishedStrings, type StringRef } from './finished-strings.js'
import type { RevisedStrings } from '../protocol/job.js'

/** Revisions noted on disk at most (Dedupe.noteOnDisk): a few tens of bytes each. */
export const MAX_ON_DISK_NOTES = 50_000

/** The key of a scope (organization, project, step, language) of the notes on disk. */
const onDiskScope = (organizationId: string, projectId: number, stepId: number, languageId: string) => `${organizationId}|${projectId}|${stepId}|${languageId}`

export type { StringRef }

/**
 * `new`: run it. `duplicate`: the same revision is queued or running (its status update not sent
 * yet), or kept. `stale`: a newer revision is known. `finished`: this revision finished here
 * before; it is active again, and the service's status decides whether it runs (NEED_PROCESS) or
 * was a repeat. `kept`: the same revision, after the status update of the copy running went out:
 * journal it but do not run it; it is released as `finished` once that copy ends.
 */
export type Arrival = 'new' | 'duplicate' | 'stale' | 'finished' | 'kept'

/**
 * The strings of one scope (organization, project, step, language) queued or running: their
 * revision, by string id, or once the copy's status update went out (`sending`) its sentMark: one
 * number a string, as before there was a mark.
 */
type ActiveScope = Map<number, number>

/** An active copy's revision once its status update went out: below zero (revisions start at 0 or 1). */
const sentMark = (revision: number) => -revision - 1
/** The revision an active string's number stands for, its update sent or not. */
const revisionOfMark = (mark: number) => (mark < 0 ? -mark - 1 : mark)

export class Dedupe {
  /**
   * Strings queued or running, by scope (`org|project|step|language`), then by string id: a job's
   * fields find its string without building a key per call (four or five calls per string).
   */
  private readonly active = new Map<string, ActiveScope>()
  private activeCount = 0
  /** The scope looked up last, for the next call of the same run (undefined: none, or it emptied). */
  private last: { organizationId: string; projectId: number; stepId: number; languageId: string; ids: ActiveScope } | undefined
  /** Finished strings, in columns (see finished-strings.ts). */
  private readonly finished = new FinishedStrings()
  /**
   * Strings a newer revision arrived for while an older one was active, until those older copies
   * are done (`older`): the newest revision is known here even once the memory of the newer has
   * gone (DEDUPE_TTL_MS or DEDUPE_MAX may pass during an older copy's slow run), so the older
   * one's outcome is never reported over it. Few (revisions overtaking one another in flight), and
   * bounded: past MAX_OVERTAKEN the oldest entry goes.
   */
  private readonly overtaken = new Map<string, { newest: number; older: number }>()
  /**
   * Arrivals kept behind a copy whose status update went out (`kept`), by string: at most one a
   * string (a repeat of it is absorbed), until that copy ends. Few: strings sent back and
   * delivered again within one update's round trip.
   */
  private readonly kept = new Map<string, { revision: number; ref: StringRef }>()

  /**
   * Until then, a string unknown here may still have finished before the process restarted (its
   * memory did not survive the restart): it arrives as `finished`, so the service decides.
   */
  private uncertainUntil = 0

  /** Strings that may have finished here before the memory above (finished-filter.ts). */
  private readonly longAgo: FinishedFilter
  /** The scope hashed last, and its hash. */
  private readonly scopes = new LastScopeHash()

  /**
   * `released`: where an arrival kept behind a sent copy goes once that copy ends (the worker
   * queues it, to be checked with the service): the very object `arrive` was given. It is the
   * active copy here from then on.
   */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxFinished = 100_000,
    filterPerGeneration = 1_000_000,
    private readonly released: (ref: StringRef) => void = () => undefined,
  ) {
    this.longAgo = new FinishedFilter(filterPerGeneration)
  }

  /**
   * An earlier process finished strings on this journal until `lastAliveAt` (ms): what it
   * remembered would have been remembered up to ttlMs later, so until then nothing is taken as new.
   */
  restartedAfter(lastAliveAt: number): void {
    this.uncertainUntil = Math.max(this.uncertainUntil, lastAliveAt + this.ttlMs)
  }

  /** The active strings of the job's scope; with `create`, made if there are none. */
  private scopeOf(ref: StringRef, create: boolean): ActiveScope | undefined {
    const last = this.last
    if (last && last.organizationId === ref.organizationId && last.projectId === ref.projectId && last.stepId === ref.stepId && last.languageId === ref.languageId) return last.ids
    const key = `${ref.organizationId}|${ref.projectId}|${ref.stepId}|${ref.languageId}`
    let ids = this.active.get(key)
    if (!ids) {
      if (!create) return undefined
      ids = new Map()
      this.active.set(key, ids)
    }
    this.last = { organizationId: ref.organizationId, projectId: ref.projectId, stepId: ref.stepId, languageId: ref.languageId, ids }
    return ids
  }

  private setActive(ref: StringRef, revision: number): void {
    const ids = this.scopeOf(ref, true)!
    if (!ids.has(ref.stringId)) this.activeCount++
    ids.set(ref.stringId, revision)
  }

  private deleteActive(ref: StringRef, ids: ActiveScope): void {
    if (!ids.delete(ref.stringId)) return
    this.activeCount--
    if (ids.size > 0) return
    this.active.delete(`${ref.organizationId}|${ref.projectId}|${ref.stepId}|${ref.languageId}`)
    if (this.last?.ids === ids) this.last = undefined
  }

  /** The newest revision known for the string, if any. */
  private revisionOf(ref: StringRef): number | undefined {
    const active = this.scopeOf(ref, false)?.get(ref.stringId)
    return active !== undefined ? revisionOfMark(active) : this.finished.revisionOf(ref)
  }

  /**
   * Revisions past the first journaled to disk without passing through here (a batch that went
   * straight to the backlog, or every part a replay indexes): by scope (organization, project,
   * step, language), string id -> the newest such revision (numbers as keys: no string is built
   * or kept per string). An older copy of the string read back from the disk before it is stale.
   * A note goes when a copy as new or newer arrives here; at most MAX_ON_DISK_NOTES in all (past
   * that, the oldest note of the scope noted first goes).
   */
  private readonly onDisk = new Map<string, Map<number, number>>()
  private onDiskCount = 0

  /** Note revisions past the first that wait on disk (see `onDisk`). */
  noteOnDisk(notes: RevisedStrings): void {
    const { o, l, n } = notes
    let scopeKey = ''
    let scope: Map<number, number> | undefined
    for (let i = 0; i + 5 < n.length; i += 6) {
      const organizationId = o[n[i]!]
      const languageId = l[n[i + 3]!]
      const stringId = n[i + 4]!
      const revision = n[i + 5]!
      if (typeof organizationId !== 'string' || typeof languageId !== 'string' || !(revision >= 2)) continue
      const key = onDiskScope(organizationId, n[i + 1]!, n[i + 2]!, languageId)
      if (key !== scopeKey || !scope) {
        scopeKey = key
        scope = this.onDisk.get(key)
        if (!scope) this.onDisk.set(key, (scope = new Map()))
      }
      const known = scope.get(stringId)
      if (known !== undefined && known >= revision) continue
      if (known === undefined) this.onDiskCount++
      scope.set(stringId, revision)
      if (this.onDiskCount > MAX_ON_DISK_NOTES) {
        // The oldest note of the scope noted first goes.
        const [firstKey, first] = this.onDisk.entries().next().value!
        first.delete(first.keys().next().value!)
        this.onDiskCount--
        if (first.size === 0) {
          this.onDisk.delete(firstKey)
          if (first === scope) scope = undefined
        }
      }
    }
  }

  /** The newest revision noted on disk for the string, if any. */
  private onDiskOf(ref: StringRef): number | undefined {
    if (this.onDisk.size === 0) return undefined
    return this.onDisk.get(onDiskScope(ref.organizationId, ref.projectId, ref.stepId, ref.languageId))?.get(ref.stringId)
  }

  /** The note of a string taken out (a copy as new or newer arrived). */
  private clearOnDisk(ref: StringRef): void {
    const key = onDiskScope(ref.organizationId, ref.projectId, ref.stepId, ref.languageId)
    const scope = this.onDisk.get(key)
    if (!scope?.delete(ref.stringId)) return
    this.onDiskCount--
    if (scope.size === 0) this.onDisk.delete(key)
  }

  /**
   * The status update of the active copy of each string goes out now: from here on an arrival of
   * the same revision is kept, not absorbed (see the file's header). Cheap: one number changed.
   */
  sending(ref: StringRef, revision: number): void {
    const ids = this.scopeOf(ref, false)
    if (ids && ids.get(ref.stringId) === revision) ids.set(ref.stringId, sentMark(revision))
  }

  /** What an arriving job is and, unless it is a duplicate or stale, remember it as active (or kept). */
  arrive(ref: StringRef, revision: number): Arrival {
    this.expire()
    // A newer revision waits on disk: this copy is stale. One as new or newer takes the note's place.
    const noted = this.onDiskOf(ref)
    if (noted !== undefined) {
      if (revision < noted) return 'stale'
      this.clearOnDisk(ref)
    }
    const mark = this.scopeOf(ref, false)?.get(ref.stringId)
    if (mark !== undefined) {
      const active = revisionOfMark(mark)
      if (revision < active) return 'stale'
      if (revision === active) return mark >= 0 ? 'duplicate' : this.keep(ref, revision)
      this.overtake(ref, revision)
      this.setActive(ref, revision)
      // What was kept behind the older copy is older now too: it goes, to leave as superseded.
      if (this.kept.size > 0) this.releaseKept(ref, active)
      // Newer than the copy active here, but it may still have finished before a restart (or
      // before the memory forgot it): the service decides, as for a string unknown here.
      return this.mayHaveFinished(ref, revision) ? 'finished' : 'new'
    }
    // An older copy back from the disk (held) after a newer revision overtook it: done, never run.
    if (this.overtaken.size > 0 && (this.overtaken.get(overtakenKey(ref))?.newest ?? 0) > revision) {
      this.olderDone(ref, revision)
      return 'stale'
    }
    const known = this.finished.revisionOf(ref)
    if (known !== undefined) {
      if (revision < known) return 'stale'
      this.finished.forget(ref)
      this.setActive(ref, revision)
      return revision === known || this.mayHaveFinished(ref, revision) ? 'finished' : 'new'
    }
    this.setActive(ref, revision)
    // Unknown to the memory: it may still have finished before a restart, or before the memory
    // forgot it (then it may be a late duplicate of a string already DONE): the service decides.
    return this.mayHaveFinished(ref, revision) ? 'finished' : 'new'
  }

  /** Could this revision have finished before what this memory knows (a restart, or a finish it forgot)? */
  private mayHaveFinished(ref: StringRef, revision: number): boolean {
    return this.now() < this.uncertainUntil || this.longAgo.mayHave(this.scopes.of(ref), ref.stringId, revision)
  }

  /**
   * An arrival of the revision whose update went out: kept until that copy ends, unless one is
   * kept already (that one answers for both).
   */
  private keep(ref: StringRef, revision: number): Arrival {
    const key = overtakenKey(ref)
    if (this.kept.has(key)) return 'duplicate'
    this.kept.set(key, { revision, ref })
    return 'kept'
  }

  /**
   * A copy of this revision ended (finished, or held on disk): the arrival kept behind it, if any,
   * is released, as the active copy unless a newer revision took the string meanwhile (then it
   * leaves as superseded, an older copy like the one it waited for).
   */
  private releaseKept(ref: StringRef, revision: number): void {
    const key = overtakenKey(ref)
    const kept = this.kept.get(key)
    if (!kept || kept.revision !== revision) return
    this.kept.delete(key)
    const active = this.scopeOf(ref, false)?.get(ref.stringId)
    if (active !== undefined && revisionOfMark(active) > revision) {
      // Counted as one more older copy of the string, as the one it waited for.
      const entry = this.overtaken.get(key)
      if (entry) entry.older++
    } else {
      this.finished.forget(ref)
      this.setActive(ref, revision)
    }
    this.released(kept.ref)
  }

  /**
   * Forget an arrival that was never acknowledged (the journal write failed), or a copy held on
   * disk; the latter ends the copy here, and what was kept behind it is released.
   */
  release(ref: StringRef, revision: number): void {
    if (this.kept.size > 0) {
      const key = overtakenKey(ref)
      if (this.kept.get(key)?.ref === ref) {
        this.kept.delete(key)
        return
      }
    }
    const ids = this.scopeOf(ref, false)
    const active = ids?.get(ref.stringId)
    if (ids && active !== undefined && revisionOfMark(active) === revision) this.deleteActive(ref, ids)
    if (this.kept.size > 0) this.releaseKept(ref, revision)
  }

  /** Is this revision still the newest known for the string? Older ones are not reported. */
  isCurrent(ref: StringRef, revision: number): boolean {
    const known = this.revisionOf(ref)
    if (known !== undefined && known > revision) return false
    if ((this.onDiskOf(ref) ?? 0) > revision) return false
    if (this.overtaken.size === 0) return true
    return (this.overtaken.get(overtakenKey(ref))?.newest ?? 0) <= revision
  }

  /** A newer revision arrives while an older one is active. */
  private overtake(ref: StringRef, revision: number): void {
    const key = overtakenKey(ref)
    const entry = this.overtaken.get(key)
    if (entry) {
      entry.newest = Math.max(entry.newest, revision)
      entry.older++
      return
    }
    if (this.overtaken.size >= MAX_OVERTAKEN) this.overtaken.delete(this.overtaken.keys().next().value!)
    this.overtaken.set(key, { newest: revision, older: 1 })
  }

  /** A copy older than the newest that overtook it is done: once all are, the entry goes. */
  private olderDone(ref: StringRef, revision: number): void {
    if (this.overtaken.size === 0) return
    const key = overtakenKey(ref)
    const entry = this.overtaken.get(key)
    if (!entry || revision >= entry.newest) return
    if (--entry.older <= 0) this.overtaken.delete(key)
  }

  finish(ref: StringRef, revision: number): void {
    this.olderDone(ref, revision)
    // The revision known for it (a finished one finishing again starts its window anew).
    if (this.revisionOf(ref) !== revision) return
    const ids = this.scopeOf(ref, false)
    if (ids) this.deleteActive(ref, ids)
    if (this.kept.size > 0 && this.kept.get(overtakenKey(ref))?.revision === revision) {
      // It finished here (a later arrival may be a repeat of it), and is active again at once.
      if (this.ttlMs > 0) this.longAgo.add(this.scopes.of(ref), ref.stringId, revision)
      this.releaseKept(ref, revision)
      return
    }
    if (this.ttlMs <= 0) {
      this.finished.forget(ref)
      return
    }
    this.finished.add(ref, revision, this.now())
    this.longAgo.add(this.scopes.of(ref), ref.stringId, revision)
    if (this.finished.finishes > this.maxFinished) this.expire(true)
  }

  isActive(ref: StringRef): boolean {
    return this.scopeOf(ref, false)?.has(ref.stringId) ?? false
  }

  get size(): number {
    return this.activeCount + this.finished.size
  }

  /** Forget finished strings older than the window, or beyond the count (`overCount`). */
  private expire(overCount = false): void {
    const cutoff = this.now() - this.ttlMs
    for (let at = this.finished.oldestAt(); at !== undefined && (at <= cutoff || (overCount && this.finished.finishes > this.maxFinished)); at = this.finished.oldestAt()) {
      this.finished.dropOldest()
    }
  }
}

/** Entries of Dedupe's `overtaken` at most (about 100 bytes each). */
export const MAX_OVERTAKEN = 100_000

const overtakenKey = (ref: StringRef) => `${ref.organizationId}|${ref.projectId}|${ref.stepId}|${ref.languageId}|${ref.stringId}`
