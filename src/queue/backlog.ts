// The backlog: strings acknowledged and journaled that are not in memory. Acceptance is bounded by
// disk (BACKLOG_MAX_MB, and a share of it per organization), not by the queue: the work queue is a
// bounded window of QUEUE_LIMIT strings, refilled from the journal as it drains, up to nine
// tenths: the last tenth is kept for batches of organizations with nothing on disk, which go
// straight in (a small batch of a second organization does not wait for the first's backlog).
//
// In memory there are only references: per organization and workflow step, the parts of journal
// entries still to be read (entry id, part, strings, how many were taken), oldest first. Refilling
// takes organizations in turn (round robin), and within one its steps in turn, so one
// organization's huge backlog never starves another's small batches, nor one step's another's
// (the parts of deliveries that mix steps share one more turn); each part is read back from the
// store and de-duplicated only then (a repeat delivery that waited on disk is absorbed when it
// reaches the window). Strings of a held organization (disconnected, forbidden or unavailable) are journaled
// again as one part at the head of its line (its step's first part, that step next) and wait
// there, on disk, until it can be reported for: the line is skipped while the organization is
// held.
import type { Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import type { Dedupe } from './dedupe.js'
import type { Job } from '../protocol/job.js'
import { entryTime, organizationOf, stepOfJobs, type Journal, type ParkedJob, type Placement } from './journal.js'
import type { WorkQueue } from './work-queue.js'

export interface BacklogOptions {
  journal: Journal
  queue: WorkQueue
  dedupe: Dedupe
  log: Logger
  /** Is the organization held now? Its line waits. */
  isHeld(domain: string): boolean
  /** A held decision read back: it goes straight to the reporter (no check runs twice). */
  report(decision: Decision): void
  /** The disk budget of the whole backlog, in bytes. */
  maxBytes: number
  /** The fraction of it one organization may fill. */
  organizationShare: number
  /**
   * Strings out of the window but still in memory: reported, their findings not yet logged. They
   * count against the window, so memory stays bounded when the findings log is slower than the
   * reports (it held 100,000 decisions in the million-pair burst before this).
   */
  downstream?(): number
}

/**
 * One organization's strings waiting on disk: per workflow step, its parts oldest first, the steps
 * in the order they are served (round robin: a served step goes to the end). A part of several
 * steps (a delivery that mixed them) is served under the step ''.
 */
interface Line {
  domain: string
  steps: Map<string, Ref[]>
  /** Strings of its refs not yet taken into the window. */
  waiting: number
}

interface Ref {
  entryId: string
  part: number
  strings: number
  /** Strings of the part already taken into the window (parts are read in slices when room is short). */
  taken: number
  /** Ask the service before running (a replay after a restart, or held strings that came again). */
  recheck: boolean
  /** The step all its strings are of (stepOf), or ''. */
  step: string
}

export interface BacklogView {
  /** The organization's id, and the domain it is reported under. */
  organization: string
  domain: string
  /** Strings journaled and not done (on disk; some may be in the window). */
  strings: number
  bytes: number
  /** Strings waiting on disk, not in memory. */
  waiting: number
  /** When the oldest string waiting on disk was journaled (ms), if any waits. */
  oldestAt?: number
}

const MB = 1024 * 1024
/** A stash whose write failed is tried again after this, doubled each time up to the most. */
export const STASH_RETRY_MS = 1000
export const STASH_RETRY_MAX_MS = 30_000

/**
 * The part of the window refilling leaves free, for the batches of organizations with nothing on
 * disk: they go straight in while another organization's backlog keeps the rest full, so a small
 * batch does not wait for the window to drain a refill's worth first (issue 16: the second
 * organization's batches DONE within 10 s).
 */
export function reserveOf(limit: number): number {
  return Math.floor(limit / 10)
}

export class Backlog {
  /** Per organization (id), in the order they are served (round robin: served ones go to the end). */
  private readonly lines = new Map<string, Line>()
  /** Strings taken off a line and being read back into the window, per domain. */
  private readonly reading = new Map<string, number>()
  private ready = false
  private closed = false
  /** Stashes tried again after their write failed. */
  private readonly stashRetries = new Set<ReturnType<typeof setTimeout>>()
  /** What replay indexed and journaled again so far (over every attempt). */
  private readonly indexed = { strings: 0, batches: 0, parked: 0 }
  /**
   * Parked strings journaled again by a replay or a retry, until one goes through: their keys, and
   * when the entry copied was parked (a later entry under the key is the copy, parked again).
   */
  private readonly rejournaled = new Map<string, number>()
  private refilling?: Promise<void>
  private again = false
  private kicked = false
  private later?: NodeJS.Timeout

  constructor(private readonly options: BacklogOptions) {}

  /** Why a batch of `bytes` from the organization can't be taken now (the only reason for a 503). */
  refuse(organization: string, bytes: number): string | undefined {
    const { journal, maxBytes, organizationShare } = this.options
    const total = journal.used().bytes
    const mine = journal.used(organization).bytes
    const share = maxBytes * organizationShare
    if (total + bytes > maxBytes && total > 0) {
      return `the backlog on disk is full (${(total / MB).toFixed(0)} MB of BACKLOG_MAX_MB=${(maxBytes / MB).toFixed(0)}): strings are not being reported as fast as they arrive. Check the API's health and held organizations on the operator page, or raise BACKLOG_MAX_MB if the disk has room`
    }
    if (mine + bytes > share && mine > 0) {
      return `this organization's share of the backlog on disk is full (${(mine / MB).toFixed(0)} MB of ${(share / MB).toFixed(0)} MB, BACKLOG_ORGANIZATION_SHARE of BACKLOG_MAX_MB): its strings are not being reported as fast as they arrive. Check whether it is held (operator page), or raise BACKLOG_MAX_MB if the disk has room`
    }
    return undefined
  }

  /**
   * May a batch go straight into the window? Only when it fits and nothing of its organization
   * waits on disk (a batch larger than the window is read back in slices).
   */
  direct(organization: string, domain: string, strings: number): boolean {
    const { queue, isHeld } = this.options
    return this.ready && !this.lines.has(organization) && !isHeld(domain) && queue.depth + strings <= queue.limit && this.downstream() < queue.limit
  }

  private downstream(): number {
    return this.options.downstream?.() ?? 0
  }

  /**
   * A batch journaled and left on disk: it is read back when the window has room and its turn comes
   * (its organization's, then its step's: `step`, the step all its strings are of, '' for several).
   */
  spill(organization: string, domain: string, at: Placement, strings: number, o: { recheck?: boolean; step?: string } = {}): void {
    if (strings <= 0) return
    this.add(organization, domain, { entryId: at.entryId, part: at.part, strings, taken: 0, recheck: o.recheck ?? false, step: o.step ?? '' }, false)
    this.kick()
  }

  /** A part to the end of its step's parts, or (`first`) to the head of its organization's line: its step's first part, that step next. */
  private add(organization: string, domain: string, ref: Ref, first: boolean): void {
    let line = this.lines.get(organization)
    if (!line) this.lines.set(organization, (line = { domain, steps: new Map(), waiting: 0 }))
    // The domain it was last stamped with: an organization connected under another domain since
    // has its strings held (and stashed here) under the new one as they run (worker.ts).
    else line.domain = domain
    let refs = line.steps.get(ref.step)
    if (!refs) line.steps.set(ref.step, (refs = []))
    if (first) {
      refs.unshift(ref)
      if (line.steps.keys().next().value !== ref.step) {
        line.steps.delete(ref.step)
        line.steps = new Map([[ref.step, refs], ...line.steps])
      }
    } else refs.push(ref)
    line.waiting += ref.strings - ref.taken
  }

  /**
   * Strings of a held organization leave memory for the disk: journaled again as one part, done in
   * their old entries, then put at the head of their line (they are older than what waits behind
   * them). In that order: the organization may be let go while the old entries are being done, and
   * a copy read back while its original is still active in the de-duplication would be taken for a
   * repeat delivery and finished with it (a string lost in the million-pair burst with the
   * organization forbidden). A crash in between leaves both in the journal: the replay takes one.
   */
  async stash(jobs: Job[], attempt = 0): Promise<void> {
    if (jobs.length === 0) return
    const { journal, dedupe } = this.options
    const copies = jobs.map((j) => ({ ...j, attempts: 0 }))
    let at: Awaited<ReturnType<typeof journal.append>>
    try {
      at = await journal.append(journal.newBatchId(), copies)
    } catch (error) {
      // Not stashed: the originals stay in their entries and in the de-duplication (still owed
      // here; a repeat delivery is absorbed) and the write is tried again. Stopping, they stay in
      // their entries for the next start.
      if (this.closed) return
      const delayMs = Math.min(STASH_RETRY_MAX_MS, STASH_RETRY_MS * 2 ** attempt)
      this.options.log.error({ err: error, strings: jobs.length, domain: jobs[0]!.domain, retryInMs: delayMs }, 'held strings could not be written to the backlog; trying again')
      const timer = setTimeout(() => {
        this.stashRetries.delete(timer)
        void this.stash(jobs, attempt + 1)
      }, delayMs)
      timer.unref?.()
      this.stashRetries.add(timer)
      return
    }
    try {
      for (const job of jobs) await journal.done(job)
    } finally {
      // Should the store fail part way, the copies still join the line (not left on disk until a
      // restart): the originals not done stay in their entries, replayed and checked with the
      // service on the next start.
      for (const job of jobs) dedupe.release(job, job.revision)
      this.add(organizationOf(jobs[0]!), jobs[0]!.domain, { entryId: at.entryId, part: at.part, strings: copies.length, taken: 0, recheck: jobs.some((j) => j.recheck), step: stepOfJobs(jobs) }, true)
      this.kick()
    }
  }

  /** Look for room soon (coalesced): after strings leave the window, a spill, a release. */
  kick(): void {
    if (this.kicked) return
    this.kicked = true
    setImmediate(() => {
      this.kicked = false
      void this.refill()
    })
  }

  /** Fill the window from the journal, organizations in turn. */
  refill(): Promise<void> {
    if (this.refilling) {
      this.again = true
      return this.refilling
    }
    this.refilling = (async () => {
      try {
        do {
          this.again = false
          await this.fill()
        } while (this.again)
      } catch (error) {
        this.options.log.error({ err: error }, 'reading the backlog back from the journal failed; trying again shortly')
        setTimeout(() => this.kick(), 1000).unref()
      } finally {
        this.refilling = undefined
      }
    })()
    return this.refilling
  }

  private async fill(): Promise<void> {
    const { queue, journal } = this.options
    while (this.ready) {
      const behind = this.downstream()
      const room = queue.limit - reserveOf(queue.limit) - queue.depth - behind
      const next = this.next()
      if (!next) return
      // Waiting for the findings log rather than for the window: look again shortly.
      if (behind > 0 && room < Math.ceil((queue.limit - reserveOf(queue.limit)) / 4)) {
        this.later ??= setTimeout(() => {
          this.later = undefined
          this.kick()
        }, 50)
        this.later.unref()
      }
      const [organization, line, step, refs] = next
      const ref = refs[0]!
      const left = ref.strings - ref.taken
      // Read in chunks, not a slice at a time as single strings finish.
      if (room < Math.min(left, Math.ceil((queue.limit - reserveOf(queue.limit)) / 4))) return
      const take = Math.min(room, left)
      ref.taken += take
      line.waiting -= take
      if (ref.taken >= ref.strings) refs.shift()
      // Served: the step to the end of its organization's turn, the organization to the end of the ring.
      line.steps.delete(step)
      if (refs.length) line.steps.set(step, refs)
      this.lines.delete(organization)
      if (line.steps.size) this.lines.set(organization, line)
      // Off the line but not in the window yet: still waiting, for waiting() (an idle check that
      // saw neither the line nor the queue would call the worker idle while they are read).
      // (The line's domain may change while its part is read: the count goes by the one it had.)
      const domain = line.domain
      this.reading.set(domain, (this.reading.get(domain) ?? 0) + take)
      try {
        let part: Job[]
        try {
          part = await journal.readPart(ref.entryId, ref.part)
        } catch (error) {
          // Not read: the strings go back to the head of the line for the retry (without this, the
          // retry found nothing to read and they waited on disk until the next restart).
          ref.taken -= take
          const current = this.lines.get(organization)
          if (current?.steps.get(step)?.includes(ref)) current.waiting += take
          else this.add(organization, domain, ref, true)
          throw error
        }
        await this.intoWindow(part.slice(ref.taken - take, ref.taken), ref.recheck)
      } finally {
        const left = (this.reading.get(domain) ?? 0) - take
        if (left > 0) this.reading.set(domain, left)
        else this.reading.delete(domain)
      }
    }
  }

  /** The next organization in turn that is not held, its next step in turn, and that step's parts (oldest first). */
  private next(): [string, Line, string, Ref[]] | undefined {
    for (const [organization, line] of this.lines) {
      if (this.options.isHeld(line.domain)) continue
      for (const [step, refs] of line.steps) if (refs[0]) return [organization, line, step, refs]
    }
    return undefined
  }

  private async intoWindow(jobs: Job[], recheck: boolean): Promise<void> {
    const { dedupe, journal, queue } = this.options
    const run: Job[] = []
    const decided: Job[] = []
    let kept = 0
    for (const job of jobs) {
      const a = dedupe.arrive(job, job.revision)
      if (a === 'duplicate' || a === 'stale') {
        await journal.done(job)
        continue
      }
      // Behind a copy whose status update went out: it waits in the de-duplication (its room taken
      // here) and is queued, checked with the service, once that copy ends.
      if (a === 'kept') {
        kept++
        continue
      }
      if (a === 'finished' || recheck) job.recheck = true
      if (releasedAsDecided(job)) decided.push(job)
      else run.push(job)
    }
    queue.reserve(run.length + decided.length + kept)
    if (run.length) queue.push(run)
    for (const job of decided) this.options.report(heldDecision(job))
  }

  /**
   * After a restart: index what the journal holds (one entry at a time, no jobs kept), oldest first
   * per organization; parked strings are journaled again (a restart is their retry). Only then does
   * the window fill: nothing is deleted from the store while it is being iterated. If the store
   * fails part way, call it again: entries indexed by the attempt that failed are not read twice
   * (the journal's books skip them), and the counts returned are of every attempt.
   */
  async replay(): Promise<{ strings: number; batches: number; parked: number }> {
    const { journal } = this.options
    const indexed = this.indexed
    const parked = await journal.scan((entryId, parts) => {
      indexed.batches++
      parts.forEach((p, part) => {
        // Revisions past the first on disk: an older copy of the string read back first is stale.
        if (p.revised) this.options.dedupe.noteOnDisk(p.revised)
        if (p.strings <= 0) return
        indexed.strings += p.strings
        this.add(p.organization, p.domain, { entryId, part, strings: p.strings, taken: 0, recheck: true, step: p.step ?? '' }, false)
      })
    })
    for (const line of this.lines.values()) for (const refs of line.steps.values()) refs.sort((a, b) => (a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : a.part - b.part))
    await this.retryParked(parked)
    this.rejournaled.clear()
    this.ready = !this.closed
    this.kick()
    return { strings: indexed.strings + indexed.parked, batches: indexed.batches, parked: indexed.parked }
  }

  /**
   * The retry of parked strings while the worker runs (PARKED_RETRY_MS): up to `limit` of them
   * journaled again and put back in their organization's line, each checked with the service
   * before it runs, as at a start; one that fails the same way is parked again (and waits for the
   * next retry). Read `limit` at a time, so memory holds no more of them than that. Not before the
   * start's replay is done (it retries them all), nor once closed. Resolves with how many.
   */
  async retryParkedNow(limit: number): Promise<number> {
    const startedAt = Date.now()
    const before = this.indexed.parked
    while (this.ready && !this.closed) {
      const parked = await this.options.journal.parkedJobs(limit, startedAt)
      if (!parked.length || this.closed) break
      await this.retryParked(parked)
      this.rejournaled.clear()
      this.kick()
      if (parked.length < limit) break
    }
    return this.indexed.parked - before
  }

  /**
   * Journal the parked strings again (a restart is their retry), then take them out of the parked
   * set. A replay tried again after a failure here journals only those an earlier attempt had not
   * (the others are only taken out of the parked set again). Counted in `indexed.parked`.
   */
  private async retryParked(parked: ParkedJob[]): Promise<void> {
    const { journal } = this.options
    const byOrganization = new Map<string, Job[]>()
    const journaledBefore: Job[] = []
    const parkedAt = new Map<string, number>()
    for (const p of parked) {
      // The very entry an earlier attempt copied: only its removal is left. (One parked since
      // under the same key is that copy, run and refused again: a parked string like any other.)
      if (this.rejournaled.has(p.job.key) && this.rejournaled.get(p.job.key) === p.at) {
        journaledBefore.push(p.job)
        continue
      }
      parkedAt.set(p.job.key, p.at)
      const list = byOrganization.get(organizationOf(p.job)) ?? []
      list.push({ ...p.job, attempts: 0 })
      byOrganization.set(organizationOf(p.job), list)
    }
    for (const job of journaledBefore) await journal.unpark(job)
    for (const [organization, jobs] of byOrganization) {
      const at = await journal.append(journal.newBatchId(), jobs)
      for (const job of jobs) this.rejournaled.set(job.key, parkedAt.get(job.key)!)
      this.indexed.parked += jobs.length
      // The copies join the line only once the parked entries are gone: a refill meanwhile (any
      // string finishing kicks one) would run a copy, and a refusal would park it again under the
      // same key, which the removal below then deleted (the string was then nowhere). Should a
      // removal fail, the copies still join the line (the retry only removes the rest).
      try {
        for (const job of jobs) await journal.unpark(job)
      } finally {
        this.add(organization, jobs[0]!.domain, { entryId: at.entryId, part: at.part, strings: jobs.length, taken: 0, recheck: true, step: stepOfJobs(jobs) }, true)
      }
    }
  }

  /** Stop reading the backlog back (shutdown): what waits on disk stays there for the next start. */
  close(): void {
    clearTimeout(this.later)
    for (const timer of this.stashRetries) clearTimeout(timer)
    this.stashRetries.clear()
    this.closed = true
    this.ready = false
  }

  /** Strings waiting on disk (not in memory) per organization (domain) with any, in one pass. */
  waitingPerDomain(): Map<string, number> {
    const out = new Map<string, number>()
    for (const line of this.lines.values()) if (line.waiting) out.set(line.domain, (out.get(line.domain) ?? 0) + line.waiting)
    for (const [d, k] of this.reading) if (k) out.set(d, (out.get(d) ?? 0) + k)
    return out
  }

  /** Strings waiting on disk (not in memory), of one organization (its domain) or all. */
  waiting(domain?: string): number {
    if (domain !== undefined) return this.waitingPerDomain().get(domain) ?? 0
    let n = 0
    for (const line of this.lines.values()) n += line.waiting
    for (const k of this.reading.values()) n += k
    return n
  }

  /** Per organization: what is journaled and not done, what waits on disk, and since when. */
  list(): BacklogView[] {
    const out = new Map<string, BacklogView>()
    for (const [organization, u] of this.options.journal.usageByOrganization()) out.set(organization, { organization, domain: u.domain ?? organization, strings: u.strings, bytes: u.bytes, waiting: 0 })
    for (const [organization, line] of this.lines) {
      const v = out.get(organization) ?? { organization, domain: line.domain, strings: 0, bytes: 0, waiting: 0 }
      v.domain = line.domain
      v.waiting = line.waiting
      for (const refs of line.steps.values()) {
        const at = refs[0] && entryTime(refs[0].entryId)
        if (at && (v.oldestAt === undefined || at < v.oldestAt)) v.oldestAt = at
      }
      out.set(organization, v)
    }
    return [...out.values()].sort((a, b) => b.strings - a.strings)
  }
}

/** A held job's decision as it was taken: its output and the findings that came with it. */
export function heldDecision(job: Job): Decision {
  const { decidedReview: review, decidedOn: on, ...rest } = job
  return { job: rest, port: job.decidedPort!, ...(review ? { review } : {}), ...(on !== undefined ? { on } : {}) }
}

/**
 * A held job released: does its decision go straight to the reporter? Not when the service must be
 * asked first (it finished here since, or a restart replays it): then it is checked and run again
 * like any other, its decision forgotten (reported as it was, a string reported since by another
 * copy got a second PATCH). Not either when it was decided on a translation it read: it goes
 * through the queue with its decision, the translation is read again, and it is reported as
 * decided only if that is unchanged (it may have been sent back or resent, fixed, while held).
 */
export function releasedAsDecided(job: Job): boolean {
  if (job.decidedPort !== undefined && !job.recheck && job.decidedOn === undefined) return true
  if (job.recheck || job.decidedOn === undefined) forgetDecision(job)
  return false
}

/** The job is to run again: what was decided for it while held is forgotten. */
export function forgetDecision(job: Job): void {
  delete job.decidedPort
  delete job.decidedReview
  delete job.decidedOn
}
