// The composition root of `switchyard serve`: it only wires the stages of a string's path
// (docs: reliability.md) behind the HTTP app, and stops them in order:
//   receive-webhook (verify, decode) -> Intake (de-duplicate, journal, queue) -> WorkQueue ->
//   process-jobs (recheck, pipeline) -> Reporter (PATCH) -> Outcomes (journal, counts), then the
//   findings stage (findings log, issues at the service), with HeldOrganizations for strings that
//   can't be reported now and the Reconciler beside them.
import path from 'node:path'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type Router from '@koa/router'
import type { Config } from './config/load-config.js'
import type { PipelineSet, PipelineSource } from './engine/pipeline.js'
import type { Item } from './engine/types.js'
import { FindingsLog, type FindingsEntry } from './findings/findings-log.js'
import { createFindingsStage, type FindingsStage } from './findings/findings-stage.js'
import { IssueSender, LATE_LANDING_MS } from './findings/issue-sender.js'
import { ApiClient } from './platform/api-client.js'
import { byDomain, createDomainResolver, createRebinder, type OrganizationDirectory, type Rebinder } from './platform/organization-domains.js'
import { Reporter } from './platform/reporter.js'
import type { TokenProvider } from './platform/token-provider.js'
import { Backlog, type BacklogView, heldDecision, releasedAsDecided } from './queue/backlog.js'
import type { BullmqJournal } from './queue/bullmq-journal.js'
import { Dedupe } from './queue/dedupe.js'
import { HeldOrganizations } from './queue/held-organizations.js'
import { ALIVE_EVERY_MS, Intake } from './queue/intake.js'
import type { IntakeJournal } from './queue/intake-journal.js'
import { Journal } from './queue/journal.js'
import { createOutcomes, type Outcomes } from './queue/outcomes.js'
import { createJobProcessor, type ProcessDeps, type StepSettingsLookup } from './queue/process-jobs.js'
import { Reconciler } from './queue/reconcile.js'
import { takenTogether } from './queue/taken-together.js'
import { WorkQueue } from './queue/work-queue.js'
import { createApp } from './server/app.js'
import { createHealth } from './server/health.js'
import { listen } from './server/listen.js'
import { WEBHOOK_MODULE_KEY, renderManifest } from './server/manifest.js'
import type { ScanFilter, Stores } from './store/create-stores.js'
import type { Logger } from './util/logger.js'
import { boundedLabels, createMetrics, type Metrics } from './util/metrics.js'
import { createDecodePool } from './webhooks/decode-pool.js'
import { createWebhookHandler } from './webhooks/receive-webhook.js'
import { removeLeftBodies } from './webhooks/large-body.js'
import type { OtherEvent } from './protocol/service-events.js'
import type { BatchOrigin } from './queue/job-codec.js'
import type { Decision } from './protocol/decision.js'
import type { Job } from './protocol/job.js'
import { createCheckedReport } from './queue/checked-report.js'

export type { PipelineSource } from './engine/pipeline.js'

export type { OrganizationDirectory }

export interface WorkerDeps {
  config: Config
  log: Logger
  stores: Stores
  pipelines: PipelineSource
  tokens: TokenProvider & OrganizationDirectory
  settings?: StepSettingsLookup
  routers?: Router[]
  fetch?: typeof fetch
  metrics?: Metrics
  /** How often held strings are looked at (ms); each organization is tried again on its own back-off. */
  heldRecheckMs?: number
  /** First wait before the journal's replay is tried again after a failure (ms; default 1000, doubling up to REPLAY_RETRY_MAX_MS). */
  replayRetryMs?: number
  /** When the first findings-log sweep runs after start (ms; FIRST_FINDINGS_SWEEP_MS, a quarter more or less). */
  firstFindingsSweepMs?: number
  /** How often it runs after the first (ms; FINDINGS_SWEEP_MS). */
  findingsSweepMs?: number
  /** How old an entry of the findings log must be before a sweep takes up what it owes (ms; tests). */
  issuesCatchUpAfterMs?: number
  /** First back-off of a held organization (ms); it doubles up to a minute. */
  heldBaseDelayMs?: number
  /** QUEUE=bullmq: how often held strings in Redis are looked at by an instance that does not hold them (ms; default 10 x heldRecheckMs). */
  heldSweepMs?: number
  /** The findings log (shared with the operator routes); default: one on `stores.findings`. */
  findings?: FindingsLog
}

/**
 * How often the findings log is swept of expired strings and trimmed to FINDINGS_MAX; each sweep
 * also catches up on the issues its entries say are owed (IssueSender.catchUp). The first sweep
 * runs about FIRST_FINDINGS_SWEEP_MS after start (a quarter more or less, at random), so that what
 * a restart lost is taken up.
 */
export const FINDINGS_SWEEP_MS = 60 * 60_000
export const FIRST_FINDINGS_SWEEP_MS = 5 * 60_000

export function findingsLogFor(config: Pick<Config, 'findingsRetentionDays' | 'findingsMax'>, stores: Pick<Stores, 'findings' | 'setMany' | 'scan'>): FindingsLog {
  return new FindingsLog(stores.findings, {
    retentionMs: config.findingsRetentionDays * 86_400_000,
    maxStrings: config.findingsMax,
    setMany: (entries, ttlMs) => stores.setMany('findings', entries, ttlMs),
    ...(stores.scan ? { scan: (prefixes: string[], filter?: ScanFilter) => stores.scan!('findings', prefixes, filter) } : {}),
  })
}

export interface Worker {
  url: string
  server: Server
  metrics: Metrics
  queue: WorkQueue
  journal: IntakeJournal
  /** The backlog on disk (the local journal; undefined with QUEUE=bullmq, where Redis holds it). */
  backlog?: Backlog
  /** The backlog per organization, on disk or (QUEUE=bullmq) in Redis. */
  backlogList(): BacklogView[]
  held: HeldOrganizations
  reporter: Reporter
  api: ApiClient
  findings: FindingsLog
  issues: IssueSender
  /** Wait for findings log writes and issue requests under way. */
  findingsIdle(): Promise<void>
  /** Counts for tests and the operator. */
  /** `retrying`: strings in memory waiting out a back-off with their room in the window given back (outside `depth`). */
  stats(): { depth: number; retrying: number; journal: number; parked: number; held: number; patches: number; backlog: number }
  /** Replay of the journal finished. */
  replayed: Promise<void>
  /** Run the reconciliation sweep once now. */
  reconcile(): Promise<{ orphans: number; checked: number; queuedElsewhere?: number }>
  /** Sweep the findings log once now (and catch up on the issues it owes): what the hourly timer runs. */
  sweepFindings(): Promise<{ strings: number; removed: number; caughtUp: number }>
  /** Wait until every accepted string has been reported or parked (held strings aside). */
  idle(timeoutMs?: number): Promise<void>
  stop(options?: { deadlineMs?: number }): Promise<void>
}

