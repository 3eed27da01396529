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

  constructor(private readonly deps: { api: Pick<ApiClient, 'getStatuses'>; dedupe: Pick<Dedupe, 'isActive'>; metrics: Pick<Metrics, 'reconcileOrphans'>; log: Logger }) {}

  /** Remember a (step, language) to sweep. */
  seen(job: Step): void {
    const key = `${job.domain}|${job.projectId}|${job.stepId}|${job.languageId}`
    if (!this.steps.has(key)) this.steps.set(key, { organizationId: job.organizationId, domain: job.domain, projectId: job.projectId, stepId: job.stepId, languageId: job.languageId })
  }

  async run(): Promise<{ orphans: number; checked: number }> {
    const { api, dedupe, metrics, log } = this.deps
    let orphans = 0
    let checked = 0
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
