// The composition root of `switchyard serve`: journal, de-duplication, queue, pipelines, API
// client and reporter wired together behind the HTTP app; replay of unfinished work on start;
// reconciliation; graceful shutdown.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type Router from '@koa/router'
import type { Config } from './config/load-config.js'
import type { PluginEvent } from './engine/types.js'
import { ApiClient } from './platform/api-client.js'
import { Reporter, type Decision } from './platform/reporter.js'
import type { TokenProvider } from './platform/token-provider.js'
import { Dedupe } from './queue/dedupe.js'
import { acceptJobs } from './queue/intake.js'
import { stringKeyOf, type Job } from './queue/job.js'
import type { BullmqJournal } from './queue/bullmq-journal.js'
import { Journal } from './queue/journal.js'
import { createJobProcessor, type RunnablePipeline, type StepSettingsLookup } from './queue/process-jobs.js'
import { WorkQueue } from './queue/work-queue.js'
import { createApp } from './server/app.js'
import { listen } from './server/listen.js'
import { WEBHOOK_MODULE_KEY, renderManifest, type ManifestPipeline } from './server/manifest.js'
import type { Stores } from './store/create-stores.js'
import type { Logger } from './util/logger.js'
import { createMetrics, type Metrics } from './util/metrics.js'
import { createBatchDecoder } from './webhooks/batch-decoder.js'
import { createWebhookHandler } from './webhooks/receive-webhook.js'
import type { OtherEvent } from './webhooks/event-types.js'
import type { BatchOrigin } from './webhooks/unbatch.js'

export type WorkerPipeline = RunnablePipeline & ManifestPipeline

export interface WorkerPipelineSet {
  get(key: string): WorkerPipeline | undefined
  all(): WorkerPipeline[]
  events(): string[]
  dispatchEvent(event: PluginEvent): Promise<void>
}

/** Where the current pipelines come from (the engine's PipelineHost). */
export interface PipelineSource {
  readonly current: WorkerPipelineSet
  reload?(): Promise<{ ok: boolean; errors: unknown[] }>
}

export interface OrganizationDirectory {
  rememberOrganization?(id: string, domain: string): Promise<void>
  domainOf?(id: string): Promise<string | undefined>
  status?(): Promise<Array<{ domain: string; organizationId?: string; connected: boolean; expiresAt?: number; reason?: string }>>
}

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
  /** How often held strings check whether their organization has a usable token again (ms). */
  heldRecheckMs?: number
}

export interface Worker {
  url: string
  server: Server
  metrics: Metrics
  queue: WorkQueue
  journal: Journal | BullmqJournal
  reporter: Reporter
  api: ApiClient
  /** Counts for tests and the operator. */
  stats(): { depth: number; journal: number; parked: number; held: number; patches: number }
  /** Replay of the journal finished. */
  replayed: Promise<void>
  /** Run the reconciliation sweep once now. */
  reconcile(): Promise<{ orphans: number; checked: number }>
  /** Wait until every accepted string has been reported or parked (held strings aside). */
  idle(timeoutMs?: number): Promise<void>
  stop(options?: { deadlineMs?: number }): Promise<void>
}

function bullmqOptions(config: Config, log: Logger) {
  const redisUrl = config.queueRedisUrl || (/^rediss?:/.test(config.storeUrl) ? config.storeUrl : '')
  if (!redisUrl) throw new Error('QUEUE=bullmq needs Redis: set QUEUE_REDIS_URL, or a redis:// STORE_URL')
  return {
    redisUrl,
    concurrency: config.queueConcurrency,
    attempts: Math.max(1, config.apiMaxAttempts),
    backoffMs: 1000,
    lockMs: config.queueLockMs,
    dedupeTtlMs: config.dedupeTtlMs,
    log: log.child({ part: 'bullmq' }),
  }
}

/** Key of the bounded activity log (other events) in the `activity` store. */
export const ACTIVITY_KEY = 'recent'
const ACTIVITY_MAX = 200
const HELD_RECHECK_MS = 1000

