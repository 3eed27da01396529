// Reconciliation (platform notes: "reconcile regularly"): for every (organization, project, step,
// language) this worker has seen, list the strings the service still waits for (NEED_PROCESS) and
// count those this worker holds no job for. They were not delivered yet, or were lost before they
// reached this worker; the service sends them again on Resend. Counted and logged, not invented:
// this worker has no event for them to run a pipeline on.
import type { ApiClient } from '../platform/api-client.js'
import type { Logger } from '../util/logger.js'
import type { Metrics } from '../util/metrics.js'
import type { Dedupe } from './dedupe.js'
import type { Job } from '../protocol/job.js'

type Step = Pick<Job, 'organizationId' | 'domain' | 'projectId' | 'stepId' | 'languageId'>

const PAGE = 500

export class Reconciler {
  private readonly steps = new Map<string, Step>()

  constructor(
    private readonly deps: {
      api: Pick<ApiClient, 'getStatuses'>
      dedupe: Pick<Dedupe, 'isActive'>
      metrics: Pick<Metrics, 'reconcileOrphans'>
      log: Logger
      /**
       * With QUEUE=bullmq: strings queued, delayed, running or held in Redis, by any instance.
       * This process's memory knows none of them, and their jobs cannot be found by string (the
       * revision is in a job's id, not in a status record): the sweep waits for a moment when
       * there are none, rather than count every one as an orphan.
       */
      queuedElsewhere?(): Promise<number>
    },
  ) {}

  /** Remember a (step, language) to sweep. */
  seen(job: Step): void {
    const key = `${job.domain}|${job.projectId}|${job.stepId}|${job.languageId}`
    if (!this.steps.has(key)) this.steps.set(key, { organizationId: job.organizationId, domain: job.domain, projectId: job.projectId, stepId: job.stepId, languageId: job.languageId })
  }

  async run(): Promise<{ orphans: number; checked: number; queuedElsewhere?: number }> {
    const { api, dedupe, metrics, log } = this.deps
    let orphans = 0
    let checked = 0
    if (this.deps.queuedElsewhere && this.steps.size) {
      const queued = await this.deps.queuedElsewhere().catch((error: unknown) => (log.warn({ err: error }, 'reconciliation could not read the shared queue; skipped'), -1))
      if (queued !== 0) {
        if (queued > 0) log.debug({ queued }, 'reconciliation skipped: strings are queued in Redis (tried again at the next sweep)')
        return { orphans, checked, queuedElsewhere: Math.max(queued, 0) }
      }
    }
    for (const s of this.steps.values()) {
      try {
        for (let offset = 0; ; offset += PAGE) {
          const records = await api.getStatuses(s.domain, s.projectId, s.stepId, s.languageId, { status: 'NEED_PROCESS', limit: PAGE, offset })
          for (const r of records) {
            checked++
            if (!dedupe.isActive({ ...s, stringId: r.stringId })) orphans++
          }
          if (records.length < PAGE) break
        }
      } catch (error) {
        log.warn({ err: error, domain: s.domain, step: s.stepId, language: s.languageId }, 'reconciliation could not read statuses')
      }
    }
    if (orphans) {
      metrics.reconcileOrphans.inc(orphans)
      log.warn({ orphans, checked }, 'strings wait at the service with no job here (not delivered yet, or lost before they reached this worker); the service resends them on Resend')
    }
    return { orphans, checked }
  }
}
