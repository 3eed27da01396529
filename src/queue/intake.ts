// The intake: where a verified batch's jobs become work the worker owes the service. Acceptance is
// bounded by disk, not memory: the only refusal (503) is a full disk budget (backlog.ts). Then one
// durable journal write, and only then is the batch acknowledged. Its jobs go straight into the
// queue (de-duplicated first) when the window has room and nothing of their organization waits on
// disk; otherwise they stay on disk, in the backlog, and are read back in turn.
import type { Backlog } from './backlog.js'
import type { Dedupe } from './dedupe.js'
import type { IntakeJournal } from './intake-journal.js'
import { revisedOf, type Job, type RevisedStrings } from '../protocol/job.js'
import { organizationOf, stepOfJobs, type EncodedJobs, type Journal } from './journal.js'
import type { WorkQueue } from './work-queue.js'

/** How often the journal records that this process is alive (see `replay`). */
export const ALIVE_EVERY_MS = 30_000

/** A verified batch's string jobs, made only when needed: a batch left on disk never needs them. */
export interface IncomingJobs {
  count: number
  organizationId: string
  domain: string
  /** The workflow step (stepOf) all the jobs are of, or '' (several); undefined: not known. */
  step?: string
  /**
   * A part of a large delivery whose budget was asked for all of it at once (`refusal`): not
   * refused again part by part (a delivery larger than the budget on an empty backlog is taken
   * whole, as a batch of that size would be, rather than refused after its first part).
   */
  admitted?: boolean
  /** Its jobs at a revision past the first (revisedOf), when known without making the jobs. */
  revised?: RevisedStrings
  jobs(): Job[]
}

/** Jobs already made, as IncomingJobs. */
export function incoming(jobs: Job[]): IncomingJobs {
  return { count: jobs.length, organizationId: jobs[0]?.organizationId ?? '', domain: jobs[0]?.domain ?? '', step: stepOfJobs(jobs), jobs: () => jobs }
}

export type IntakeResult =
  | { status: 'accepted'; accepted: number; duplicates: number; /** Strings left on disk. */ spilled?: number }
  | { status: 'busy'; retryAfterSeconds: number; /** Why, when it is not a shutdown. */ reason?: string }

export interface IntakeOptions {
  dedupe: Dedupe
  queue: WorkQueue
  /** The local journal and its backlog; or a shared journal (BullMQ) that is its own backlog. */
  local?: { journal: Journal; backlog: Backlog }
  shared?: IntakeJournal & { refuse(bytes: number, organization?: string): string | undefined; replayParked?(): Promise<number> }
}

export class Intake {
  private closing = false
  /** Stopping: batches are journaled only, for the next start (or another instance). */
  private draining = false
  /** Accepts under way, and who waits for them to be over (settled). */
  private underWay = 0
  private onSettled: Array<() => void> = []
  /** The earlier process's last sign of life was read (replay). */
  private aliveRead = false
  /** Direct accepts between their de-duplication and the end of their journal write. */
  private readonly writing = new Set<Promise<void>>()
  /**
   * Arrivals kept behind a copy whose status update went out (Dedupe's `kept`) while their
   * delivery is being journaled: true once released meanwhile (that copy ended), to be queued only
   * when the write is done (had it failed, nothing would have been acknowledged).
   */
  private readonly keptUnwritten = new Map<Job, boolean>()

  constructor(private readonly options: IntakeOptions) {}

  /**
   * Shutdown has begun: batches are still acknowledged, journaled to disk (or, shared, to the
   * queue for the other instances) but none goes into this process's window. The service spends
   * one of its few retries on every 503 (platform notes), so a restart must not refuse deliveries.
   */
  drain(): void {
    this.draining = true
  }

  /** Take nothing new from now on (the listener has closed): 503. */
  close(): void {
    this.closing = true
  }

  /** Resolves when no accept is under way (before the journal closes). */
  settled(): Promise<void> {
    if (this.underWay === 0) return Promise.resolve()
    return new Promise((resolve) => this.onSettled.push(resolve))
  }