/** The longest wait between two tries of the journal's replay. */
export const REPLAY_RETRY_MAX_MS = 30_000

/**
 * `replay`, tried again after each failure (the delay doubling from `firstDelayMs`, up to
 * REPLAY_RETRY_MAX_MS) until it succeeds or `stopped` aborts; undefined if it never succeeded.
 */
export async function replayUntilDone<T>(replay: () => Promise<T>, log: Logger, stopped: AbortSignal, firstDelayMs: number): Promise<T | undefined> {
  for (let attempt = 1, delay = firstDelayMs; !stopped.aborted; attempt++, delay = Math.min(delay * 2, REPLAY_RETRY_MAX_MS)) {
    try {
      return await replay()
    } catch (error) {
      if (stopped.aborted) break
      log.error(
        { err: error, attempt, retryInMs: delay },
        'journal replay failed (is the store reachable?); trying again: what the last run left waits on disk until it goes through, and new webhooks are still journaled',
      )
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay)
        function done() {
          clearTimeout(timer)
          stopped.removeEventListener('abort', done)
          resolve()
        }
        stopped.addEventListener('abort', done, { once: true })
      })
    }
  }
  return undefined
}

/** Parked strings a retry reads from the journal at a time (the memory they take while retried). */
export const PARKED_RETRY_PAGE = 2000

/**
 * Parked strings (a refusal with no rule of its own, or no pipeline for their module key) are
 * tried again every `everyMs` (PARKED_RETRY_MS), each checked with the service first, as a start
 * does: the service still waits for them, and what refused them may have been for a while (a
 * conflict, a lock, a pipeline since declared). Those refused again are parked again until the
 * next retry. The first comes `everyMs` after the start (and not before the start's replay, which
 * retries them all, is done).
 */
