// The intake: where a verified batch's jobs become work the worker owes the service. Back-pressure
// first (a full queue answers 503 and journals nothing), then de-duplication, then one durable
// journal write, and only then are the jobs queued and the batch acknowledged. On start, what an
// earlier run acknowledged and did not finish is replayed from the journal.
import type { Admission, Dedupe } from './dedupe.js'
import type { HeldOrganizations } from './held-organizations.js'
import type { IntakeJournal } from './intake-journal.js'
import { stringKeyOf, type Job } from './job.js'
import type { EncodedJobs } from './journal.js'
import type { WorkQueue } from './work-queue.js'

/** How often the journal records that this process is alive (see `replay`). */
export const ALIVE_EVERY_MS = 30_000

/** Replayed jobs are checked with the service anyway: only repeats within the journal are not work. */
const isWork = (a: Admission) => a === 'new' || a === 'finished'

export type IntakeResult =
  | { status: 'accepted'; accepted: number; duplicates: number }
  | { status: 'busy'; retryAfterSeconds: number; /** Why, when it is not a full queue. */ reason?: string }

export interface IntakeOptions {
  dedupe: Dedupe
  journal: IntakeJournal
  queue: WorkQueue
  /** Strings an organization holds (no usable token, or refused); they are not in the queue's count. */
  held?: Pick<HeldOrganizations, 'count'>
}

export class Intake {
  private closing = false

  constructor(private readonly options: IntakeOptions) {}

  /** Take nothing new from now on (shutdown). */
  close(): void {
    this.closing = true
  }

  /**
   * Accept a batch's jobs. `encoded`: the same jobs as their decoder's JSON text, in the same order;
   * the journal stores that text (and which of them were not taken) instead of encoding them again.
   */
  async accept(batchId: string, jobs: Job[], encoded?: EncodedJobs): Promise<IntakeResult> {
    const { journal, queue } = this.options
    if (this.closing) return { status: 'busy', retryAfterSeconds: 5 }
    // Read the depth and take the room with no await in between (only a shared queue is asked):
    // batches arriving together would otherwise all pass the check and overfill the queue.
    const depth = journal.backlog ? await journal.backlog() : queue.depth
    const busy = this.busy(jobs, depth)
    if (busy) return busy
    if (journal.delivers) {
      // Shared queue: its job ids (the de-duplication key) absorb repeats across instances.
      for (const job of jobs) job.batchId = batchId
      await journal.append(batchId, jobs)
      return { status: 'accepted', accepted: jobs.length, duplicates: 0 }
    }
    const fresh: Job[] = []
    const skip: number[] = []
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!
      job.batchId = batchId
      if (this.admit(job)) fresh.push(job)
      else skip.push(i)
    }
    // Room is taken before the journal write, not after: batches arriving together would all pass
    // the check while the first one awaits its write, and the queue would grow past its limit.
    queue.admit(fresh.length)
    try {
      await journal.append(batchId, fresh, encoded && { ...encoded, skip })
    } catch (error) {
      queue.finish(fresh.length)
      for (const job of fresh) this.options.dedupe.release(stringKeyOf(job), job.revision)
      throw error
    }
    queue.push(fresh)
    return { status: 'accepted', accepted: fresh.length, duplicates: skip.length }
  }

  /** Is the job work to do? A string that finished here before is done again only if the service says so. */
  private admit(job: Job): boolean {
    switch (this.options.dedupe.admit(stringKeyOf(job), job.revision)) {
      case 'new':
        return true
      case 'finished':
        job.recheck = true
        return true
      case 'duplicate':
      case 'stale':
        return false
    }
  }

  private busy(jobs: Job[], depth: number): IntakeResult | undefined {
    const { queue, held } = this.options
    // An organization that can't be reported for holds at most QUEUE_LIMIT strings: past that, its
    // own deliveries wait (the service retries them), and nobody else's.
    const domain = jobs[0]?.domain
    const holding = domain !== undefined && held ? held.count(domain) : 0
    if (holding && holding + jobs.length > queue.limit) {
      return { status: 'busy', retryAfterSeconds: 30, reason: `the organization holds ${holding} strings that wait until it can be reported for again` }
    }
    if (depth + jobs.length > queue.limit && depth > 0) {
      // Long enough for the queue to drain a good part of its backlog (the worker runs several
      // thousand strings a second, bench), short enough to be retried well inside the service's
      // retry window. No extra second on top: with a small QUEUE_LIMIT it halved the flood's rate.
      return { status: 'busy', retryAfterSeconds: Math.min(30, Math.max(1, Math.ceil(depth / 5000))) }
    }
    return undefined
  }

  /**
   * Replay what an earlier run acknowledged and did not finish. Every replayed string is checked
   * with the service before it runs: it may have been reported just before the process stopped.
   */
  async replay(): Promise<{ strings: number; batches: number; parked: number }> {
    const { journal, queue, dedupe } = this.options
    // Strings the earlier process finished are not remembered now: until its memory would have
    // run out, an arrival that is new here is checked with the service first.
    const lastAlive = await journal.lastAlive?.()
    if (lastAlive !== undefined) dedupe.restartedAfter(lastAlive + ALIVE_EVERY_MS)
    await journal.markAlive?.()
    const { batches, parked } = await journal.load()
    let strings = 0
    for (const { batchId, jobs } of batches) {
      journal.adopt(batchId, jobs.length)
      const fresh: Job[] = []
      for (const job of jobs) {
        if (isWork(dedupe.admit(stringKeyOf(job), job.revision))) fresh.push(job)
        // A duplicate of a job already replayed counts as done at once.
        else await journal.done(job)
      }
      for (const job of fresh) job.recheck = true
      queue.admit(fresh.length)
      queue.push(fresh)
      strings += fresh.length
    }
    // A restart is a natural retry for parked strings: journal them again, then take them back.
    if (parked.length) {
      const batchId = journal.newBatchId()
      const jobs = parked.map((p) => ({ ...p.job, batchId, attempts: 0, recheck: true })).filter((j) => isWork(dedupe.admit(stringKeyOf(j), j.revision)))
      await journal.append(batchId, jobs)
      for (const p of parked) await journal.unpark(p.job)
      queue.admit(jobs.length)
      queue.push(jobs)
      strings += jobs.length
    }
    return { strings, batches: batches.length, parked: parked.length }
  }
}