  /**
   * Accept a batch's jobs (all of one organization). `encoded`: the same jobs as their decoder's
   * JSON text, in the same order; the journal stores that text (and which of them were not taken)
   * instead of encoding them again.
   */
  async accept(batchId: string, batch: IncomingJobs, encoded?: EncodedJobs): Promise<IntakeResult> {
    if (this.closing) return { status: 'busy', retryAfterSeconds: 5 }
    if (batch.count === 0) return { status: 'accepted', accepted: 0, duplicates: 0 }
    this.underWay++
    try {
      return await this.take(batchId, batch, encoded)
    } finally {
      if (--this.underWay === 0) for (const resolve of this.onSettled.splice(0)) resolve()
    }
  }

  private async take(batchId: string, batch: IncomingJobs, encoded?: EncodedJobs): Promise<IntakeResult> {
    const bytes = encoded ? encoded.text.length : batch.count * 1024
    const { shared, local } = this.options
    if (shared) {
      const reason = batch.admitted ? undefined : shared.refuse(bytes, organizationOf(batch))
      if (reason) return { status: 'busy', retryAfterSeconds: 60, reason }
      // Shared queue: its job ids (the de-duplication key) absorb repeats across instances.
      const jobs = batch.jobs()
      for (const job of jobs) job.batchId = batchId
      await shared.append(batchId, jobs)
      return { status: 'accepted', accepted: jobs.length, duplicates: 0 }
    }
    const { journal, backlog } = local!
    const { count, domain } = batch
    const organization = organizationOf(batch)
    const reason = batch.admitted ? undefined : backlog.refuse(organization, bytes)
    // The service does not honour Retry-After; the figure is for senders that do.
    if (reason) return { status: 'busy', retryAfterSeconds: 60, reason }
    // Stopping, the backlog is closed: nothing goes direct, everything is left on disk.
    if (this.draining || !backlog.direct(organization, domain, count)) {
      // To disk only, from the decoder's text (no jobs made); de-duplicated when read back.
      const step = encoded ? (batch.step ?? '') : stepOfJobs(batch.jobs())
      const revised = encoded ? batch.revised : revisedOf(batch.jobs())
      const at = await journal.append(batchId, encoded ? { count, organization, domain, step, ...(revised ? { revised } : {}) } : batch.jobs(), encoded)
      // Not seen by the de-duplication until read back: an older copy read back first is stale.
      if (revised) this.options.dedupe.noteOnDisk(revised)
      backlog.spill(organization, domain, at, count, { step })
      return { status: 'accepted', accepted: count, duplicates: 0, spilled: count }
    }
    return this.acceptDirect(batchId, batch.jobs(), encoded)
  }

  /**
   * An arrival kept behind a copy whose status update went out is released (that copy ended): it
   * runs now, checked with the service first (its status says whether it came back to the step),
   * or once its delivery's journal write is done. Its room in the window was taken as it arrived.
   * Stopping, it stays in the journal for the next start (which checks it with the service too).
   * The de-duplication's `released` (worker.ts): what it hands back is the job the intake or the
   * backlog gave it.
   */
  released(job: Job): void {
    job.recheck = true
    if (this.keptUnwritten.has(job)) this.keptUnwritten.set(job, true)
    else if (!this.draining) this.options.queue.push([job])
  }

  /**
   * Why `accept` would refuse `bytes` of jobs text from this organization now (its 503), if it
   * would: asked once for a large delivery journaled in parts, before the first.
   */
  refusal(organization: string, bytes: number): string | undefined {
    const { shared, local } = this.options
    return shared ? shared.refuse(bytes, organization) : local!.backlog.refuse(organization, bytes)
  }

