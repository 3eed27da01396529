// One pipeline run over a group of jobs that share organization, project, step, language and
// module: ask the service about strings that arrived again after they finished (recheck), park
// invalid events with "", look up the pipeline and the step's settings, fetch the translations once
// (only when a check needs them), run, and hand each string's output to the reporter.
import { buildItem, textChars } from '../engine/build-item.js'
import type { Pipeline, PipelineSet } from '../engine/pipeline.js'
import type { Item } from '../engine/types.js'
import { reviewOf } from '../findings/review.js'
import type { ApiClient, ApiError, RequestOptions, TranslationRecord } from '../platform/api-client.js'
import { verdictOf, type HoldCause, type Reporter } from '../platform/reporter.js'
import type { Logger } from '../util/logger.js'
import type { Job } from '../protocol/job.js'
import { recheckStatuses } from './recheck-statuses.js'
import { forgetDecision, heldDecision } from './backlog.js'
import { translationFingerprint } from '../protocol/decision.js'

export interface StepSettingsLookup {
  get(ref: { organizationId: string; projectId: number; stepId: number; moduleKey: string }): Promise<Record<string, unknown> | undefined>
}

export interface ProcessDeps {
  pipelines(): Pick<PipelineSet, 'get'>
  settings?: StepSettingsLookup
  api: ApiClient
  reporter: Reporter
  log: Logger
  /** Pipeline runs a string may take when its pipeline says `retry` (or a fetch fails) before it is parked. */
  maxAttempts: number
  signal: AbortSignal
  isCurrent(job: Job): boolean
  /**
   * Those of `jobs` a newer revision of their string has arrived for, wherever it arrived (with
   * QUEUE=bullmq, at any instance: isCurrent knows this process's arrivals only). Asked once a run
   * is over, before its outcomes go to the reporter.
   */
  newerArrived?(jobs: Job[]): Promise<ReadonlySet<Job>>
  /** Superseded by a newer revision: finished without a report. */
  superseded(job: Job): void | Promise<void>
  /**
   * Run them again in `delayMs`, or sooner when the organization's API answers, but never before
   * `notBeforeMs` (a Retry-After). `apiFailed`: they wait because their organization's API failed
   * (their room in the window goes to other organizations meanwhile).
   */
  retryLater(jobs: Job[], delayMs: number, notBeforeMs?: number, apiFailed?: boolean): void
  park(job: Job, reason: string): void | Promise<void>
  /** `retryAfterMs`: the last answer's Retry-After, the soonest the organization is tried again. */
  hold(jobs: Job[], reason: string, cause: HoldCause, retryAfterMs?: number): void | Promise<void>
  /** The service no longer waits for these strings (404 for their step or language). */
  drop(jobs: Job[], reason: string): void | Promise<void>
  /** Arrived again after they finished, and the service does not wait for them: a repeat. */
  absorbed(job: Job, status: string): void | Promise<void>
  /** Arrived again after they finished, and the service waits for them: they run again. */
  reentered?(count: number): void
  countRun(pipelineKey: string): void
  /**
   * Does this string run on the pipelines' long-text lane (PipelinePool.isLong)? Such strings of a
   * run go through the pipeline apart from the others, so that the others are reported at once.
   */
  isLong?(item: Item): boolean
  /**
   * Finish a run of long strings beside the work queue's concurrency limit (WorkQueue.detach),
   * so that its slot serves ordinary strings meanwhile; `weight`: their characters. False: the
   * queue holds as many as it may, and the strings come back later (LANE_FULL_DELAY_MS).
   */
  detach?(task: () => Promise<void>, jobs: Job[], weight: number): boolean
}

/** Long strings the work queue could not take beside its slots come back after this long. */
export const LANE_FULL_DELAY_MS = 5000

/**
 * A run failed for some of its group's strings only: the others were handed on (a detached run
 * of long strings settles its own), so only these are to be tried again.
 */
export class PartFailed extends Error {
  constructor(readonly error: unknown, readonly jobs: Job[]) {
    super((error as Error)?.message ?? String(error))
  }
}

/**
 * Requests made while the group holds a work slot (the translations, the recheck): a few attempts,
 * no wait longer than a few seconds in place, and none after a timeout (an API that hangs kept a
 * slot for three API_TIMEOUT_MS). Past that the group leaves the slot and is tried again later,
 * with back-off (at least the Retry-After it was given): one organization's failing, hanging or
 * rate-limited API must not keep the slots, and with them every other organization, asleep.
 */
export const IN_SLOT: RequestOptions = { maxAttempts: 3, maxWaitMs: 5_000, retryTimeouts: false }

