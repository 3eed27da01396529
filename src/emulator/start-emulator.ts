// Starts the emulated localization service on a loopback port: OAuth server, enterprise API
// (string statuses, translations), webhook sender, fault injection and the control API.
// One process-local object; `Emulator` is both what tests call and what /_control/* exposes.
import { createFakeOpenAi, type FakeOpenAi, type FakeOpenAiOptions } from './fake-openai.js'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa, { type Middleware } from 'koa'
import { silentLogger, type Logger } from '../util/logger.js'
import { applySettingsPatch, defaultSettings, type EmulatorSettings, type SettingsPatch } from './emulator-settings.js'
import { OAuthServer, type AuthorizeDirectOptions, type TokenResponse } from './oauth-server.js'
import { apiRoutes, type World } from './api-routes.js'
import { apiGuard, InFlightCounter } from './api-guard.js'
import { RequestCounter, type RequestCounts } from './request-counter.js'
import { createSampleProject, seededRandom, type SampleProject, type SeedOptions } from './sample-project.js'
import { StatusStore, type StatusFilter, type StatusView, type Summary } from './status-store.js'
import { WebhookSender, type DeliveryReport, type RawRequest, type RawResponse, type SendOptions } from './webhook-sender.js'
import { controlRoutes } from './control-routes.js'

/** A middleware mounted under a path prefix, e.g. the fake OpenAI endpoint under /v1. */
export interface EmulatorMount {
  /** Path prefix, e.g. `/v1`. */
  path: string
  middleware: Middleware
  /** Remove the prefix from ctx.path before calling the middleware (koa-mount style). Default false. */
  stripPrefix?: boolean
}

export interface EmulatorOptions extends Omit<SeedOptions, 'strings'> {
  /** Default 127.0.0.1. */
  host?: string
  /** Default 0 (any free port). */
  port?: number
  /** Default `switchyard-emulator`. */
  clientId?: string
  /** Default: random. */
  clientSecret?: string
  /** Registered redirect URIs. Default http://localhost:3000/oauth/callback. */
  redirectUris?: string[]
  /** Default: random. */
  appSecret?: string
  webhookUrl?: string
  /** Default `X-Service-`. */
  headerPrefix?: string
  /** Number of sample strings. Default 200. */
  strings?: number
  /** Does the user approve authorization requests? Default true. */
  approve?: boolean
  /** Any other setting (batch size, retries, faults, expires_in, ...). */
  settings?: SettingsPatch
  logger?: Logger
  /**
   * Extra middleware mounted beside the service, e.g. the fake OpenAI-compatible endpoint:
   * `mounts: [{ path: '/v1', middleware: fakeOpenAI() }]` (src/emulator/fake-openai.ts).
   */
  mounts?: EmulatorMount[]
  /**
   * The fake OpenAI-compatible endpoint under /v1 (on by default, so the demo, the benchmark and
   * `switchyard emulate` can run ai-proofread with no account anywhere); `false` leaves it out.
   */
  openai?: FakeOpenAiOptions | false
}

export interface EmulatorInfo {
  url: string
  authUrl: string
  apiUrl: string
  controlUrl: string
  clientId: string
  clientSecret: string
  redirectUris: string[]
  appSecret: string
  headerPrefix: string
  organization: { id: string; domain: string }
  projectId: number
  stepId: number
  moduleKey: string
  languages: string[]
  outputs: string[]
  strings: number
}