  private async acceptDirect(batchId: string, jobs: Job[], encoded?: EncodedJobs): Promise<IntakeResult> {
    const taken: boolean[] = new Array(jobs.length)
    let skipped = 0
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!
      job.batchId = batchId
      taken[i] = this.isWork(job)
      if (!taken[i]) skipped++
    }
    // Repeats of strings another delivery is journaling at this moment are acknowledged only once
    // that write is done: had it failed, this delivery's 2XX would cover strings nobody stored.
    // Only writes begun earlier are waited for (two copies never wait for each other).
    const earlier = skipped > 0 && this.writing.size > 0 ? [...this.writing] : undefined
    // Room is taken now, before any wait: batches arriving meanwhile check the window against it
    // (see journalDirect), or they would all pass while this one waits.
    this.options.queue.reserve(jobs.length - skipped)
    let done!: () => void
    const writing = new Promise<void>((resolve) => (done = resolve))
    this.writing.add(writing)
    try {
      if (earlier) {
        await Promise.allSettled(earlier)
        // What a failed write gave back is this delivery's to store now (its room with it: the
        // failed write gave that back too).
        let more = 0
        for (let i = 0; i < jobs.length; i++) if (!taken[i] && (taken[i] = this.isWork(jobs[i]!))) more++
        this.options.queue.reserve(more)
      }
      return await this.journalDirect(batchId, jobs, taken, encoded)
    } finally {
      this.writing.delete(writing)
      done()
    }
  }

  private async journalDirect(batchId: string, jobs: Job[], taken: boolean[], encoded?: EncodedJobs): Promise<IntakeResult> {
    const { queue } = this.options
    const { journal } = this.options.local!
    const fresh: Job[] = []
    const skip: number[] = []
    for (let i = 0; i < jobs.length; i++) {
      if (taken[i]) fresh.push(jobs[i]!)
      else skip.push(i)
    }
    // Kept arrivals are journaled with the others, not queued: they wait for the copy they are kept behind.
    const kept = this.keptUnwritten.size > 0 ? fresh.filter((job) => this.keptUnwritten.has(job)) : []
    let written = false
    // Room was taken (acceptDirect) before the journal write, not after: batches arriving together
    // would all pass the check while the first one awaits its write, and the window would grow
    // past its limit.
    try {
      await journal.append(batchId, fresh, encoded && { ...encoded, skip })
      written = true
    } catch (error) {
      queue.finish(fresh.length)
      for (const job of fresh) this.options.dedupe.release(job, job.revision)
      throw error
    } finally {
      if (kept.length) this.keptWritten(kept, written)
    }
    queue.push(kept.length ? fresh.filter((job) => !kept.includes(job)) : fresh)
    return { status: 'accepted', accepted: fresh.length, duplicates: skip.length }
  }

  /**
   * The journal write of kept arrivals is over: those released meanwhile are queued now (if it
   * went through); the others wait in the de-duplication for the copy they are kept behind.
   */
  private keptWritten(kept: Job[], written: boolean): void {
    for (const job of kept) {
      const released = this.keptUnwritten.get(job)
      this.keptUnwritten.delete(job)
      if (released && written && !this.draining) this.options.queue.push([job])
    }
  }

  /**
   * Is the job work to do (journaled)? A string that finished here before is done again only if
   * the service says so; one kept behind a copy whose status update went out is journaled and
   * waits (`keptUnwritten`, then the de-duplication) until that copy ends.
   */
  private isWork(job: Job): boolean {
    const arrival = this.options.dedupe.arrive(job, job.revision)
    switch (arrival) {
      case 'new':
        return true
      case 'finished':
        job.recheck = true
        return true
      case 'kept':
        this.keptUnwritten.set(job, false)
        return true
      case 'duplicate':
      case 'stale':
        return false
      default: {
        const never: never = arrival
        throw new Error(`unknown arrival ${String(never)}`)
      }
    }
  }

  /**
   * Replay what an earlier run acknowledged and did not finish: indexed into the backlog and read
   * back in turn. Every replayed string is checked with the service before it runs: it may have
   * been reported just before the process stopped. With a shared queue (BullMQ keeps the rest),
   * the strings parked in it go back to the queue, as the local journal's parked strings do.
   */
  async replay(): Promise<{ strings: number; batches: number; parked: number }> {
    const { dedupe } = this.options
    // Strings the earlier process finished are not remembered now: until its memory would have
    // run out, an arrival that is new here is checked with the service first. Read once: a replay
    // tried again (the store failed) would read this process's own mark.
    const journal = this.options.local?.journal ?? this.options.shared
    if (!this.aliveRead) {
      const lastAlive = await journal?.lastAlive?.()
      if (lastAlive !== undefined) dedupe.restartedAfter(lastAlive + ALIVE_EVERY_MS)
      this.aliveRead = true
    }
    await journal?.markAlive?.()
    if (!this.options.local) {
      const parked = (await this.options.shared?.replayParked?.()) ?? 0
      return { strings: parked, batches: 0, parked }
    }
    return this.options.local.backlog.replay()
  }
}
