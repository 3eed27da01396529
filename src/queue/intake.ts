// Accepting a verified batch: back-pressure first (a full queue answers 503 and journals nothing),
// then de-duplication, then one durable journal write, and only then are the jobs queued and the
// batch acknowledged.
import type { Job } from './job.js'
import { stringKeyOf } from './job.js'
import type { EncodedJobs } from './journal.js'
import type { Dedupe } from './dedupe.js'
import type { WorkQueue } from './work-queue.js'

export type IntakeResult =
  | { status: 'accepted'; accepted: number; duplicates: number }
  | { status: 'busy'; retryAfterSeconds: number; /** Why, when it is not a full queue. */ reason?: string }

export interface IntakeDeps {
  dedupe: Dedupe
  journal: {
    append(batchId: string, jobs: Job[], encoded?: EncodedJobs): Promise<void>
    /** The journal hands jobs to the pipeline itself (BullMQ): the intake only stores them. */
    readonly delivers?: boolean
    /** Strings waiting across every instance, when they share a queue. */
    backlog?(): Promise<number>
  }
  queue: WorkQueue
  /** Is the worker shutting down? Then nothing new is taken. */
  closing(): boolean
  /** Strings an organization holds (no usable token); they are not in the queue's count. */
  held?(domain: string): number
}

/**
 * `encoded`: the same jobs as their decoder's JSON text, in the same order; the journal stores that
 * text (and which of them were duplicates) instead of encoding the jobs again.
 */
export async function acceptJobs(deps: IntakeDeps, batchId: string, jobs: Job[], encoded?: EncodedJobs): Promise<IntakeResult> {
  const { dedupe, journal, queue } = deps
  if (deps.closing()) return { status: 'busy', retryAfterSeconds: 5 }
  // An organization that can't be reported for holds at most QUEUE_LIMIT strings: past that, its
  // own deliveries wait (the service retries them), and nobody else's.
  const domain = jobs[0]?.domain
  if (domain !== undefined && deps.held && deps.held(domain) + jobs.length > queue.limit) {
    return { status: 'busy', retryAfterSeconds: 30, reason: `the organization holds ${deps.held(domain)} strings that wait for it to be connected again` }
  }
  const depth = journal.backlog ? await journal.backlog() : queue.depth
  if (depth + jobs.length > queue.limit && depth > 0) {
    // Long enough for the queue to drain a good part of its backlog (the worker runs several
    // thousand strings a second, bench), short enough to be retried well inside the service's
    // retry window. No extra second on top: with a small QUEUE_LIMIT it halved the flood's rate.
    return { status: 'busy', retryAfterSeconds: Math.min(30, Math.max(1, Math.ceil(depth / 5000))) }
  }
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
    if (dedupe.admit(stringKeyOf(job), job.revision) === 'new') fresh.push(job)
    else skip.push(i)
  }
  const duplicates = skip.length
  // Room is taken before the journal write, not after: batches arriving together would all pass
  // the check while the first one awaits its write, and the queue would grow past its limit.
  queue.admit(fresh.length)
  try {
    await journal.append(batchId, fresh, encoded && { ...encoded, skip })
  } catch (error) {
    queue.finish(fresh.length)
    for (const job of fresh) dedupe.release(stringKeyOf(job), job.revision)
    throw error
  }
  queue.push(fresh)
  return { status: 'accepted', accepted: fresh.length, duplicates }
}
