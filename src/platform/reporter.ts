// Reports outputs: decisions are coalesced per (organization, project, step, language) into one
// PATCH of up to 500 operations, sent when a group is full or has waited `lingerMs`. A PATCH the
// service refuses as a whole (400 undeclared port, 404 language) is split in halves until the bad
// strings are isolated, so the others still go through. What can't be reported is parked, or held
// while the organization is disconnected; nothing is dropped silently.
import type { Job } from '../queue/job.js'
import type { Logger } from '../util/logger.js'
import { ApiError, type ApiClient } from './api-client.js'
import { isOrganizationUnavailable } from './token-provider.js'

export interface Decision {
  job: Job
  /** The PATCH value: an output port, or '' to park the string as TODO. */
  port: string
}

export interface ReporterHooks {
  /** The service accepted these outputs. */
  reported(decisions: Decision[]): void | Promise<void>
  /** The service refused this string's update for good (logged with the reason). */
  rejected(decision: Decision, reason: string): void | Promise<void>
  /** Retries ran out: keep the job aside, durably. */
  parked(decision: Decision, reason: string): void | Promise<void>
  /** The organization has no usable token: keep the decisions until it is connected again. */
  held(decisions: Decision[], reason: string): void | Promise<void>
}

export interface ReporterOptions {
  api: ApiClient
  log: Logger
  lingerMs: number
  maxBatch?: number
  hooks: ReporterHooks
}

interface Group {
  domain: string
  projectId: number
  stepId: number
  languageId: string
  decisions: Map<number, Decision>
  timer?: NodeJS.Timeout
}

export class Reporter {
  private readonly groups = new Map<string, Group>()
  private readonly inFlight = new Set<Promise<void>>()
  private readonly maxBatch: number
  patches = 0

  constructor(private readonly options: ReporterOptions) {
    this.maxBatch = options.maxBatch ?? 500
  }

  /** Decisions waiting to be sent. */
  get pending(): number {
    let n = 0
    for (const g of this.groups.values()) n += g.decisions.size
    return n
  }

  add(decision: Decision): void {
    const j = decision.job
    const key = `${j.domain}|${j.projectId}|${j.stepId}|${j.languageId}`
    let group = this.groups.get(key)
    if (!group) {
      group = { domain: j.domain, projectId: j.projectId, stepId: j.stepId, languageId: j.languageId, decisions: new Map() }
      this.groups.set(key, group)
    }
    // A repeat of the same string in one PATCH would be the same string reported twice; the
    // latest decision wins (a newer revision, or a retry).
    group.decisions.set(j.stringId, decision)
    if (group.decisions.size >= this.maxBatch) this.send(key, group)
    else if (!group.timer) group.timer = setTimeout(() => this.send(key, group), this.options.lingerMs)
  }

  private send(key: string, group: Group): void {
    if (group.timer) clearTimeout(group.timer)
    this.groups.delete(key)
    const decisions = [...group.decisions.values()]
    for (let i = 0; i < decisions.length; i += this.maxBatch) {
      const p = this.deliver(group, decisions.slice(i, i + this.maxBatch)).catch((error) => {
        this.options.log.error({ err: error }, 'reporter failed unexpectedly')
      })
      this.inFlight.add(p)
      void p.finally(() => this.inFlight.delete(p))
    }
  }

  private async deliver(group: Group, decisions: Decision[]): Promise<void> {
    const { api, hooks, log } = this.options
    const ops = decisions.map((d) => ({ op: 'replace' as const, path: `/${d.job.stringId}/output`, value: d.port }))
    try {
      this.patches++
      await api.patchStatuses(group.domain, group.projectId, group.stepId, group.languageId, ops)
      log.debug({ domain: group.domain, organization: decisions[0]?.job.organizationId, projectId: group.projectId, stepId: group.stepId, languageId: group.languageId, strings: decisions.length }, 'statuses reported')
      await hooks.reported(decisions)
    } catch (error) {
      if (isOrganizationUnavailable(error)) {
        await hooks.held(decisions, (error as Error).message)
      } else if (error instanceof ApiError && error.permanent) {
        if (decisions.length === 1) {
          const d = decisions[0]!
          const reason = `${error.status}: ${error.body.slice(0, 300) || 'refused'}`
          log.warn({ domain: group.domain, projectId: group.projectId, stepId: group.stepId, languageId: group.languageId, stringId: d.job.stringId, delivery: d.job.batchId, organization: d.job.organizationId, output: d.port, status: error.status }, `status update refused: ${reason}`)
          await hooks.rejected(d, reason)
        } else {
          const half = Math.ceil(decisions.length / 2)
          await Promise.all([this.deliver(group, decisions.slice(0, half)), this.deliver(group, decisions.slice(half))])
        }
      } else {
        const reason = error instanceof Error ? error.message : String(error)
        log.error({ domain: group.domain, projectId: group.projectId, stepId: group.stepId, languageId: group.languageId, strings: decisions.length }, `status update failed after retries, strings parked: ${reason}`)
        for (const d of decisions) await hooks.parked(d, reason)
      }
    }
  }

  /** Send everything pending now and wait for every PATCH under way. */
  async flush(): Promise<void> {
    for (const [key, group] of [...this.groups]) this.send(key, group)
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight])
  }
}
