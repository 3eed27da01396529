// `switchyard serve`: the worker with everything wired: store, pipelines (reloaded on SIGHUP),
// OAuth tokens, step settings, and graceful shutdown on SIGTERM/SIGINT.
import { loadConfig, missingForProduction, type Config } from '../config/load-config.js'
import { PipelineHost } from '../engine/pipeline-host.js'
import type { PluginCache } from '../engine/types.js'
import { TokenManager } from '../platform/token-manager.js'
import { createOAuthRouter } from '../server/oauth-routes.js'
import { operatorAuth } from '../server/operator-auth.js'
import { createOperatorRouter, type ActivityEntry } from '../server/operator-page.js'
import { createSettingsRouter } from '../settings/settings-routes.js'
import { SettingsService } from '../settings/settings-service.js'
import { createStores, type Stores } from '../store/create-stores.js'
import { createLock } from '../store/locks.js'
import { createLogger, type Logger } from '../util/logger.js'
import { createMetrics } from '../util/metrics.js'
import { ACTIVITY_KEY, startWorker, type PipelineSource, type Worker } from '../worker.js'

export interface Running {
  worker: Worker
  config: Config
  stores: Stores
  tokens: TokenManager
  host: PipelineHost
  log: Logger
  stop(): Promise<void>
}

/** Start the whole worker in this process. Throws with every error when pipelines don't load. */
export async function startServe(config: Config, log: Logger = createLogger({ level: config.logLevel })): Promise<Running> {
  const stores = await createStores(config.storeUrl)
  const metrics = createMetrics()
  const cacheFor = (namespace: string): PluginCache => ({
    get: async (key) => stores.cache.get(`${namespace}:${key}`),
    set: async (key, value, ttl) => {
      await stores.cache.set(`${namespace}:${key}`, value, ttl)
    },
  })
  const host = new PipelineHost(config.pipelinesDir.includes(',') ? config.pipelinesDir.split(',') : { dir: config.pipelinesDir }, {
    pluginsDir: config.pluginsDir || undefined,
    log: log.child({ part: 'engine' }),
    cacheFor,
    env: { ...process.env, OPENAI_API_KEY: config.openaiApiKey || process.env.OPENAI_API_KEY, OPENAI_BASE_URL: config.openaiBaseUrl || process.env.OPENAI_BASE_URL },
    metrics: { add: (name, value = 1) => metrics.plugin.inc({ metric: name }, value) },
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
  const guard = operatorAuth(config.operatorPassword, log)
  const pipelines = host as unknown as PipelineSource
  // The operator page reads the backlog once the worker runs.
  let worker: Worker | undefined
  worker = await startWorker({
    config,
    log,
    stores,
    metrics,
    pipelines,
    tokens,
    // Jobs read through jobLookup: a step running on the defaults is logged once.
    settings: settings.jobLookup(),
    routers: [
      createOAuthRouter({ config, tokens, store: stores.state, log: log.child({ part: 'oauth' }), guard }),
      createSettingsRouter({ config, settings, pipelines: () => host.current, log: log.child({ part: 'settings' }) }),
      createOperatorRouter({ config, tokens, guard, activity: async () => ((await stores.activity.get(ACTIVITY_KEY)) as ActivityEntry[] | undefined) ?? [], backlog: () => worker?.backlog?.list() ?? [] }),
    ],
  })
  const missing = missingForProduction(config)
  if (missing.length) log.warn({ missing }, `running on defaults; to connect a real organization set: ${missing.join('; ')}`)
  return {
    worker, config, stores, tokens, host, log,
    async stop() {
      await worker.stop()
      // The worker already gave running work its deadline; what still runs is abandoned to the
      // journal, so the plugins close now rather than after the 30 s reload grace.
      await host.current.close(0)
      await stores.close()
      await locks.close()
    },
  }
}

export async function runServe(args: string[]): Promise<number> {
  if (args.includes('--help')) {
    console.log('switchyard serve: run the worker (configuration from the environment; see `switchyard config`).')
    return 0
  }
  const config = loadConfig(process.env)
  const log = createLogger({ level: config.logLevel })
  const running = await startServe(config, log)
  process.on('SIGHUP', () => {
    void running.host.reload().then((r) => {
      if (r.ok) log.info({ pipelines: running.host.current.all().map((p) => p.key) }, 'pipelines reloaded')
      else log.error({ errors: r.errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.message}`) }, 'reload failed; keeping the pipelines that were loaded')
    })
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