export function retryParkedEvery(everyMs: number, replayed: Promise<unknown>, retry: () => Promise<number>, log: Logger, closing: () => boolean): { stop(): void } {
  let running = false
  const timer = setInterval(() => {
    if (running || closing()) return
    running = true
    void replayed
      .then(() => (closing() ? 0 : retry()))
      .then(
        (strings) => {
          if (strings) log.info({ strings, nextInMs: everyMs }, 'parked strings are tried again (each checked with the service first); those refused again stay parked until the next retry')
        },
        (error: unknown) => log.warn({ err: error, nextInMs: everyMs }, 'the retry of parked strings failed (is the store reachable?); they stay parked until the next one'),
      )
      .finally(() => {
        running = false
      })
  }, everyMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}

/** The reconciliation sweep (RECONCILE_INTERVAL_MS) and the retry of parked strings (PARKED_RETRY_MS), each unless 0. */
function startPeriodic(config: Config, reconcile: () => Promise<unknown>, replayed: Promise<unknown>, retryParked: () => Promise<number>, log: Logger, closing: () => boolean): { stop(): void } {
  const reconcileTimer = config.reconcileIntervalMs > 0 ? setInterval(() => void reconcile(), config.reconcileIntervalMs) : undefined
  reconcileTimer?.unref()
  const parkedRetry = config.parkedRetryMs > 0 ? retryParkedEvery(config.parkedRetryMs, replayed, retryParked, log, closing) : undefined
  return {
    stop() {
      if (reconcileTimer) clearInterval(reconcileTimer)
      parkedRetry?.stop()
    },
  }
}

function bullmqOptions(config: Config, log: Logger) {
  const redisUrl = config.queueRedisUrl || (/^rediss?:/.test(config.storeUrl) ? config.storeUrl : '')
  if (!redisUrl) throw new Error('QUEUE=bullmq needs Redis: set QUEUE_REDIS_URL, or a redis:// STORE_URL')
  return {
    redisUrl,
    name: config.queueName,
    concurrency: config.queueConcurrency,
    attempts: Math.max(1, config.apiMaxAttempts),
    backoffMs: 1000,
    lockMs: config.queueLockMs,
    dedupeTtlMs: config.dedupeTtlMs,
    dedupeMax: config.dedupeMax,
    maxBytes: config.backlogMaxMb * 2 ** 20,
    organizationShare: config.backlogOrganizationShare / 100,
    log: log.child({ part: 'bullmq' }),
  }
}

/** Key of the bounded activity log (other events) in the `activity` store. */
export const ACTIVITY_KEY = 'recent'
const ACTIVITY_MAX = 200

/** The recent other events, for the operator (one write per batch), and the pipelines' event handlers. */
function otherEventsHandler(deps: { stores: Stores; log: Logger; queue: WorkQueue; pipelines: () => PipelineSet; signal: AbortSignal }) {
  // One read-modify-write of the list at a time in this process (two deliveries at once would
  // both read the same list, and the second write drop the first's events): entries wait in
  // `queued` (the newest ACTIVITY_MAX at most) while a write is under way and go in the next one,
  // so a slow or hung store holds one write and a bounded list. Replicas sharing the store can
  // still overwrite each other's latest entries: the list is the operator's view, not a record.
  let queued: unknown[] = []
  let writing = false
  const write = async (): Promise<void> => {
    const { stores, log } = deps
    writing = true
    try {
      while (queued.length) {
        const entries = queued
        queued = []
        try {
          const recent = ((await stores.activity.get(ACTIVITY_KEY)) as unknown[] | undefined) ?? []
          await stores.activity.set(ACTIVITY_KEY, [...entries, ...recent].slice(0, ACTIVITY_MAX))
        } catch (error) {
          log.warn({ err: error, events: entries.length }, 'could not write the recent events for the operator page; the delivery is accepted all the same')
        }
      }
    } finally {
      writing = false
    }
  }
  return async (events: OtherEvent[], origin: BatchOrigin) => {
    const { log, queue, pipelines } = deps
    const entries = events.map((e) => ({ at: new Date().toISOString(), event: e.event, organizationId: origin.organizationId, domain: origin.domain, batchId: origin.batchId }))
    // The operator's view only: a store that fails here costs the delivery nothing (its strings
    // are journaled; a 500 would spend one of the service's few retries) nor the handlers below,
    // and the answer does not wait for it. The latest delivery first, as the list keeps them.
    queued = [...entries, ...queued].slice(0, ACTIVITY_MAX)
    if (!writing) void write()
    const subscribed = new Set(pipelines().events())
    for (const e of events) {
      if (!subscribed.has(e.event)) continue
      void queue.runTask(async () => {
        try {
          await pipelines().dispatchEvent({ event: e.event, payload: e as Record<string, unknown>, organizationId: origin.organizationId, domain: origin.domain, log: log.child({ event: e.event, batch: origin.batchId }), signal: deps.signal })
        } catch (error) {
          log.error({ err: error, event: e.event }, 'event handler failed')
        }
      })
    }
  }
}

/**
 * Strings waiting out a back-off before their next pipeline run, per organization (domain). They
 * go when their timer fires; those waiting because their organization's API failed (`early`) also
 * when an API request for the organization succeeds: all at once, but for those the service asked
 * to wait longer (a Retry-After), which keep their time. A pipeline's own retry (its plugin's
 * upstream busy, say) waits its whole back-off: the service's API answering says nothing of it.
 */
export function createRetries(deps: { timers: Set<NodeJS.Timeout>; closing(): boolean; push(jobs: Job[], roomGiven: boolean): void; drained?(domain: string): void }) {
  interface Entry { jobs: Job[]; notBefore: number; roomGiven: boolean; early: boolean }
  const waiting = new Map<string, Map<NodeJS.Timeout, Entry>>()
  /** Strings that gave their room back, per organization (domain), and in all. */
  const giving = new Map<string, number>()
  let given = 0
  let total = 0
  const go = (domain: string, t: NodeJS.Timeout) => {
    const byTimer = waiting.get(domain)
    const entry = byTimer?.get(t)
    clearTimeout(t)
    deps.timers.delete(t)
    byTimer?.delete(t)
    if (byTimer && byTimer.size === 0) waiting.delete(domain)
    if (!entry) return
    total -= entry.jobs.length
    if (entry.roomGiven) {
      given -= entry.jobs.length
      const left = (giving.get(domain) ?? 0) - entry.jobs.length
      if (left > 0) giving.set(domain, left)
      else giving.delete(domain)
    }
    if (!deps.closing()) deps.push(entry.jobs, entry.roomGiven)
    // Its organization may take from the disk again (after the push: their room is taken first).
    if (entry.roomGiven && !giving.has(domain)) deps.drained?.(domain)
  }
  return {
    /**
     * `roomGiven`: their room in the window was given back; they take it again when they go.
     * `early`: they may go when their organization's API answers again (`release`).
     */
    add(jobs: Job[], delayMs: number, notBeforeMs = 0, roomGiven = false, early = true) {
      const domain = jobs[0]?.domain ?? ''
      const t = setTimeout(() => go(domain, t), delayMs)
      t.unref()
      deps.timers.add(t)
      let byTimer = waiting.get(domain)
      if (!byTimer) waiting.set(domain, (byTimer = new Map()))
      byTimer.set(t, { jobs, notBefore: Date.now() + notBeforeMs, roomGiven, early })
      total += jobs.length
      if (roomGiven) {
        giving.set(domain, (giving.get(domain) ?? 0) + jobs.length)
        given += jobs.length
      }
    },
    /** Strings of the organization waiting out a back-off with their room given back. */
    givingFor(domain: string): number {
      return giving.get(domain) ?? 0
    },
    /** Strings waiting with their room given back, of every organization. */
    get given(): number {
      return given
    },
    /** Strings waiting out a back-off, of every organization. */
    get waiting(): number {
      return total
    },
    release(domain: string) {
      const byTimer = waiting.get(domain)
      if (!byTimer) return
      const now = Date.now()
      for (const [t, entry] of [...byTimer]) if (entry.early && entry.notBefore <= now) go(domain, t)
    },
    /** Forget every waiting string (the worker stopped; they are in the journal). */
    clear() {
      for (const byTimer of waiting.values()) for (const t of byTimer.keys()) clearTimeout(t)
      waiting.clear()
      giving.clear()
      given = 0
      total = 0
    },
  }
}

interface Parts {
  journal: IntakeJournal
  shared?: BullmqJournal
  backlog?: Backlog
  api: ApiClient
  queue: WorkQueue
  reporter: Reporter
  /** A decision reported apart from its run: superseded when a newer revision of its string is known. */
  reportChecked(decision: Decision): void
  /** reportChecked for a held decision, under its organization's domain now. */
  reportRebound(decision: Decision, failed?: (error: unknown) => void): void
  /**
   * Strings held under the domain (in Redis, whoever held them) belong to an organization that has
   * another domain now: the organization bound to the domain, or the domain standing for an
   * organization's id (one not connected when they arrived).
   */
  movedAway(domain: string, organization?: string): Promise<boolean>
  held: HeldOrganizations
  outcomes: Outcomes
  intake: Intake
  reconciler: Reconciler
  findings: FindingsLog
  issues: IssueSender
  findingsStage: FindingsStage
  /** Strings waiting out a back-off, outside the window (createRetries). */
  retries: { readonly waiting: number; readonly given: number; clear(): void }
}

/**
 * Held domains' token checks that know of moves: strings held under a domain their organization
 * no longer has are let go at once (they run under its domain now; a token for the old domain
 * would never come), and the release is told so (`letGoForMove`, asked once, as it releases).
 */
function heldDomainChecks(domains: Rebinder, tokens: TokenProvider) {
  const moved = new Set<string>()
  return {
    canReport: async (domain: string, organizations: readonly string[]): Promise<boolean> => {
      if (await domains.moved(domain, organizations)) return (moved.add(domain), true)
      moved.delete(domain)
      return (await tokens.getAccessToken(domain), true)
    },
    letGoForMove: (domain: string): boolean => moved.delete(domain),
  }
}

/**
 * A held decision back from the disk or Redis (its room in the window taken): under its
 * organization's domain now, then checked and reported. Should that fail, its room is given back
 * (`giveRoom`) and `failed` told (it stays in the journal; BullMQ's copy is failed back to BullMQ).
 */
export function reboundReport(domains: Pick<Rebinder, 'rebind'>, reportChecked: (d: Decision) => void, giveRoom: () => void, log: Logger) {
  return (d: Decision, failed?: (error: unknown) => void): void => {
    void domains.rebind([d.job])
      .then(() => reportChecked(d))
      .catch((error: unknown) => {
        log.error({ err: error, string: d.job.stringId }, 'reporting a held decision failed; the string stays in the journal')
        giveRoom()
        failed?.(error)
      })
  }
}

/**
 * For reconciliation: the strings acknowledged outside the window (in Redis, or on disk in the
 * backlog) but those of held organizations, and the held organizations' domains.
 */
function outsideWindow(shared: BullmqJournal | undefined, backlog: Backlog | undefined, held: HeldOrganizations) {
  if (shared) return { queued: async () => (await shared.backlog()) - shared.held, heldDomains: () => new Set(shared.heldPerDomain().keys()) }
  const heldDomains = () => new Set([...(backlog?.waitingPerDomain().keys() ?? [])].filter((d) => held.cause(d) !== undefined))
  const queued = async () => {
    let n = 0
    for (const [domain, waiting] of backlog?.waitingPerDomain() ?? []) if (held.cause(domain) === undefined) n += waiting
    return n
  }
  return { queued, heldDomains, where: 'on disk' }
}

/**
 * A status update goes out: from now on an arrival of its strings (same revision) is kept, not
 * absorbed; in this process's memory, or with QUEUE=bullmq in Redis, which every instance reads.
 */
function markSending(dedupe: Dedupe, shared: BullmqJournal | undefined): (decisions: Decision[]) => void | Promise<void> {
  return (decisions) => {
    if (shared) return shared.sending(decisions.map((d) => d.job))
    for (const d of decisions) dedupe.sending(d.job, d.job.revision)
  }
}

/** The stages of a string's path, wired to each other (no HTTP yet). */
async function createParts(deps: WorkerDeps, metrics: Metrics, shutdown: AbortSignal, timers: Set<NodeJS.Timeout>, closing: () => boolean): Promise<Parts> {
  const { config, log, tokens } = deps
  // BullMQ (and ioredis) load only when asked for: ~23 MB a single instance doesn't need.
  const shared = config.queue === 'bullmq' ? new (await import('./queue/bullmq-journal.js')).BullmqJournal(bullmqOptions(config, log)) : undefined
  const local = shared ? undefined : new Journal(deps.stores.journal, deps.stores.extract && ((key, paths) => deps.stores.extract!('journal', key, paths)), deps.stores.scan && ((prefixes, filter) => deps.stores.scan!('journal', prefixes, filter)))
  const journal: IntakeJournal = shared ?? local!
  const dedupe = new Dedupe(config.dedupeTtlMs, Date.now, config.dedupeMax, undefined, (job) => intake.released(job as Job))
  const api = new ApiClient({
    config, tokens, log, fetch: deps.fetch,
    observer: {
      request: ({ route, status, ms, domain }) => {
        metrics.apiLatency.observe({ route, status: String(status) }, ms / 1000)
        // The API answers again: strings waiting out a back-off for this organization go now,
        // rather than leave the window idle for up to a minute after an outage.
        if (status >= 200 && status < 300) {
          retries.release(domain)
          shared?.bringForward(domain)
        }
      },
      retry: ({ reason }) => metrics.apiRetries.inc({ reason: reason === 'network' ? 'network' : reason === '429' ? '429' : '5xx' }),
    },
  })
  // Strings waiting out a back-off leave their room in the window to the other organizations
  // (retryLater below) and take it again when they go; meanwhile their organization takes nothing
  // more from the disk (the backlog's isHeld), so they stay within what the window held.
  const retries = createRetries({
    timers, closing,
    push: (jobs, roomGiven) => {
      if (roomGiven) queue.reserve(jobs.length)
      queue.push(jobs)
    },
    drained: () => backlog?.kick(),
  })
  // Strings keep the domain they arrived under while they wait; they run, or their held decision is
  // reported, under the one their organization has then (createRebinder).
  const domains = createRebinder(tokens, log, (domain, organization) => held.movedAway(domain, organization))
  const checks = heldDomainChecks(domains, tokens)
  const held = new HeldOrganizations({
    log,
    baseDelayMs: deps.heldBaseDelayMs,
    canReport: checks.canReport,
    // Its line of the backlog is served again; with BullMQ, a chunk of its strings goes back from
    // Redis to the queue as a probe (the rest once a report goes through; should that fail, the
    // sweep of held strings tries again), or all of them if its organization moved.
    release: (domain) => {
      const moved = checks.letGoForMove(domain)
      if (shared) releaseHeld(domain, !moved)
      else backlog?.kick()
    },
    // What the operator sees held: the organization's strings waiting on disk (its line of the
    // backlog), or held in Redis with BullMQ (its hash, at the last refresh, about a second old).
    waiting: (): ReadonlyMap<string, number> => (shared ? shared.heldPerDomain() : (backlog?.waitingPerDomain() ?? new Map<string, number>())),
  })
  const findings = deps.findings ?? findingsLogFor(config, deps.stores)
  const issues = new IssueSender({
    api, findings, log: log.child({ part: 'issues' }), concurrency: config.commentsMaxInFlight, count: (outcome, n) => metrics.issues.inc({ outcome }, n),
    // A POST's answer can be lost as late as its timeout after it left; the service may go on after.
    lateLandingMs: Math.max(LATE_LANDING_MS, 2 * config.apiTimeoutMs),
    ...(deps.issuesCatchUpAfterMs !== undefined ? { catchUpAfterMs: deps.issuesCatchUpAfterMs } : {}),
  })
  const checkLabel = boundedLabels(200)
  const findingsStage = createFindingsStage({
    findings, issues, log,
    countFinding: (check, severity) => metrics.findings.inc({ check: checkLabel(check), severity }),
    failed: () => metrics.findingsLogFailures.inc(),
  })
  /** QUEUE=bullmq: put held strings of the organization back in the queue (or a chunk, as a probe). */
  const releaseHeld = (domain: string, probe = false) => {
    void shared?.release(domain, { probe }).catch((error: unknown) => log.warn({ err: error, domain }, 'could not put the held strings back in the queue; tried again later'))
  }
  // The findings stage runs after the status was accepted and is never awaited by it.
  const reported = async (d: Parameters<Outcomes['reporterHooks']['reported']>[0]) => {
    await outcomes.reporterHooks.reported(d)
    findingsStage.reported(d)
    // A report went through: the organization's strings still held in Redis (the rest after a
    // probe, or held by an instance that is gone) all go back now.
    const domain = d[0]?.job.domain
    if (domain !== undefined && shared?.holdsInRedis(domain) && held.cause(domain) === undefined) releaseHeld(domain)
  }
  const reporter = new Reporter({ api, log, lingerMs: config.reportLingerMs, holding: (domain) => held.cause(domain), hooks: { sending: markSending(dedupe, shared), reported, superseded: (d) => outcomes.reporterHooks.superseded(d), rejected: (d, r, g) => outcomes.reporterHooks.rejected(d, r, g), dropped: (d, r) => outcomes.reporterHooks.dropped(d, r), parked: (d, r) => outcomes.reporterHooks.parked(d, r), held: (d, r, c, after, landed) => outcomes.reporterHooks.held(d, r, c, after, landed) } })
  const queue: WorkQueue = new WorkQueue({
    concurrency: config.concurrency,
    limit: config.queueLimit,
    process: async (group) => {
      await domains.rebind(group)
      // (A group is one stamped domain's; two organizations that shared it may have parted.)
      for (const jobs of byDomain(group)) {
        const j = jobs[0]!
        // Its organization is held: straight to the backlog on disk, without a settings read, a token read
        // or a pipeline run per group; it is tried again on its own back-off.
        const cause = held.cause(j.domain)
        if (cause) await outcomes.holdJobs(jobs, 'the organization is held', cause)
        else {
          reconciler.seen(j)
          await processJobs(jobs)
        }
      }
    },
    onError(error, jobs) {
      log.error({ err: error, strings: jobs.length }, 'processing failed unexpectedly; the strings will be tried again')
      const t = setTimeout(() => queue.push(jobs), 5000)
      t.unref()
      timers.add(t)
    },
    onRoom: () => backlog?.kick(),
  })
  const backlog = local
    ? new Backlog({ journal: local, queue, dedupe, log, isHeld: (domain) => held.cause(domain) !== undefined || retries.givingFor(domain) > 0, report: (d) => reportRebound(d), maxBytes: config.backlogMaxMb * 2 ** 20, organizationShare: config.backlogOrganizationShare / 100, downstream: () => findingsStage.pending() })
    : undefined
  // Held strings wait on disk (the backlog); with BullMQ, in Redis apart from the queue.
  const stash = async (jobs: Job[]) => {
    if (backlog) return backlog.stash(jobs)
    await shared!.hold(jobs, held.retryAt(jobs[0]!.domain) ?? Date.now())
  }
  const isCurrent = (job: Job) => dedupe.isCurrent(job, job.revision)
  // With BullMQ a newer revision may have arrived at another instance: Redis knows.
  const newerArrived = shared ? { newerArrived: (jobs: Job[]) => shared.newerArrived(jobs) } : {}
  // Decisions reported apart from their run (a refused output sent again as "", a held string back
  // with its output decided) leave as superseded when a newer revision of the string is known.
  const reportChecked = createCheckedReport({ isCurrent, ...newerArrived, superseded: (job) => outcomes.superseded(job), report: (d) => reporter.add(d), log })
  const reportRebound = reboundReport(domains, reportChecked, () => queue.finish(1), log)
  const outcomes = createOutcomes({ journal, dedupe, queue, held, metrics, log, report: reportChecked, stash })
  const reconciler = new Reconciler({
    api, dedupe, metrics, log,
    outsideWindow: outsideWindow(shared, backlog, held), parked: () => journal.parked,
  })
  const processJobs = createJobProcessor({
    pipelines: () => deps.pipelines.current,
    settings: deps.settings,
    api,
    reporter,
    log,
    maxAttempts: Math.max(1, config.apiMaxAttempts),
    signal: shutdown,
    isCurrent,
    ...newerArrived,
    superseded: outcomes.superseded,
    absorbed: outcomes.absorbed,
    park: outcomes.park,
    hold: outcomes.holdJobs,
    drop: outcomes.drop,
    reentered: (n) => metrics.rechecks.inc({ status: 'NEED_PROCESS' }, n),
    retryLater: retryLaterFor({ shared, queue, retries, metrics }),
    countRun: (key) => metrics.pipelineRuns.inc({ pipeline: key }),
    ...(deps.pipelines.isLong ? { isLong: (item: Item) => deps.pipelines.isLong!(item), detach: (task: () => Promise<void>, jobs: Job[], weight: number) => queue.detach(task, jobs, weight) } : {}),
  })
  const intake = new Intake({ dedupe, queue, local: local && { journal: local, backlog: backlog! }, shared })
  const movedAway = (domain: string, organization?: string) => (organization ? domains.moved(domain, [organization]) : domains.movedAway(domain))
  return { journal, shared, backlog, api, queue, reporter, reportChecked, reportRebound, movedAway, held, outcomes, intake, reconciler, findings, issues, findingsStage, retries }
}

/** A processor's strings to be tried again later: where they wait, and whose room they keep. */
function retryLaterFor({ shared, queue, retries, metrics }: Pick<Parts, 'shared' | 'queue'> & { retries: ReturnType<typeof createRetries>; metrics: Metrics }): ProcessDeps['retryLater'] {
  return (jobs, delayMs, notBeforeMs, apiFailed) => {
    metrics.jobs.inc({ outcome: 'retried', port: '' }, jobs.length)
    // Their organization's API failed: their room goes to the other organizations (added first,
    // so that it goes to another, not to more of this one's strings from the disk), as long as
    // the strings so waiting stay within a window's worth (memory: at most twice QUEUE_LIMIT).
    // Other retries (a pipeline's, the long-text lane full) keep their room, as their
    // organization's other strings still run.
    // With BullMQ every such string goes back to it meanwhile (its delayed set), which frees its
    // slot there: a BullMQ slot is the instance's, not its organization's. Those whose API
    // failed come back early when it answers again.
    if (shared) {
      queue.finish(jobs.length)
      void shared.delay(jobs, delayMs, notBeforeMs, apiFailed === true)
      return
    }
    const give = apiFailed === true && retries.given + jobs.length <= queue.limit
    retries.add(jobs, delayMs, notBeforeMs, give, apiFailed === true)
    if (give) queue.finish(jobs.length)
  }
}

/** How long a webhook request under way when the listener closes may take to be answered (ms). */
const LISTENER_GRACE_MS = 2000
/** How long the journal waits, after that, for accepts still writing to it (ms). */
const SETTLE_MS = 5000

/**
 * The listener stayed open while the worker drained; it closes now. Idle connections close at
 * once; a request under way gets a moment to be journaled and answered, then its connection is
 * cut (a batch not answered is delivered again: a repeat, absorbed). Only then are batches
 * refused, and this waits for the accepts still writing to the journal, which closes next.
 */
async function closeListener(server: Server, intake: Intake, log: Logger): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  await Promise.race([closed, new Promise<void>((r) => setTimeout(r, LISTENER_GRACE_MS).unref())])
  server.closeAllConnections?.()
  intake.close()
  await closed
  // An accept whose store never answers (Redis gone) must not hold the stop for ever; its
  // connection is cut already, so it can answer no one: the batch is delivered again.
  const settled = await Promise.race([intake.settled().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), SETTLE_MS).unref())])
  if (!settled) log.warn(`batches were still being journaled ${SETTLE_MS} ms after the listener closed; they were not acknowledged and the service delivers them again`)
}