/** What becomes of a group whose request or run failed: tried again later, then parked or held. */
function failureRules(deps: ProcessDeps) {
  const retryDelay = (attempts: number) => Math.min(60_000, 1000 * 2 ** attempts)

  /**
   * Try the jobs again later, with back-off (never before `minDelayMs`, a Retry-After); past
   * maxAttempts, `spent` decides (park, or hold).
   */
  const giveUpOrRetry = async (jobs: Job[], spent: (jobs: Job[]) => Promise<void> | void, minDelayMs = 0, apiFailed = false) => {
    const again: Job[] = []
    const out: Job[] = []
    for (const job of jobs) {
      job.attempts++
      ;(job.attempts >= deps.maxAttempts ? out : again).push(job)
    }
    if (out.length) await spent(out)
    if (again.length) deps.retryLater(again, Math.max(minDelayMs, retryDelay(again[0]!.attempts)), minDelayMs, apiFailed)
  }
  const park = async (jobs: Job[], reason: string) => {
    for (const job of jobs) await deps.park(job, reason)
  }

  /**
   * A request for the group failed: the reporter's rules (hold, drop); an answer that says only
   * that the API could not take it now (429, 5XX, timeouts, network) is tried again later, and
   * once the attempts are spent held as unavailable (tried again by itself, never left for a
   * restart); anything else is tried again, then parked.
   */
  const apiFailed = async (jobs: Job[], error: unknown, what: string, log: Logger) => {
    const verdict = verdictOf(error)
    const reason = `${what}: ${(error as Error).message}`
    if (verdict.kind === 'hold' && verdict.cause !== 'unavailable') return deps.hold(jobs, reason, verdict.cause)
    if (verdict.kind === 'drop') return deps.drop(jobs, reason)
    log.warn({ err: error }, `${what}; the strings will be tried again`)
    const retryAfterMs = (error as ApiError).retryAfterMs ?? 0
    if (verdict.kind === 'hold') return giveUpOrRetry(jobs, (out) => deps.hold(out, reason, 'unavailable', retryAfterMs), retryAfterMs, true)
    return giveUpOrRetry(jobs, (out) => park(out, reason))
  }

  return { giveUpOrRetry, park, apiFailed }
}

/** Steps warned about invalid saved settings, per job processor (its deps), at most this many remembered (then forgotten). */
const WARNED_SETTINGS_MAX = 1000
const WARNED_SETTINGS = new WeakMap<object, Set<string>>()

/**
 * The settings a group's strings run with: its step's saved settings as its pipeline resolves them
 * for a run, or the pipeline's defaults when nothing is saved (without a default its own field
 * refuses; none when the defaults fail the schema as a whole).
 * Saved settings the pipeline refuses (saved before it changed its schema) come with `errors`:
 * the strings are not run with settings nobody chose for the step (the defaults in their place
 * checked them without the user's forbidden words, limits, ...); each goes where on-error says
 * (Pipeline.settingsInvalid), and the log says so once per step and errors.
 */
async function stepSettings(deps: Pick<ProcessDeps, 'settings'>, pipeline: Pick<Pipeline, 'resolveSettings'>, first: Job, log: Logger): Promise<{ settings: Record<string, unknown>; errors?: string[] }> {
  const stored = await deps.settings?.get({ organizationId: first.organizationId, projectId: first.projectId, stepId: first.stepId, moduleKey: first.moduleKey })
  const resolved = pipeline.resolveSettings(stored, { run: true })
  if (resolved.ok) return { settings: resolved.settings }
  if (stored === undefined) return { settings: {} }
  const key = `${first.organizationId}|${first.projectId}|${first.stepId}|${first.moduleKey}|${resolved.errors.join('|')}`
  let warnedSettings = WARNED_SETTINGS.get(deps)
  if (!warnedSettings) WARNED_SETTINGS.set(deps, (warnedSettings = new Set()))
  if (!warnedSettings.has(key)) {
    if (warnedSettings.size >= WARNED_SETTINGS_MAX) warnedSettings.clear()
    warnedSettings.add(key)
    log.warn({ errors: resolved.errors }, "stored step settings are invalid for the pipeline: its strings are not checked and go where on-error says; save the step's settings again (logged once per step)")
  }
  return { settings: {}, errors: resolved.errors }
}

/**
 * Held decisions back from the disk (taken out of `jobs`): reported as decided while the
 * translation they were decided on is still the one the service has (`fingerprintNow`); the
 * others forget their decision and run on the translation as it is now.
 */
function takeUnchangedDecisions(jobs: Job[], fingerprintNow: (job: Job) => string | undefined): Job[] {
  const unchanged: Job[] = []
  for (let i = jobs.length - 1; i >= 0; i--) {
    const job = jobs[i]!
    if (job.decidedPort === undefined) continue
    if (job.decidedOn === undefined || job.decidedOn === fingerprintNow(job)) {
      jobs.splice(i, 1)
      unchanged.push(job)
    } else forgetDecision(job)
  }
  return unchanged
}

