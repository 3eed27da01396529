// `switchyard serve`: the worker with everything wired: store, pipelines (reloaded on SIGHUP),
// OAuth tokens, step settings, and graceful shutdown on SIGTERM/SIGINT.
import { ConfigError, loadConfig, missingToConnect, type Config } from '../config/load-config.js'
import { writableProblems } from '../config/path-problems.js'
import { parseAppSecrets, scopedOrganizations } from '../webhooks/app-secrets.js'
import { PipelineHost, pipelineSourceOf } from '../engine/pipeline-host.js'
import { createPipelinePool, type PipelinePool } from '../engine/pipeline-pool.js'
import type { PluginCache } from '../engine/types.js'
import { TokenManager } from '../platform/token-manager.js'
import { createOAuthRouter } from '../server/oauth-routes.js'
import { operatorAuth } from '../server/operator-auth.js'
import type { BacklogView } from '../queue/backlog.js'
import type { HeldOrganizationView } from '../queue/held-organizations.js'
import { createOperatorRouter, type ActivityEntry } from '../server/operator-page.js'
import { createFindingsRouter } from '../server/findings-routes.js'
import { createSettingsRouter } from '../settings/settings-routes.js'
import { SettingsService } from '../settings/settings-service.js'
import { createStores, type Stores } from '../store/create-stores.js'
import { createLock } from '../store/locks.js'
import { createLogger, type Logger } from '../util/logger.js'
import { createMetrics } from '../util/metrics.js'
import { ACTIVITY_KEY, findingsLogFor, startWorker, type PipelineSource, type Worker } from '../worker.js'

export interface Running {
  worker: Worker
  config: Config
  stores: Stores
  tokens: TokenManager
  host: PipelineHost
  /** The threads the pipelines run on; undefined with PIPELINE_THREADS=0. */
  pool: PipelinePool | undefined
  log: Logger
  stop(): Promise<void>
}

/** Start the whole worker in this process. Throws with every error when pipelines don't load. */
export async function startServe(config: Config, log: Logger = createLogger({ level: config.logLevel, format: config.logFormat })): Promise<Running> {
  const stores = await createStores(config.storeUrl)
  const metrics = createMetrics()
  const cacheFor = (namespace: string): PluginCache => ({
    get: async (key) => stores.cache.get(`${namespace}:${key}`),
    set: async (key, value, ttl) => {
      await stores.cache.set(`${namespace}:${key}`, value, ttl)
    },
  })
  const env = { ...process.env, OPENAI_API_KEY: config.openaiApiKey || process.env.OPENAI_API_KEY, OPENAI_BASE_URL: config.openaiBaseUrl || process.env.OPENAI_BASE_URL }
  const pluginMetrics = { add: (name: string, value = 1) => metrics.plugin.inc({ metric: name }, value) }
  const host = new PipelineHost(pipelineSourceOf(config.pipelinesDir), {
    pluginsDir: config.pluginsDir || undefined,
    log: log.child({ part: 'engine' }),
    cacheFor,
    env,
    metrics: pluginMetrics,
  })
  const loaded = await host.load()
  if (!loaded.ok) {
    await stores.close()
    throw new Error(`pipelines failed to load:\n${loaded.errors.map((e) => `  ${e.file}:${e.line}:${e.col} ${e.message}`).join('\n')}`)
  }
  // Token refresh is one request per organization across every instance sharing the store: a
  // Redis or PostgreSQL lock (in-process for SQLite), since Keyv has none.
  const locks = await createLock(config.storeUrl)
  const tokens = await TokenManager.create({ config, store: stores.tokens, log: log.child({ part: 'oauth' }), lock: locks.lock })
  const settings = new SettingsService(stores.settings, log.child({ part: 'settings' }))
  const guard = operatorAuth(config, log)
  // Pipelines run on their own threads (each loads the same files), under a time budget per check
  // of a string; the host keeps everything else (manifest, settings, event handlers).
  const pool = createPipelinePool({
    host, threads: config.pipelineThreads, spareThreads: config.pipelineSpareThreads, budgetMs: config.checkTimeBudgetMs, env, logLevel: config.logLevel,
    log: log.child({ part: 'engine' }), cacheFor, metrics: pluginMetrics,
    onTimeout: () => metrics.checkTimeouts.inc(),
    onSpareRun: () => metrics.spareRuns.inc(),
    longTextChars: config.pipelineLongTextChars,
    longTextNice: config.pipelineLongTextNice,
    threadNice: config.pipelineThreadNice,
    onLongText: (n) => metrics.longTextStrings.inc(n),
    onThreadCount: (n) => metrics.pipelineThreads.set(n),
  })
  const pipelines: PipelineSource = pool ?? host
  // The operator page is a route of the worker's app, and shows the worker's held organizations.
  let held: () => HeldOrganizationView[] = () => []
  let backlog: () => BacklogView[] = () => []
  const findings = findingsLogFor(config, stores)
  const worker = await startWorker({
    config,
    log,
    stores,
    metrics,
    pipelines,
    tokens,
    findings,
    // Jobs read through jobLookup: a step running on the defaults is logged once.
    settings: settings.jobLookup(),
    routers: [
      createOAuthRouter({ config, tokens, store: stores.state, log: log.child({ part: 'oauth' }), guard }),
      createSettingsRouter({ config, settings, pipelines: () => host.current, log: log.child({ part: 'settings' }), bindOrganization: (id, domain) => tokens.bindFromSettings(id, domain) }),
      createOperatorRouter({ config, tokens, guard, held: () => held(), backlog: () => backlog(), activity: async () => ((await stores.activity.get(ACTIVITY_KEY)) as ActivityEntry[] | undefined) ?? [] }),
      createFindingsRouter({ config, findings, guard }),
    ],
  })
  held = () => worker.held.list()
  backlog = () => worker.backlogList()
  // Not TOKEN_KEY on a shared store: one instance connects and works without it, and loadTokenKey
  // has warned about it already.
  const missing = missingToConnect(config)
  if (missing.length) log.warn({ missing }, `running on defaults; to connect a real organization set: ${missing.join('; ')}`)
  else {
    // Which organizations webhooks are verified for (never the secrets themselves).
    const secrets = parseAppSecrets(config.appSecrets)
    log.info({ plainSecrets: secrets.filter((x) => !x.organizationId).length, organizationsWithOwnSecret: scopedOrganizations(secrets) }, 'webhook secrets loaded')
  }
  return {
    worker, config, stores, tokens, host, pool, log,
    async stop() {
      await worker.stop()
      await pool?.close()
      // The worker already gave running work its deadline; what still runs is abandoned to the
      // journal, so the plugins close now rather than after the 30 s reload grace.
      await host.current.close(0)
      await stores.close()
      await locks.close()
    },
  }
}