/** Where webhook bodies too large for memory are written while they are read (large-body.ts). */
function incomingDir(config: Config): string {
  return path.resolve(config.dataDir, 'incoming')
}

/** The HTTP side: the webhook route in front of the intake, health, manifest and the extra routers. */
function createHttp(deps: WorkerDeps, parts: Parts, metrics: Metrics, state: { closing(): boolean; replaying(): boolean; signal: AbortSignal }) {
  const { config, log, stores, tokens } = deps
  const { journal, queue, held, intake } = parts
  const pipelines = () => deps.pipelines.current
  const decoder = createDecodePool({ threads: config.ingestThreads, idleMs: config.ingestThreadIdleMs, secrets: config.appSecrets, warn: (message) => log.warn(message), count: (where) => metrics.decodes.inc({ where }) })
  const webhook = createWebhookHandler({
    appSecrets: () => config.appSecrets,
    decoder,
    headerPrefix: config.headerPrefix,
    bodyLimit: config.bodyLimit,
    spool: { memoryLimit: config.bodyMemoryLimit, dir: incomingDir(config) },
    log,
    metrics,
    knownModuleKey: (key) => key === WEBHOOK_MODULE_KEY || pipelines().get(key) !== undefined,
    hasPipeline: (key) => pipelines().get(key) !== undefined,
    newBatchId: () => journal.newBatchId(),
    resolveDomain: createDomainResolver(tokens, log),
    accept: (batchId, jobs, encoded) => intake.accept(batchId, jobs, encoded),
    refusal: (organization, bytes) => intake.refusal(organization, bytes),
    otherEvents: otherEventsHandler({ stores, log, queue, pipelines, signal: state.signal }),
  })
  const health = createHealth({
    closing: state.closing,
    replaying: state.replaying,
    queue, journal, held, backlog: parts.backlog ?? parts.shared,
    organizations: tokens,
    storeReachable: () => stores.ping(),
    queueReachable: parts.shared ? () => parts.shared!.ping() : undefined,
    pipelinesLoaded: () => pipelines().all().length,
    pipelinesReady: () => deps.pipelines.ready?.() ?? true,
  })
  const app = createApp({
    log,
    metrics,
    webhook,
    manifest: () => renderManifest({ baseUrl: config.baseUrl, clientId: config.clientId, pipelines: pipelines().all(), events: pipelines().events(), scopes: config.oauthScopes }),
    logo: (key) => pipelines().get(key)?.logo,
    routers: deps.routers,
    health: health.health,
    ready: health.ready,
    unverifiedBodies: { max: config.unverifiedBodies, waitMs: config.unverifiedWaitMs },
    closing: state.closing,
    metricsToken: config.metricsToken || undefined,
  })
  return { app, decoder }
}