export function createJobProcessor(deps: ProcessDeps): (jobs: Job[]) => Promise<void> {
  const { giveUpOrRetry, park, apiFailed } = failureRules(deps)

  /** The jobs that should run: current revisions only, and what the service still waits for. */
  const toRun = async (all: Job[]): Promise<Job[] | undefined> => {
    const current: Job[] = []
    for (const job of all) {
      if (deps.isCurrent(job)) current.push(job)
      else await deps.superseded(job)
    }
    if (!current.some((j) => j.recheck)) return current
    try {
      const asked = current.filter((j) => j.recheck).length
      const { run, absorbed } = await recheckStatuses(deps.api, current, IN_SLOT)
      for (const { job, status } of absorbed) await deps.absorbed(job, status)
      if (asked > absorbed.length) deps.reentered?.(asked - absorbed.length)
      return run
    } catch (error) {
      await apiFailed(current, error, 'the status of strings that arrived again could not be read', deps.log)
      return undefined
    }
  }

  return async function processJobs(all: Job[]): Promise<void> {
    const runnable = await toRun(all)
    if (!runnable) return
    const jobs: Job[] = []
    const invalid: Job[] = []
    // An event that failed validation but named its string: parked at the service, never run.
    for (const job of runnable) (job.invalid !== undefined ? invalid : jobs).push(job)
    if (invalid.length) await parkInvalid(invalid)
    const first = jobs[0]
    if (!first) return
    const log = deps.log.child({ organization: first.organizationId, project: first.projectId, step: first.stepId, language: first.languageId, module: first.moduleKey })
    const pipeline = deps.pipelines().get(first.moduleKey)
    if (!pipeline) {
      for (const job of jobs) await deps.park(job, `no pipeline declares module key "${first.moduleKey}"`)
      return
    }

    const { settings, errors: settingsErrors } = await stepSettings(deps, pipeline, first, log)

    let translations: Map<number, TranslationRecord> | undefined
    if (pipeline.needsTranslation) {
      try {
        translations = await deps.api.getTranslations(first.domain, first.projectId, first.languageId, jobs.map(stringIdOf), IN_SLOT)
      } catch (error) {
        return apiFailed(jobs, error, 'translations could not be fetched', log)
      }
    }

    // A loop in processJobs (made once), not a callback made for each run: see statusOp in
    // platform/reporter.ts.
    const items: Item[] = []
    if (jobs.some((j) => j.decidedPort !== undefined)) {
      const unchanged = takeUnchangedDecisions(jobs, (job) => translations && translationFingerprint(buildItem(job, { translation: translations.get(job.stringId) ?? { text: '' }, settings, log, signal: deps.signal })))
      // The checks a decision made by this run goes through (settle): a newer revision arrived
      // here while the translations were read, or at another instance (QUEUE=bullmq).
      const newer = unchanged.length && deps.newerArrived ? await newerOf(unchanged, log) : undefined
      for (const job of unchanged) await (!deps.isCurrent(job) || newer?.has(job) ? deps.superseded(job) : deps.reporter.add(heldDecision(job)))
      if (jobs.length === 0) return
    }
    for (const job of jobs) items.push(buildItem(job, { translation: translations ? (translations.get(job.stringId) ?? { text: '' }) : undefined, settings, log, signal: deps.signal }))
    if (settingsErrors) return settle(pipeline, jobs, items, items.map((item) => pipeline.settingsInvalid(item.id, settingsErrors)), log)
    deps.countRun(pipeline.key)
    // Long strings (a translator's 50 KB text) run apart, on the pipelines' long-text lane,
    // beside the queue's slots when it has room: the others are reported without waiting for them.
    const { long, short } = apartLong(jobs, items, deps.isLong)
    if (long.jobs.length === 0 || !deps.detach) return runAndSettle(pipeline, jobs, items, log)
    // Never waited for inside a slot: a niced lane behind many long texts would hold every slot.
    // The lane full: the strings come back later, without an attempt counted against them.
    if (!deps.detach(() => runAndSettle(pipeline, long.jobs, long.items, log), long.jobs, long.weight)) {
      log.info({ strings: long.jobs.length, delayMs: LANE_FULL_DELAY_MS }, 'the long-text lane holds as much as it may; these long strings come back later')
      deps.retryLater(long.jobs, LANE_FULL_DELAY_MS)
    }
    if (short.jobs.length === 0) return
    try {
      await runAndSettle(pipeline, short.jobs, short.items, log)
    } catch (error) {
      throw new PartFailed(error, short.jobs)
    }
  }

  /** Invalid events parked at the service with "", unless a newer revision arrived elsewhere (BullMQ). */
  async function parkInvalid(invalid: Job[]): Promise<void> {
    const newer = deps.newerArrived ? await newerOf(invalid, deps.log) : undefined
    for (const job of invalid) {
      if (newer?.has(job)) await deps.superseded(job)
      else deps.reporter.add({ job, port: '' })
    }
  }

  /** Run the pipeline over items and hand each outcome on; a failed run is retried. */
  async function runAndSettle(pipeline: Pipeline, jobs: Job[], items: Item[], log: Logger): Promise<void> {
    let results: Awaited<ReturnType<Pipeline['run']>>
    try {
      results = await pipeline.run(items, { signal: deps.signal })
    } catch (error) {
      // Stopped by the worker's shutdown: no attempt counted, nothing parked; the strings stay in
      // the journal for the next start.
      if (deps.signal.aborted) return
      log.error({ err: error }, 'pipeline run failed')
      const reason = `pipeline failed: ${(error as Error).message}`
      return giveUpOrRetry(jobs, (out) => park(out, reason))
    }
    // Stopped by the shutdown while it ran: a check that honours the strings' signal (ai-proofread's
    // request) failed on it, and on-error would send them out as "" (TODO at the service, until a
    // manager's Resend). Nothing of such a run is reported: the strings stay in the journal.
    if (deps.signal.aborted) return
    await settle(pipeline, jobs, items, results, log)
  }

  /** Those a newer revision arrived for elsewhere; none when that cannot be read now (logged). */
  async function newerOf(jobs: Job[], log: Logger): Promise<ReadonlySet<Job> | undefined> {
    try {
      return await deps.newerArrived!(jobs)
    } catch (error) {
      log.warn({ err: error }, 'could not read which strings have a newer revision; their outcomes are reported')
      return undefined
    }
  }

  /** Each string's result: to the reporter, or tried again, or parked once its retries ran out. */
  async function settle(pipeline: Pipeline, jobs: Job[], items: Item[], results: Awaited<ReturnType<Pipeline['run']>>, log: Logger): Promise<void> {
    if (log.isLevelEnabled('debug')) logRun(log, pipeline, jobs, results)
    const retry: Job[] = []
    const newer = deps.newerArrived ? await newerOf(jobs, log) : undefined
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!
      const result = results[i]
      // A newer revision arrived while this one ran (a long run may take a while), or while it
      // waited out a back-off: its outcome must not overwrite the newer one's at the service.
      if (!deps.isCurrent(job) || newer?.has(job)) await deps.superseded(job)
      else if (!result || result.retry) retry.push(job)
      else deps.reporter.add({ job, port: result.port, review: reviewOf(pipeline, result, { source: job.string.text, translation: items[i]!.translation }), ...(items[i]!.translation !== undefined ? { on: { translation: items[i]!.translation, plurals: items[i]!.plurals } } : {}) })
    }
    if (retry.length) {
      const exhausted: Job[] = []
      const again: Job[] = []
      for (const job of retry) (job.attempts + 1 >= deps.maxAttempts ? exhausted : again).push(job)
      // A string whose retries ran out is parked at the service as TODO (output ""), visible to
      // managers, rather than left waiting forever.
      for (const job of exhausted) {
        log.warn({ string: job.stringId, delivery: job.batchId }, 'pipeline asked for a retry too many times; parking the string as TODO')
        deps.reporter.add({ job, port: '' })
      }
      if (again.length) await giveUpOrRetry(again, (out) => park(out, 'pipeline asked for a retry'))
    }
  }
}

const stringIdOf = (j: Job) => j.stringId

/** A group's strings parted: those of the long-text lane (and their characters), and the others. */
function apartLong(jobs: Job[], items: Item[], isLong: ((item: Item) => boolean) | undefined) {
  const long = { jobs: [] as Job[], items: [] as Item[], weight: 0 }
  const short = { jobs: [] as Job[], items: [] as Item[] }
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    const to = isLong?.(item) ? long : short
    to.jobs.push(jobs[i]!)
    to.items.push(item)
    if (to === long) long.weight += textChars(item)
  }
  return { long, short }
}

/** At debug level, each run: its pipeline, strings, deliveries and outputs. */
function logRun(log: Logger, pipeline: Pipeline, jobs: Job[], results: Awaited<ReturnType<Pipeline['run']>>): void {
  const ports: Record<string, number> = {}
  for (const r of results) ports[r.port || '(parked)'] = (ports[r.port || '(parked)'] ?? 0) + 1
  log.debug({ pipeline: pipeline.key, strings: jobs.length, deliveries: [...new Set(jobs.map((j) => j.batchId))], ports }, 'pipeline run')
}
