// With QUEUE=bullmq, a string held after its pipeline ran (its status update refused with 403, say)
// comes back from Redis with its output decided, and is reported as decided rather than run again.
// A newer revision of it may have arrived and been reported meanwhile (a translator's fix of the
// source during a long hold): such a copy must not be reported over it. The copies taken in one
// turn of the event loop are asked about together (one read of the revisions noted in Redis).
import type { Decision } from '../protocol/decision.js'
import type { Job } from '../protocol/job.js'
import type { Logger } from '../util/logger.js'

export interface DecidedReleaseDeps {
  newerArrived(jobs: Job[]): Promise<ReadonlySet<Job>>
  superseded(job: Job): void | Promise<void>
  report(decision: Decision): void
  log: Logger
}

/** Returns `release(job)`: the job, with its decided port, goes to the reporter or leaves as superseded. */
export function createDecidedRelease(deps: DecidedReleaseDeps): (job: Job & { decidedPort: string }) => void {
  let pending: Array<Job & { decidedPort: string }> = []
  const flush = async () => {
    const jobs = pending
    pending = []
    let newer: ReadonlySet<Job> = new Set()
    try {
      newer = await deps.newerArrived(jobs)
    } catch (error) {
      deps.log.warn({ err: error, strings: jobs.length }, 'could not read which released strings have a newer revision; their decided outputs are reported')
    }
    for (const job of jobs) {
      if (newer.has(job)) await Promise.resolve(deps.superseded(job)).catch((error: unknown) => deps.log.error({ err: error }, 'finishing a superseded string failed'))
      else deps.report({ job, port: job.decidedPort })
    }
  }
  return (job) => {
    pending.push(job)
    if (pending.length === 1) setImmediate(() => void flush())
  }
}