/**
 * QUEUE=bullmq: strings held in Redis that no live instance will let go of (the instance that held
 * them stopped, or a release failed) go back to the queue once their organization has a token:
 * every `everyMs`, a held domain this instance does not hold itself, past its holder's time to try
 * again by three sweeps, a chunk as a probe (each domain on its own, one check at a time). A
 * forbidden organization then runs once more and is held again here; one whose report goes
 * through has the rest released.
 */
export function sweepHeldInRedis(shared: Pick<BullmqJournal, 'heldDomains' | 'release'>, held: HeldOrganizations, tokens: TokenProvider, movedAway: (domain: string) => Promise<boolean>, log: Logger, closing: () => boolean, everyMs: number): { stop(): void } {
  let running = false
  // Domains whose token check or release has not ended: each on its own (one that hangs costs the
  // others nothing), never twice at once; a later sweep skips them until it ends.
  const busy = new Set<string>()
  const probe = async (domain: string) => {
    busy.add(domain)
    try {
      // A token, or an organization that has another domain now (its strings run under that one).
      const why = await tokens.getAccessToken(domain).then(() => 'token' as const, () => movedAway(domain).then((m) => (m ? ('moved' as const) : undefined), () => undefined))
      if (!why) return
      // Looked at again after the token's wait (up to API_TIMEOUT_MS): stopping, or held here meanwhile.
      if (closing() || held.cause(domain) !== undefined) return
      // A probe: a forbidden organization has a token too. Once one of its reports goes through,
      // the rest follows (see `reported`). Strings of a domain their organization has left go all
      // at once: they are reported under the new domain, so no report of this one ever comes to
      // release the rest (it would trickle out a chunk per sweep).
      await shared.release(domain, { probe: why === 'token' })
    } catch (error) {
      log.warn({ err: error, domain }, 'could not release held strings from Redis; tried again later')
    } finally {
      busy.delete(domain)
    }
  }
  const sweep = async () => {
    if (running) return
    running = true
    try {
      for (const h of await shared.heldDomains()) {
        if (closing()) return
        if (busy.has(h.domain) || held.cause(h.domain) !== undefined || Date.now() < h.retryAt + 3 * everyMs) continue
        void probe(h.domain)
      }
    } catch (error) {
      log.warn({ err: error }, 'could not look for held strings in Redis; tried again later')
    } finally {
      running = false
    }
  }
  const first = setTimeout(() => void sweep(), Math.min(everyMs, 1000))
  const timer = setInterval(() => void sweep(), everyMs)
  first.unref()
  timer.unref()
  return { stop: () => (clearTimeout(first), clearInterval(timer)) }
}

