// A decision reported apart from the run that made it can be older than what the service has now:
// - with QUEUE=bullmq, a string held after its pipeline ran (its status update refused with 403,
//   say) comes back from Redis with its output decided, and is reported as decided rather than
//   run again;
// - an output the service refused (400) is sent again as "", parking the string as TODO.
// A newer revision of the string may have arrived and been reported meanwhile (a translator's fix
// of the source): such a copy must not be reported over it, and leaves as superseded. This
// instance's memory says so at once; with QUEUE=bullmq the revisions noted in Redis are asked too,
// the copies of one turn of the event loop together (one read).
import type { Decision } from '../protocol/decision.js'
import type { Job } from '../protocol/job.js'
import type { Logger } from '../util/logger.js'

export interface CheckedReportDeps {
  /** False when this instance knows a newer revision of the job's string. */
  isCurrent(job: Job): boolean
  /** QUEUE=bullmq: those of `jobs` a newer revision arrived for at any instance. */
  newerArrived?(jobs: Job[]): Promise<ReadonlySet<Job>>
  superseded(job: Job): void | Promise<void>
  report(decision: Decision): void
  log: Logger
}

/** Returns `report(decision)`: to the reporter, or the job leaves as superseded. */
export function createCheckedReport(deps: CheckedReportDeps): (decision: Decision) => void {
  const supersede = (job: Job) => void Promise.resolve()
    .then(() => deps.superseded(job))
    .catch((error: unknown) => deps.log.error({ err: error }, 'finishing a superseded string failed'))
  const newerArrived = deps.newerArrived
  let pending: Decision[] = []
  const flush = async () => {
    const decisions = pending
    pending = []
    let newer: ReadonlySet<Job> = new Set()
    try {
      newer = await newerArrived!(decisions.map(jobOf))
    } catch (error) {
      deps.log.warn({ err: error, strings: decisions.length }, 'could not read which strings have a newer revision; their decided outputs are reported')
    }
    for (const d of decisions) {
      if (newer.has(d.job)) supersede(d.job)
      else deps.report(d)
    }
  }
  return (decision) => {
    if (!deps.isCurrent(decision.job)) return supersede(decision.job)
    if (!newerArrived) return deps.report(decision)
    pending.push(decision)
    if (pending.length === 1) setImmediate(() => void flush())
  }
}

const jobOf = (d: Decision) => d.job