export async function startWorker(deps: WorkerDeps): Promise<Worker> {
  const { config, log, stores, tokens } = deps
  const metrics = deps.metrics ?? createMetrics()
  // BullMQ (and ioredis) load only when asked for: ~23 MB a single instance doesn't need.
  const journal: Journal | BullmqJournal =
    config.queue === 'bullmq' ? new (await import('./queue/bullmq-journal.js')).BullmqJournal(bullmqOptions(config, log)) : new Journal(stores.journal)
  const shared = journal.delivers ? (journal as BullmqJournal) : undefined
  const dedupe = new Dedupe(config.dedupeTtlMs, Date.now, config.dedupeMax)
  const shutdown = new AbortController()
  let closing = false
  let replayDone = false
  const held = new Map<string, Job[]>()
  /** When each organization's jobs were last found unable to run. */
  const heldSince = new Map<string, number>()
  const timers = new Set<NodeJS.Timeout>()
  const seenSteps = new Map<string, { organizationId: string; domain: string; projectId: number; stepId: number; languageId: string }>()

  const api = new ApiClient({
    config,
    tokens,
    log,
    fetch: deps.fetch,
    observer: {
      request: ({ route, status, ms }) => metrics.apiLatency.observe({ route, status: String(status) }, ms / 1000),
      retry: ({ reason }) => metrics.apiRetries.inc({ reason: reason === 'network' ? 'network' : reason === '429' ? '429' : '5xx' }),
    },
  })

  const finish = async (job: Job, outcome: string, port = '') => {
    dedupe.finish(stringKeyOf(job), job.revision)
    queue.finish()
    metrics.jobs.inc({ outcome, port })
  }

  // Held strings leave the queue's count (they stay journaled): QUEUE_LIMIT is shared by every
  // organization, and one left disconnected must not fill it for the others. Each organization
  // may hold up to QUEUE_LIMIT strings; past that its own webhooks get 503 (intake.ts).
  const hold = (jobs: Job[], reason: string) => {
    const domain = jobs[0]?.domain ?? ''
    const list = held.get(domain) ?? []
    if (list.length === 0) log.warn({ domain }, `jobs wait for the organization to be connected again: ${reason}`)
    list.push(...jobs)
    held.set(domain, list)
    heldSince.set(domain, Date.now())
    queue.finish(jobs.length)
    metrics.jobs.inc({ outcome: 'held', port: '' }, jobs.length)
  }

  const reporter = new Reporter({
    api,
    log,
    lingerMs: config.reportLingerMs,
    hooks: {
      async reported(decisions: Decision[]) {
        for (const d of decisions) {
          await journal.done(d.job)
          await finish(d.job, 'reported', d.port)
        }
      },
      async rejected(d, reason) {
        log.warn({ string: d.job.stringId, reason }, 'string could not be reported and is dropped from the queue')
        await journal.done(d.job)
        await finish(d.job, 'rejected', d.port)
      },
      async parked(d, reason) {
        await journal.park(d.job, reason)
        await finish(d.job, 'parked', d.port)
      },
      held(decisions, reason) {
        hold(decisions.map((d) => d.job), reason)
      },
    },
  })

  const pipelines = () => deps.pipelines.current
  const processJobs = createJobProcessor({
    pipelines,
    settings: deps.settings,
    api,
    reporter,
    log,
    maxAttempts: Math.max(1, config.apiMaxAttempts),
    signal: shutdown.signal,
    isCurrent: (job) => dedupe.isCurrent(stringKeyOf(job), job.revision),
    async superseded(job) {
      await journal.done(job)
      await finish(job, 'superseded')
    },
    retryLater(jobs, delayMs) {
      metrics.jobs.inc({ outcome: 'retried', port: '' }, jobs.length)
      const t = setTimeout(() => {
        timers.delete(t)
        if (!closing) queue.push(jobs)
      }, delayMs)
      t.unref()
      timers.add(t)
    },
    async park(job, reason) {
      log.warn({ string: job.stringId, module: job.moduleKey, reason }, 'string parked')
      await journal.park(job, reason)
      await finish(job, 'parked')
    },
    hold,
    countRun: (key) => metrics.pipelineRuns.inc({ pipeline: key }),
  })

  const queue: WorkQueue = new WorkQueue({
    concurrency: config.concurrency,
    limit: config.queueLimit,
    process: async (jobs) => {
      const j = jobs[0]!
      // Its organization was found disconnected less than a second ago: straight to the held
      // list, without a settings read and a token read per group (bench: that was most of the
      // main thread's work per batch while disconnected). Once a second a group tries again.
      if (held.get(j.domain)?.length && Date.now() - (heldSince.get(j.domain) ?? 0) < HELD_RECHECK_MS) {
        hold(jobs, 'still disconnected')
        return
      }
      seenSteps.set(`${j.domain}|${j.projectId}|${j.stepId}|${j.languageId}`, { organizationId: j.organizationId, domain: j.domain, projectId: j.projectId, stepId: j.stepId, languageId: j.languageId })
      await processJobs(jobs)
    },
    onError(error, jobs) {
      log.error({ err: error, strings: jobs.length }, 'processing failed unexpectedly; the strings will be tried again')
      const t = setTimeout(() => queue.push(jobs), 5000)
      t.unref()
      timers.add(t)
    },
  })

  const knownKeys = () => new Set([WEBHOOK_MODULE_KEY, ...pipelines().all().map((p) => p.key)])

  const otherEvents = async (events: OtherEvent[], origin: BatchOrigin) => {
    // The activity log: the most recent events, for the operator (one write per batch).
    const recent = ((await stores.activity.get(ACTIVITY_KEY)) as unknown[] | undefined) ?? []
    const entries = events.map((e) => ({ at: new Date().toISOString(), event: e.event, organizationId: origin.organizationId, domain: origin.domain, batchId: origin.batchId }))
    await stores.activity.set(ACTIVITY_KEY, [...entries, ...recent].slice(0, ACTIVITY_MAX))
    const subscribed = new Set(pipelines().events())
    for (const e of events) {
      if (!subscribed.has(e.event)) continue
      void queue.runTask(async () => {
        try {
          await pipelines().dispatchEvent({ event: e.event, payload: e as Record<string, unknown>, organizationId: origin.organizationId, domain: origin.domain, log: log.child({ event: e.event, batch: origin.batchId }), signal: shutdown.signal })
        } catch (error) {
          log.error({ err: error, event: e.event }, 'event handler failed')
        }
      })
    }
  }

  const decoder = createBatchDecoder({
    threads: config.ingestThreads,
    secrets: config.appSecrets,
    warn: (message) => log.warn(message),
  })
  const webhook = createWebhookHandler({
    appSecrets: () => config.appSecrets,
    decoder,
    headerPrefix: config.headerPrefix,
    bodyLimit: config.bodyLimit,
    log,
    metrics,
    knownModuleKey: (key) => knownKeys().has(key),
    hasPipeline: (key) => pipelines().get(key) !== undefined,
    newBatchId: () => journal.newBatchId(),
    async resolveDomain(organizationId, domainHeader) {
      if (domainHeader) {
        if (organizationId) await tokens.rememberOrganization?.(organizationId, domainHeader)
        return domainHeader
      }
      return (organizationId && (await tokens.domainOf?.(organizationId))) || organizationId
    },
    accept: (batchId, jobs, encoded) => acceptJobs({ dedupe, journal, queue, closing: () => closing, held: (domain) => held.get(domain)?.length ?? 0 }, batchId, jobs, encoded),
    otherEvents,
  })

  const manifest = () =>
    renderManifest({ baseUrl: config.baseUrl, clientId: config.clientId, pipelines: pipelines().all(), events: pipelines().events() })

  const app = createApp({
    log,
    metrics,
    webhook,
    manifest,
    logo: (key) => pipelines().get(key)?.logo,
    routers: deps.routers,
    unverifiedBodies: { max: config.unverifiedBodies, waitMs: config.unverifiedWaitMs },
    metricsToken: config.metricsToken || undefined,
    // Status and counts only, for anyone: which organizations are served, and their state, is on
    // the operator page, behind OPERATOR_PASSWORD.
    async health() {
      return {
        status: closing ? 'stopping' : 'ok',
        replaying: !replayDone,
        queue: { depth: queue.depth, waiting: queue.waiting, limit: queue.limit },
        journal: journal.size,
        parked: journal.parked,
        held: [...held.values()].reduce((n, l) => n + l.length, 0),
      }
    },
    async ready() {
      const store = await stores.ping()
      const loaded = pipelines().all().length
      const organizations = (await tokens.status?.()) ?? []
      return {
        ready: store && loaded > 0 && !closing,
        checks: { store, pipelines: loaded, disconnected: organizations.filter((o) => !o.connected).length },
      }
    },
  })

  // Gauges are read when /metrics is scraped.
  const collect = () => {
    metrics.queueDepth.set(queue.depth)
    metrics.queueWaiting.set(queue.waiting)
    metrics.journalSize.set(journal.size)
    metrics.parked.set(journal.parked)
  }
  const metricsTimer = setInterval(collect, 1000)
  metricsTimer.unref()

  const server = await listen(app.callback(), config)
  const address = server.address() as AddressInfo
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${address.port}`
  log.info({ url, pipelines: pipelines().all().map((p) => p.key), store: stores.kind }, 'worker listening')

  // With a shared queue, jobs come from BullMQ to whichever instance is free.
  if (shared) {
    shared.start((job) => {
      queue.admit(1)
      queue.push([job])
    })
  }

  // Replay what an earlier run acknowledged and did not finish. The webhook route is already
  // open; replayed jobs count against the queue limit like any others.
  const replayed = (async () => {
    const { batches, parked } = await journal.load()
    let count = 0
    for (const { batchId, jobs } of batches) {
      const fresh = jobs.filter((j) => dedupe.admit(stringKeyOf(j), j.revision) === 'new')
      journal.adopt(batchId, jobs.length)
      // Jobs of the batch that are duplicates of others already replayed count as done at once.
      for (const j of jobs) if (!fresh.includes(j)) await journal.done(j)
      queue.admit(fresh.length)
      queue.push(fresh)
      count += fresh.length
    }
    // A restart is a natural retry for parked strings: journal them again, then take them back.
    if (parked.length) {
      const batchId = journal.newBatchId()
      const jobs = parked.map((p) => ({ ...p.job, batchId, attempts: 0 })).filter((j) => dedupe.admit(stringKeyOf(j), j.revision) === 'new')
      await journal.append(batchId, jobs)
      for (const p of parked) await journal.unpark(p.job)
      queue.admit(jobs.length)
      queue.push(jobs)
      count += jobs.length
    }
    if (count) log.info({ strings: count, batches: batches.length, parked: parked.length }, 'replaying unfinished work from the journal')
  })()
    .catch((error) => log.error({ err: error }, 'journal replay failed'))
    .finally(() => {
      replayDone = true
    })

  // Held jobs go back to the queue once their organization has a usable token again.
  const heldTimer = setInterval(async () => {
    for (const [domain, jobs] of held) {
      try {
        await tokens.getAccessToken(domain)
      } catch {
        continue
      }
      held.delete(domain)
      heldSince.delete(domain)
      log.info({ domain, strings: jobs.length }, 'organization is connected again; resuming its strings')
      queue.admit(jobs.length)
      queue.push(jobs)
    }
  }, deps.heldRecheckMs ?? 10_000)
  heldTimer.unref()

  const reconcile = async () => {
    let orphans = 0
    let checked = 0
    for (const s of seenSteps.values()) {
      try {
        for (let offset = 0; ; offset += 500) {
          const records = await api.getStatuses(s.domain, s.projectId, s.stepId, s.languageId, { status: 'NEED_PROCESS', limit: 500, offset })
          for (const r of records) {
            checked++
            if (!dedupe.isActive(stringKeyOf({ ...s, stringId: r.stringId }))) orphans++
          }
          if (records.length < 500) break
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
  const reconcileTimer = config.reconcileIntervalMs > 0 ? setInterval(() => void reconcile(), config.reconcileIntervalMs) : undefined
  reconcileTimer?.unref()

  const idle = async (timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs
    await replayed
    const backlog = async () => (shared ? await shared.backlog() : 0)
    while (queue.depth > 0 || (await backlog()) > 0) {
      if (Date.now() > deadline) throw new Error(`worker not idle after ${timeoutMs} ms: ${queue.depth} strings open`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  let stopping: Promise<void> | undefined
  const stop = (options: { deadlineMs?: number } = {}) => {
    stopping ??= (async () => {
      closing = true
      const deadline = options.deadlineMs ?? config.shutdownTimeoutMs
      log.info({ open: queue.depth }, 'stopping: new webhooks get 503; finishing running work')
      // A shared queue: take no more jobs; what this instance holds finishes below or goes to
      // another instance when its lock expires.
      const closingBull = shared ? shared.close() : Promise.resolve()
      const finished = Promise.race([
        (async () => {
          await replayed
          await queue.onIdle()
          await reporter.flush()
        })(),
        new Promise<void>((r) => setTimeout(r, deadline).unref()),
      ])
      await finished
      // Whatever did not finish stays in the journal and is replayed on the next start.
      const left = queue.drain().length
      shutdown.abort()
      await reporter.flush().catch(() => undefined)
      for (const t of timers) clearTimeout(t)
      clearInterval(heldTimer)
      clearInterval(metricsTimer)
      if (reconcileTimer) clearInterval(reconcileTimer)
      // The listener stayed open while draining, so deliveries got 503 + Retry-After rather than
      // a refused connection; only now does it close.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections?.()
      await closingBull
      await closed
      await decoder.close()
      log.info({ leftInJournal: journal.size, waitingNotStarted: left }, 'stopped')
    })()
    return stopping
  }

  return {
    url,
    server,
    metrics,
    queue,
    journal,
    reporter,
    api,
    replayed,
    reconcile,
    idle,
    stop,
    stats: () => ({ depth: queue.depth, journal: journal.size, parked: journal.parked, held: [...held.values()].reduce((n, l) => n + l.length, 0), patches: reporter.patches }),
  }
}