/**
 * Mark the journal alive; warn once per other process found marking it too (`seen`: those warned
 * of): with QUEUE=memory on a shared store, a replica that starts replays every entry not its
 * own, a live one's included.
 */
export async function markAlive(journal: IntakeJournal, log: Logger, seen: Set<string>): Promise<void> {
  try {
    const other = (await journal.markAlive?.())?.other
    if (other === undefined || seen.has(other)) return
    seen.add(other)
    log.warn({ other }, 'another worker uses this journal (QUEUE=memory on a shared store): a worker that starts replays the entries of the other, whose strings are then reported twice. Run one QUEUE=memory worker per store at a time, or QUEUE=bullmq for several (docs/deployment.md)')
  } catch (error) {
    log.warn({ err: error }, 'could not record that the worker is alive')
  }
}

/** Sets the queue, journal, backlog and held gauges from the parts' current state. */
function collectGauges(metrics: Metrics, { queue, journal, backlog, shared, held, retries }: Parts): void {
  // With BullMQ the counts come from Redis, refreshed here (they are read at most every 250 ms).
  if (shared) void shared.backlog().catch(() => undefined)
  metrics.queueDepth.set(queue.depth)
  metrics.queueWaiting.set(queue.waiting)
  metrics.retrying.set(retries.waiting)
  metrics.journalSize.set(journal.size)
  metrics.parked.set(journal.parked)
  metrics.backlogStrings.reset()
  metrics.backlogWaiting.reset()
  metrics.backlogBytes.reset()
  metrics.backlogOldest.reset()
  const now = Date.now()
  for (const b of backlog?.list() ?? shared?.list() ?? []) {
    const organization = b.organization
    metrics.backlogStrings.set({ organization }, b.strings)
    metrics.backlogWaiting.set({ organization }, b.waiting)
    metrics.backlogBytes.set({ organization }, b.bytes)
    if (b.oldestAt) metrics.backlogOldest.set({ organization }, Math.max(0, (now - b.oldestAt) / 1000))
  }
  for (const [cause, n] of Object.entries(held.byCause())) {
    metrics.held.set({ cause }, n.strings)
    metrics.heldOrganizations.set({ cause }, n.organizations)
  }
}