const SERVE_USAGE = 'switchyard serve: run the worker (configuration from the environment; see `switchyard config`).'

export async function runServe(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(SERVE_USAGE)
    return 0
  }
  // serve takes no arguments: a typo (`serve --port 8080`) must not start a worker that ignores it.
  if (args.length) {
    console.error(`unknown argument ${args[0]}\n${SERVE_USAGE}`)
    return 2
  }
  const config = loadConfig(process.env)
  // Refused before anything opens, as `config --check` refuses it: a DATA_DIR or SQLite directory
  // the worker cannot write failed the start only once the store opened, or (DATA_DIR/incoming)
  // the first large webhook body, after the worker had said it was listening.
  const unwritable = writableProblems(config)
  if (unwritable.length) throw new ConfigError(unwritable)
  const log = createLogger({ level: config.logLevel, format: config.logFormat })
  let running: Running
  try {
    running = await startServe(config, log)
  } catch (error) {
    // A start that failed part-way (PORT taken, a HOST not of this machine) leaves open what it
    // had opened: a Redis store's or BullMQ's connections kept the process alive, serving nothing
    // and never exiting, so neither a supervisor nor a container restart policy saw it fail. The
    // error is printed by the caller; the process then ends, as it does after a stop.
    setTimeout(() => process.exit(process.exitCode || 1), 500).unref()
    throw error
  }
  process.on('SIGHUP', () => {
    void running.host.reload().then(
      (r) => {
        if (r.ok) log.info({ pipelines: running.host.current.all().map((p) => p.key) }, 'pipelines reloaded')
        else log.error({ errors: r.errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.message}`) }, 'reload failed; keeping the pipelines that were loaded')
      },
      (error: unknown) => log.error({ err: error }, 'reload failed; keeping the pipelines that were loaded'),
    )
  })
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      log.info({ signal }, 'shutting down')
      void running.stop().then(resolve, (error) => {
        log.error({ err: error }, 'shutdown failed')
        resolve()
      })
    }
    process.once('SIGTERM', () => onSignal('SIGTERM'))
    process.once('SIGINT', () => onSignal('SIGINT'))
  })
  // Whatever the deadline cut short (a pipeline run still awaiting a slow plugin) must not keep
  // the process alive past it: its strings are in the journal and are replayed on the next start.
  setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref()
  return 0
}