export interface Emulator {
  /** Base address; use it as AUTH_URL and API_URL. */
  readonly url: string
  readonly port: number
  readonly clientId: string
  readonly clientSecret: string
  readonly appSecret: string
  /** The current sample project (replaced by `seed`). */
  readonly sample: SampleProject
  readonly settings: EmulatorSettings
  info(): EmulatorInfo
  /** Replaces the sample project and every status; counters stay. */
  seed(options?: SeedOptions): SampleProject
  configure(patch: SettingsPatch): EmulatorSettings
  sendPending(options?: SendOptions): Promise<DeliveryReport>
  sendEvents(events: unknown[], options?: Pick<SendOptions, 'batchSize' | 'parallel' | 'url'>): Promise<DeliveryReport>
  sendRaw(request: RawRequest): Promise<RawResponse>
  /** Webhook deliveries since start or the last reset. */
  deliveries(): DeliveryReport
  /** FAILED strings back to NEED_PROCESS (the manager's Resend); returns how many. */
  resend(filter?: Pick<StatusFilter, 'languageId' | 'stringIds'>): number
  statuses(filter?: StatusFilter): StatusView[]
  status(stringId: number, languageId: string): StatusView | undefined
  summary(): Summary
  /** Pairs in total and DONE, counted as statuses change (cheap to poll at any size). */
  progress(): { total: number; done: number; patchOperations: number }
  requestCounts(): RequestCounts
  /** Requests to one endpoint, e.g. `PATCH /api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status`. */
  requestCount(endpoint: string, status?: number): number
  /** The most API requests each organization ever had in flight at once. */
  maxInFlight(): Record<string, number>
  resetCounters(): void
  /** Authorization + token exchange in-process, for tests that are not about OAuth. */
  authorizeDirect(options?: AuthorizeDirectOptions): Promise<TokenResponse>
  /** Every access token issued so far stops working (401); refresh tokens stay valid. */
  expireAccessTokens(): number
  readonly oauth: OAuthServer
  /** The fake model endpoint under `${url}/v1`, when it was mounted. */
  readonly openai?: FakeOpenAi
  /** Sends NEED_PROCESS strings every `intervalMs` (the service does it about once a minute). */
  startAutoSend(intervalMs: number, options?: SendOptions): void
  stopAutoSend(): void
  stop(): Promise<void>
}