/**
 * Strings of held organizations wait on disk (with BullMQ, in Redis) and are not waited for by
 * idle(); those of one being tried (listed, not held) are, and in process those of one held only
 * because its API kept failing, which are tried again by themselves.
 */
function heldWaiting(backlog: Backlog, held: HeldOrganizations): number {
  let n = 0
  for (const [domain, strings] of backlog.waitingPerDomain()) {
    const cause = held.cause(domain)
    if (cause !== undefined && cause !== 'unavailable') n += strings
  }
  return n
}

/**
 * The findings log's sweeps (trim, and the issues' catch-up): the first at a random moment of a
 * window around FIRST_FINDINGS_SWEEP_MS (a quarter more or less), the others FINDINGS_SWEEP_MS
 * apart from it, so that instances started together (a rollout) do not catch up on the same
 * strings at the same moment, where two raises of one string could both POST.
 */
function startFindingsSweeps(deps: WorkerDeps, { findings, issues, held, movedAway }: Parts, log: Logger, closing: () => boolean) {
  const pipelines = () => deps.pipelines.current
  // How a pipeline raises issues now, for the catch-up: undefined when it raises none.
  const issuesOf = (key: string) => {
    const p = pipelines().get(key)
    return p?.issues ? { name: p.name ?? p.key, outputs: p.issues.outputs } : undefined
  }
  const now = async () => {
    // Strings of a held organization (disconnected, or its token refused) wait for its return;
    // nothing is taken up once the worker stops; at most what each organization's lane has room
    // for (the sweep answers 10,000 entries at most).
    const pick = issues.catchUpPicker(issuesOf)
    const r = await findings.sweep((entry) => !closing() && !held.cause(entry.domain) && pick(entry))
    let caughtUp = 0
    // An entry written under a domain its organization has left: its issue requests would go
    // there, perhaps with the token of another organization that connected it since (asked once
    // per organization and domain in a sweep).
    const moved = new Map<string, Promise<boolean>>()
    const left = (entry: FindingsEntry) => {
      const key = `${entry.organizationId}|${entry.domain}`
      let answer = moved.get(key)
      if (!answer) moved.set(key, (answer = movedAway(entry.domain, entry.organizationId)))
      return answer
    }
    for (const entry of r.owed) {
      try {
        if (await left(entry)) continue
        if (!closing() && issues.catchUp(entry, issuesOf)) caughtUp++
      } catch (error) {
        // One entry that cannot be taken up is not a reason to leave the others.
        log.warn({ err: error, string: entry.stringId, language: entry.languageId }, 'an issue owed could not be queued again')
      }
    }
    if (r.removed) log.info({ strings: r.strings, removed: r.removed }, 'findings log trimmed to FINDINGS_MAX')
    if (caughtUp) log.info({ tasks: caughtUp }, 'issues owed by earlier outcomes queued again (dropped, failed or lost with a restart)')
    return { strings: r.strings, removed: r.removed, caughtUp }
  }
  const sweep = () => void now().catch((error: unknown) => log.warn({ err: error }, 'findings log sweep failed'))
  let every: NodeJS.Timeout | undefined
  const first = setTimeout(() => {
    sweep()
    every = setInterval(sweep, deps.findingsSweepMs ?? FINDINGS_SWEEP_MS)
    every.unref()
  }, deps.firstFindingsSweepMs ?? Math.round(FIRST_FINDINGS_SWEEP_MS * (0.75 + Math.random() * 0.5)))
  first.unref()
  return {
    now,
    stop: () => {
      clearTimeout(first)
      if (every) clearInterval(every)
    },
  }
}

/**
 * With a shared queue, jobs come from BullMQ to whichever instance is free. A held string back
 * with its output decided is reported as decided (not run again), unless it is to be checked with
 * the service first, as in the local backlog, or a newer revision of it arrived meanwhile. Strings
 * taken close together go into the work queue together: one run, one fetch per group
 * (taken-together.ts). `giveBackWaiting`, as the instance stops: those taken and not started go
 * back to BullMQ, for the other instances.
 */
function takeFromShared(shared: BullmqJournal, { queue, reportRebound }: Pick<Parts, 'queue' | 'reportRebound'>, closing: () => boolean): { giveBackWaiting(): void } {
  const taken = takenTogether((jobs) => queue.push(jobs))
  shared.start((job) => {
    // Taken as the worker began to stop (BullMQ may hand out one more): back to BullMQ at once,
    // for another instance.
    if (closing()) return void shared.giveBack([job])
    queue.reserve(1)
    if (releasedAsDecided(job)) return reportRebound(heldDecision(job), (error) => void shared.park(job, `its held decision could not be reported: ${String(error)}`))
    taken.add(job)
  })
  return {
    giveBackWaiting() {
      const back = [...taken.drain(), ...queue.takeWaiting()]
      queue.finish(back.length)
      void shared.giveBack(back)
    },
  }
}

