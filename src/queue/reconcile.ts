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
/** Sweeps skipped for this long (QUEUE=bullmq, the queue never empty) are told once, as a warning. */
export const SKIPPED_TOO_LONG_MS = 60 * 60_000

export class Reconciler {
  private readonly steps = new Map<string, Step>()

  constructor(
    private readonly deps: {
      api: Pick<ApiClient, 'getStatuses'>
      dedupe: Pick<Dedupe, 'isActive'>
      metrics: Pick<Metrics, 'reconcileOrphans'>
      log: Logger
      /**
       * Strings acknowledged but outside this process's window: with QUEUE=bullmq queued, delayed
       * or running in Redis, by any instance; else waiting on disk, in the backlog. And the
       * domains with strings held there. The de-duplication's memory knows none of them, and
       * they cannot be found by string (the revision is in a job's id or a journal entry, not in
       * a status record): the sweep waits for a moment when none is queued (held ones aside),
       * and leaves held organizations' steps out, rather than count every such string as an
       * orphan. `where`: where they wait, for the log.
       */
      outsideWindow?: { queued(): Promise<number>; heldDomains(): ReadonlySet<string>; where?: string }
      /** Strings parked here now (they wait at the service too, with no job in the window). */
      parked?(): number
      now?(): number
    },
  ) {}

  /** When the last sweep ran, or the first was skipped; whether the long skip was told. */
  private swept?: number
  private skipTold = false

  /** Remember a (step, language) to sweep. */
  seen(job: Step): void {
    const key = `${job.domain}|${job.projectId}|${job.stepId}|${job.languageId}`
    if (!this.steps.has(key)) this.steps.set(key, { organizationId: job.organizationId, domain: job.domain, projectId: job.projectId, stepId: job.stepId, languageId: job.languageId })
  }

  async run(): Promise<{ orphans: number; checked: number; queuedElsewhere?: number }> {
    const { api, dedupe, metrics, log } = this.deps
    let orphans = 0
    let checked = 0
    let held: ReadonlySet<string> = new Set()
    if (this.deps.outsideWindow && this.steps.size) {
      const now = this.deps.now?.() ?? Date.now()
      const where = this.deps.outsideWindow.where ?? 'in Redis'
      const queued = await this.deps.outsideWindow.queued().catch((error: unknown) => (log.warn({ err: error }, 'reconciliation could not read the queue; skipped'), -1))
      if (queued !== 0) {
        this.swept ??= now
        if (now - this.swept >= SKIPPED_TOO_LONG_MS && !this.skipTold) {
          this.skipTold = true
          log.warn({ since: new Date(this.swept).toISOString() }, `reconciliation has not swept for an hour: it sweeps only when no string waits ${where} (those of held organizations aside), and there always was one. Strings lost on the way are not counted meanwhile`)
        } else if (queued > 0) log.debug({ queued }, `reconciliation skipped: strings wait ${where} (tried again at the next sweep)`)
        return { orphans, checked, queuedElsewhere: Math.max(queued, 0) }
      }
      this.swept = now
      this.skipTold = false
      held = this.deps.outsideWindow.heldDomains()
    }
    for (const s of this.steps.values()) {
      if (held.has(s.domain)) continue
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
      const parked = this.deps.parked?.() ?? 0
      log.warn(
        { orphans, checked, ...(parked ? { parked } : {}) },
        `strings wait at the service with no job here (not delivered yet, or lost before they reached this worker); the service resends them on Resend${parked ? `. ${parked} strings are parked here, which count among them: they are tried again every PARKED_RETRY_MS and at a start` : ''}`,
      )
    }
    return { orphans, checked }
  }
}
