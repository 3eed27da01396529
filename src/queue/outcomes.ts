// What becomes of a string once something is decided about it: the journal, the de-duplication
// memory, the queue's count and the metrics, kept in step. One place for the reporter's answers
// (reported, rejected, dropped, parked, held) and the processor's (superseded, absorbed, parked,
// held, dropped), so every way out of the worker is accounted the same way.
import type { HoldCause, ReporterHooks } from '../platform/reporter.js'
import { translationFingerprint, type Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import type { Metrics } from '../util/metrics.js'
import type { Dedupe } from './dedupe.js'
import type { HeldOrganizations } from './held-organizations.js'
import type { IntakeJournal } from './intake-journal.js'
import type { Job } from '../protocol/job.js'
import type { WorkQueue } from './work-queue.js'

export interface OutcomesDeps {
  journal: IntakeJournal
  dedupe: Dedupe
  queue: WorkQueue
  held: HeldOrganizations
  metrics: Metrics
  log: Logger
  /** Send a decision to the reporter (a refused output goes back as "", parked at the service). */
  report(decision: Decision): void
  /** Put held strings out of memory, on disk (the backlog); decisions carry their port. */
  stash(jobs: Job[]): Promise<void>
}

export interface Outcomes {
  reporterHooks: ReporterHooks
  /** Finished without a report: a newer revision took its place. */
  superseded(job: Job): Promise<void>
  /** Arrived again after it finished, and the service does not wait for it. */
  absorbed(job: Job, status: string): Promise<void>
  /** Kept aside durably (retries ran out, no pipeline); tried again on the next start. */
  park(job: Job, reason: string): Promise<void>
  /** The service no longer waits for these strings. */
  drop(jobs: Job[], reason: string): Promise<void>
  /** Not run yet; the organization can't be reported for now. They wait on disk. */
  holdJobs(jobs: Job[], reason: string, cause: HoldCause, retryAfterMs?: number): Promise<void>
}

export function createOutcomes(deps: OutcomesDeps): Outcomes {
  const { journal, dedupe, queue, held, metrics, log } = deps

  const finish = async (job: Job, outcome: string, port = '') => {
    try {
      await journal.done(job)
    } catch (error) {
      // The journal's books have it done; only the entry's removal failed (the store): the entry
      // stays on disk and the next start checks its strings with the service. Here the string is
      // finished all the same, and so are the others of its PATCH: left active they would keep
      // their room in the window for good, and absorb every later arrival (a string sent back and
      // fixed) as a repeat of a copy still running.
      log.error({ err: error, string: job.stringId, delivery: job.batchId }, 'could not remove a finished journal entry; the next start checks its strings with the service')
    }
    dedupe.finish(job, job.revision)
    queue.finish()
    metrics.jobs.inc({ outcome, port })
  }
  const park = async (job: Job, reason: string, port = '') => {
    try {
      await journal.park(job, reason)
    } catch (error) {
      // Not set aside: the string stays in its entry (the next start replays it and checks it with
      // the service). Finished here all the same, as above.
      log.error({ err: error, string: job.stringId, delivery: job.batchId }, 'could not park a string in the journal; it stays in its entry for the next start')
    }
    dedupe.finish(job, job.revision)
    queue.finish()
    metrics.jobs.inc({ outcome: 'parked', port })
  }

  // Held strings leave the window for the disk: counted as held, written to the backlog, and their
  // room in the window goes to other organizations.
  const hold = async (jobs: Job[], reason: string, cause: HoldCause, retryAfterMs = 0) => {
    if (jobs.length === 0) return
    held.holdJobs(jobs, reason, cause, retryAfterMs)
    metrics.jobs.inc({ outcome: 'held', port: '' }, jobs.length)
    try {
      await deps.stash(jobs)
    } finally {
      queue.finish(jobs.length)
    }
  }

  const reporterHooks: ReporterHooks = {
    superseded: (d) => finish(d.job, 'superseded', d.port),
    async reported(decisions) {
      if (decisions[0]) held.succeeded(decisions[0].job.domain)
      for (const d of decisions) await finish(d.job, 'reported', d.port)
    },
    async rejected(d, reason, grouped) {
      metrics.jobs.inc({ outcome: 'rejected', port: d.port })
      // The service still waits for the string: park it there as TODO (""), where a manager sees
      // it, rather than forget it. If even "" is refused, keep it here, parked, for the next start.
      if (d.port !== '') {
        // A whole group refused for one output (the step does not declare it): the reporter said so
        // once for all of them; a line each here would be hundreds.
        log[grouped ? 'debug' : 'warn']({ string: d.job.stringId, output: d.port }, `the service refused output "${d.port}" (${reason}); the string is parked at the service with ""`)
        deps.report({ job: d.job, port: '' })
      } else await park(d.job, reason)
    },
    async dropped(decisions) {
      for (const d of decisions) await finish(d.job, 'dropped', d.port)
    },
    async parked(decisions, reason) {
      for (const d of decisions) await park(d.job, reason, d.port)
    },
    async held(decisions, reason, cause, retryAfterMs, mayHaveLanded) {
      // Refused (403) or never sent (no token), the update did not land: the output is kept. After
      // an outage (5XX, timeouts) it may have, even if a later attempt was refused: the string may
      // be DONE, or sent back and fixed since, so the service is asked first, and a string it
      // still waits for runs again on its current translation rather than get an output decided
      // on an older one.
      await hold(decisions.map((d) => ({ ...d.job, decidedPort: d.port, ...(d.review ? { decidedReview: d.review } : {}), ...(d.on !== undefined ? { decidedOn: translationFingerprint(d.on) } : {}), ...(mayHaveLanded ? { recheck: true } : {}) })), reason, cause, retryAfterMs)
    },
  }

  return {
    reporterHooks,
    superseded: (job) => finish(job, 'superseded'),
    async absorbed(job, status) {
      metrics.rechecks.inc({ status })
      await finish(job, 'absorbed')
    },
    async park(job, reason) {
      log.warn({ string: job.stringId, module: job.moduleKey, reason }, 'string parked')
      await park(job, reason)
    },
    async drop(jobs, reason) {
      log.warn({ strings: jobs.length, domain: jobs[0]?.domain, step: jobs[0]?.stepId, language: jobs[0]?.languageId }, `the service no longer waits for these strings (${reason}); they are dropped`)
      for (const job of jobs) await finish(job, 'dropped')
    },
    holdJobs: hold,
  }
}