export const STATUS_ENDPOINT = '/api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status'
export const TRANSLATIONS_ENDPOINT = '/api/v2/projects/:projectId/languages/:languageId/translations'

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const log = options.logger ?? silentLogger()
  const settings = defaultSettings()
  applySettingsPatch(settings, {
    ...(options.appSecret !== undefined ? { appSecret: options.appSecret } : {}),
    ...(options.webhookUrl !== undefined ? { webhookUrl: options.webhookUrl } : {}),
    ...(options.headerPrefix !== undefined ? { headerPrefix: options.headerPrefix } : {}),
    ...(options.approve !== undefined ? { approve: options.approve } : {}),
    ...(options.headerPrefix !== undefined && options.settings?.userAgent === undefined
      ? { userAgent: `${options.headerPrefix.replace(/^X-/i, '').replace(/-$/, '')}-Webhook` }
      : {}),
    ...(options.settings ?? {}),
  })
  const seedDefaults: SeedOptions = {}
  for (const key of ['seed', 'strings', 'languages', 'defectRate', 'outputs', 'passOutput', 'failOutput', 'organizationId', 'domain', 'projectId', 'stepId', 'stepTitle', 'moduleKey', 'applicationIdentifier'] as const) {
    if (options[key] !== undefined) (seedDefaults as Record<string, unknown>)[key] = options[key]
  }
  let world: World = (() => {
    const sample = createSampleProject(seedDefaults)
    return { sample, statuses: new StatusStore(sample) }
  })()
  const getWorld = (): World => world

  let url = ''
  const client = {
    clientId: options.clientId ?? 'switchyard-emulator',
    clientSecret: options.clientSecret ?? randomBytes(24).toString('base64url'),
    redirectUris: options.redirectUris ?? ['http://localhost:3000/oauth/callback'],
  }
  const oauth = new OAuthServer(settings, () => world.sample.organization, () => url)
  oauth.registerClient(client)
  const inFlight = new InFlightCounter()
  const counter = new RequestCounter()
  const sender = new WebhookSender(settings, getWorld, log)
  const random = seededRandom(world.sample.seed ^ 0x5eed)
  let autoSend: NodeJS.Timeout | undefined

  const app = new Koa()
  app.proxy = false
  app.use(counter.middleware())
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      const status = (error as { status?: number }).status ?? 500
      const expose = (error as { expose?: boolean }).expose ?? false
      ctx.status = status
      ctx.body = { error: { code: status, message: expose || status < 500 ? (error as Error).message : 'Internal Server Error' } }
      if (status >= 500) log.error({ err: error, path: ctx.path }, 'emulator: request failed')
    }
  })

  // ---- Extra mounts (the fake OpenAI-compatible endpoint of src/emulator/fake-openai.ts goes
  // here, under /v1, passed in by whoever starts the emulator: demo, bench, tests). ----
  const openai = options.openai === false ? undefined : createFakeOpenAi(options.openai ?? {})
  const mounts = [...(openai ? [{ path: '/v1', middleware: openai.middleware }] : []), ...(options.mounts ?? [])]
  for (const mount of mounts) {
    const prefix = mount.path.replace(/\/+$/, '')
    app.use(async (ctx, next) => {
      if (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`)) return next()
      if (!mount.stripPrefix) return mount.middleware(ctx, next)
      const original = ctx.path
      ctx.path = ctx.path.slice(prefix.length) || '/'
      try {
        return await mount.middleware(ctx, async () => {
          ctx.path = original
          await next()
        })
      } finally {
        ctx.path = original
      }
    })
  }

  const oauthRouter = oauth.router()
  app.use(oauthRouter.routes()).use(oauthRouter.allowedMethods())
  const guard = apiGuard(settings, oauth, inFlight, random)
  const api = apiRoutes(getWorld, settings, guard)
  app.use(api.routes()).use(api.allowedMethods())

  const emulator: Emulator = {
    openai,
    get url() {
      return url
    },
    get port() {
      return Number(new URL(url).port)
    },
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    get appSecret() {
      return settings.appSecret
    },
    get sample() {
      return world.sample
    },
    settings,
    oauth,
    info() {
      const { sample } = world
      return {
        url,
        authUrl: url,
        apiUrl: url,
        controlUrl: `${url}/_control`,
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        redirectUris: [...client.redirectUris],
        appSecret: settings.appSecret,
        headerPrefix: settings.headerPrefix,
        organization: { ...sample.organization },
        projectId: sample.project.id,
        stepId: sample.step.id,
        moduleKey: sample.step.applicationModule.moduleKey,
        languages: [...sample.languages],
        outputs: [...sample.outputs],
        strings: sample.strings.length,
      }
    },
    seed(seedOptions = {}) {
      const sample = createSampleProject({ ...seedDefaults, ...seedOptions })
      world = { sample, statuses: new StatusStore(sample) }
      return sample
    },
    configure(patch) {
      return applySettingsPatch(settings, patch)
    },
    sendPending: (sendOptions) => sender.sendPending(sendOptions),
    sendEvents: (events, sendOptions) => sender.sendEvents(events, sendOptions),
    sendRaw: (request) => sender.sendRaw(request),
    deliveries: () => sender.totals,
    resend(filter = {}) {
      let n = 0
      for (const { str, languageId } of world.statuses.select({ ...filter, status: 'FAILED' })) {
        world.statuses.set(str.id, languageId, 'NEED_PROCESS')
        n++
      }
      return n
    },
    statuses: (filter) => world.statuses.views(filter),
    status(stringId, languageId) {
      const str = world.sample.byId.get(stringId)
      return str ? world.statuses.view(str, languageId) : undefined
    },
    summary: () => world.statuses.summary(),
    progress: () => world.statuses.progress(),
    requestCounts: () => counter.snapshot(),
    requestCount: (endpoint, status) => counter.count(endpoint, status),
    maxInFlight: () => inFlight.max(),
    resetCounters() {
      counter.reset()
      inFlight.reset()
      sender.resetTotals()
    },
    authorizeDirect: (authOptions) => oauth.authorizeDirect(authOptions),
    expireAccessTokens: () => oauth.expireAccessTokens(),
    startAutoSend(intervalMs, sendOptions) {
      emulator.stopAutoSend()
      let running = false
      autoSend = setInterval(() => {
        if (running || !settings.webhookUrl) return
        running = true
        sender
          .sendPending(sendOptions)
          .catch((error: unknown) => log.warn({ err: error }, 'emulator: automatic send failed'))
          .finally(() => {
            running = false
          })
      }, intervalMs)
      autoSend.unref()
    },
    stopAutoSend() {
      if (autoSend) clearInterval(autoSend)
      autoSend = undefined
    },
    async stop() {
      emulator.stopAutoSend()
      await closeServer(server)
    },
  }

  const control = controlRoutes(emulator)
  app.use(control.routes()).use(control.allowedMethods())

  const server = createServer(app.callback())
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`
  log.info({ url }, 'emulator: listening')
  return emulator
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve())
    server.closeIdleConnections()
    setTimeout(() => server.closeAllConnections(), 1000).unref()
  })
}