export async function startWorker(deps: WorkerDeps): Promise<Worker> {
  const { config, log, stores } = deps
  const metrics = deps.metrics ?? createMetrics()
  const shutdown = new AbortController()
  const timers = new Set<NodeJS.Timeout>()
  let closing = false
  let replayDone = false
  const parts = await createParts(deps, metrics, shutdown.signal, timers, () => closing)
  const { journal, shared, backlog, api, queue, reporter, reportChecked, held, outcomes, intake, reconciler, findings, issues, findingsStage, retries } = parts
  const pipelines = () => deps.pipelines.current

  const { app, decoder } = createHttp(deps, parts, metrics, { closing: () => closing, replaying: () => !replayDone, signal: shutdown.signal })
  // Gauges are read when /metrics is scraped.
  const collect = () => collectGauges(metrics, parts)
  const metricsTimer = setInterval(collect, 1000)
  metricsTimer.unref()

  // Large bodies a stopped process was reading or decoding: never acknowledged, delivered again.
  const leftBodies = await removeLeftBodies(incomingDir(config))
  if (leftBodies) log.info({ files: leftBodies, dir: incomingDir(config) }, 'removed webhook bodies an earlier run left half read (they were never acknowledged)')
  const server = await listen(app.callback(), config)
  const address = server.address() as AddressInfo
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${address.port}`
  log.info({ url, pipelines: pipelines().all().map((p) => p.key), store: stores.kind }, 'worker listening')

  const takingShared = shared && takeFromShared(shared, parts, () => closing)

  // Replay what an earlier run acknowledged and did not finish. The webhook route is already
  // open; replayed jobs count against the queue limit like any others.
  // If the store fails meanwhile (it was not up yet, or went away), the replay is tried again until
  // it goes through: until then nothing the last run left is worked on, and the window stays shut.
  const stopReplay = new AbortController()
  const replayed = replayUntilDone(() => intake.replay(), log, stopReplay.signal, deps.replayRetryMs ?? 1000)
    .then((r) => {
      if (r?.strings) log.info(r, 'replaying unfinished work from the journal')
    })
    .finally(() => {
      replayDone = true
    })

  const otherWorkers = new Set<string>()
  const aliveTimer = setInterval(() => void markAlive(journal, log, otherWorkers), ALIVE_EVERY_MS)
  aliveTimer.unref()
  const heldTimer = setInterval(() => void held.tick(), deps.heldRecheckMs ?? 1000)
  heldTimer.unref()
  const heldSweep = shared && sweepHeldInRedis(shared, held, deps.tokens, parts.movedAway, log, () => closing, deps.heldSweepMs ?? 10 * (deps.heldRecheckMs ?? 1000))
  const findingsSweeps = startFindingsSweeps(deps, parts, log, () => closing)
  const periodic = startPeriodic(config, () => reconciler.run(), replayed, () => (shared ? shared.replayParked() : (backlog?.retryParkedNow(PARKED_RETRY_PAGE) ?? Promise.resolve(0))), log, () => closing)

  const idle = async (timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs
    // A replay that keeps failing (the store down) is waited for until the deadline only.
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))
    const replayLate = await Promise.race([replayed.then(() => false), late])
    clearTimeout(timer)
    if (replayLate) throw new Error(`worker not idle after ${timeoutMs} ms: the journal's replay has not gone through (is the store reachable?)`)
    const waiting = async () => (shared ? (await shared.backlog()) - shared.held : (backlog?.waiting() ?? 0) - (backlog ? heldWaiting(backlog, held) : 0))
    while (queue.depth > 0 || retries.waiting > 0 || (await waiting()) > 0) {
      if (Date.now() > deadline) throw new Error(`worker not idle after ${timeoutMs} ms: ${queue.depth} strings open, ${retries.waiting} waiting out a back-off`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  let stopping: Promise<void> | undefined
  const stop = (options: { deadlineMs?: number } = {}) => {
    stopping ??= (async () => {
      closing = true
      // Deliveries are still acknowledged while the worker drains (journaled for the next start,
      // or shared for the other instances), none taken into the window: a 503 would spend one of
      // the service's few retries on a routine restart.
      intake.drain()
      backlog?.close()
      // A replay waiting to be tried again is not: the next start replays.
      stopReplay.abort()
      const deadline = options.deadlineMs ?? config.shutdownTimeoutMs
      log.info({ open: queue.depth }, 'stopping: new webhooks are journaled for the next start; finishing running work')
      // A shared queue: take no more jobs; what this instance runs keeps its lock and finishes
      // below (or goes to another instance when its lock expires, past the deadline); what it took
      // and has not started goes back to BullMQ now, for the other instances.
      const stoppingBull = shared ? shared.stopTaking() : Promise.resolve()
      takingShared?.giveBackWaiting()
      await Promise.race([
        (async () => {
          await replayed
          await queue.onIdle()
          await reporter.flush()
          // Issues are best effort: they get a short grace, then whatever waits is given up.
          await Promise.race([findingsStage.flush(), new Promise<void>((r) => setTimeout(r, 2000).unref())])
        })(),
        new Promise<void>((r) => setTimeout(r, deadline).unref()),
      ])
      // Whatever did not finish (held strings too) stays in the journal and is replayed on the next start.
      const left = queue.drain().length
      // Issues still waiting are given up (best effort; the catch-up after the next start takes them up).
      const issuesLeft = issues.abandon()
      const heldLeft = held.clear()
      shutdown.abort()
      await reporter.flush().catch(() => undefined)
      for (const t of timers) clearTimeout(t)
      retries.clear()
      clearInterval(heldTimer)
      heldSweep?.stop()
      clearInterval(aliveTimer)
      await journal.markAlive?.().catch(() => undefined)
      clearInterval(metricsTimer)
      findingsSweeps.stop()
      periodic.stop()
      await closeListener(server, intake, log)
      await stoppingBull
      await shared?.close()
      await decoder.close()
      log.info({ leftInJournal: journal.size, waitingNotStarted: left, held: heldLeft, issuesGivenUp: issuesLeft }, 'stopped')
    })()
    return stopping
  }

  return {
    url,
    server,
    metrics,
    queue,
    journal,
    held,
    reporter,
    api,
    findings,
    issues,
    findingsIdle: () => findingsStage.flush(),
    replayed,
    reconcile: () => reconciler.run(),
    sweepFindings: findingsSweeps.now,
    idle,
    stop,
    backlog,
    backlogList: () => backlog?.list() ?? shared?.list() ?? [],
    stats: () => ({ depth: queue.depth, retrying: retries.given, journal: journal.size, parked: journal.parked, held: held.count(), patches: reporter.patches, backlog: backlog?.waiting() ?? 0 }),
  }
}
