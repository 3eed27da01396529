// Accepting a verified batch: back-pressure first (a full queue answers 503 and journals nothing),
// then de-duplication, then one durable journal write, and only then are the jobs queued and the
// batch acknowledged.
import type { Job } from './job.js'
import { stringKeyOf } from './job.js'
import type { Dedupe } from './dedupe.js'
import type { Journal } from './journal.js'
import type { WorkQueue } from './work-queue.js'

export type IntakeResult =
  | { status: 'accepted'; accepted: number; duplicates: number }
  | { status: 'busy'; retryAfterSeconds: number }

export interface IntakeDeps {
  dedupe: Dedupe
  journal: Journal
  queue: WorkQueue
  /** Is the worker shutting down? Then nothing new is taken. */
  closing(): boolean
}

export async function acceptJobs(deps: IntakeDeps, batchId: string, jobs: Job[]): Promise<IntakeResult> {
  const { dedupe, journal, queue } = deps
  if (deps.closing()) return { status: 'busy', retryAfterSeconds: 5 }
  if (!queue.hasRoom(jobs.length)) {
    // Long enough for the queue to drain a good part of its backlog (the worker runs several
    // thousand strings a second, bench), short enough to be retried well inside the service's
    // retry window. No extra second on top: with a small QUEUE_LIMIT it halved the flood's rate.
    return { status: 'busy', retryAfterSeconds: Math.min(30, Math.max(1, Math.ceil(queue.depth / 5000))) }
  }
  const fresh: Job[] = []
  let duplicates = 0
  for (const job of jobs) {
    job.batchId = batchId
    if (dedupe.admit(stringKeyOf(job), job.revision) === 'new') fresh.push(job)
    else duplicates++
  }
  try {
    await journal.append(batchId, fresh)
  } catch (error) {
    for (const job of fresh) dedupe.release(stringKeyOf(job), job.revision)
    throw error
  }
  queue.admit(fresh.length)
  queue.push(fresh)
  return { status: 'accepted', accepted: fresh.length, duplicates }
}
