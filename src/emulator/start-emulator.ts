// Starts the emulated localization service on a loopback port: OAuth server, enterprise API
// (string statuses, translations, comments), webhook sender, workflow editor, fault injection,
// the record of protocol mistakes and the control API. Several organizations, each reached under
// its own domain: `/o/{domain}/api/v2/...` (or a `{domain}.localhost` host); the un-prefixed
// routes are the first organization's. One process-local object; `Emulator` is both what tests
// call and what /_control/* exposes.
import { createFakeOpenAi, type FakeOpenAi, type FakeOpenAiOptions } from './fake-openai.js'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa, { type Middleware } from 'koa'
import { silentLogger, type Logger } from '../util/logger.js'
import { applyFaultPatch, applySettingsPatch, defaultSettings, type EmulatorSettings, type FaultSettings, type SettingsPatch } from './emulator-settings.js'
import { OAuthServer, type AuthorizeDirectOptions, type TokenResponse } from './oauth-server.js'
import { apiRoutes } from './api-routes.js'
import { apiGuard, InFlightCounter, type ApiState } from './api-guard.js'
import { PatchCounter, RequestCounter, type RequestCounts } from './request-counter.js'
import { seededRandom, type SampleProject, type SeedOptions } from './sample-project.js'
import type { StatusFilter, StatusView, Summary } from './status-store.js'
import { WebhookSender, type DeliveryReport, type RawRequest, type RawResponse, type SendOptions } from './webhook-sender.js'
import { controlRoutes } from './control-routes.js'
import type { OrganizationOptions, SendBackOptions, Tenant } from './tenant.js'
import { Organizations } from './organizations.js'
import { assertNoMistakes, MistakeLog, type Mistake, type MistakeKind } from './mistakes.js'
import { commentRoutes, type CommentFilter, type StringComment } from './comments.js'
import { WorkflowEditor } from './workflow-editor.js'

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
  /**
   * Organizations beyond the first (which the options above describe), each with its id, domain,
   * app_secret and sample project. More can be added later with `addOrganization`.
   */
  organizations?: OrganizationOptions[]
}

/** What a test needs to know about one organization. */
export interface OrganizationInfo {
  id: string
  domain: string
  appSecret: string
  /** Its API address (path form, works on 127.0.0.1 without DNS). */
  apiUrl: string
  projectId: number
  workflowId: number
  templateId: number
  stepId: number
  moduleKey: string
  languages: string[]
  /** Languages still on the step (a language taken out of the step is not). */
  stepLanguages: string[]
  strings: number
}

/** Which organization a call is about: its id or domain; default the first. */
export interface InOrganization { organization?: string }

/** PATCH status requests counted by organization, language and answer. */
export interface PatchRequestFilter extends InOrganization { languageId?: string; status?: number }

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
  /** Every organization; the first is `organization`. */
  organizations: OrganizationInfo[]
  /** API_URL for a worker serving every organization: `${url}/o/{organization_domain}`. */
  apiUrlTemplate: string
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
  /** FAILED and parked (TODO) strings back to NEED_PROCESS (the manager's Resend); returns how many. */
  resend(filter?: Pick<StatusFilter, 'languageId' | 'stringIds'> & InOrganization): number
  statuses(filter?: StatusFilter & InOrganization): StatusView[]
  status(stringId: number, languageId: string, organization?: string): StatusView | undefined
  summary(organization?: string): Summary
  /** Pairs in total and DONE (every organization, or one), counted as statuses change (cheap to poll). */
  progress(organization?: string): { total: number; done: number; patchOperations: number }

  // ---- Organizations ----
  organizations(): OrganizationInfo[]
  /** Adds an organization (its own domain, app_secret, project, step, languages). */
  addOrganization(options: OrganizationOptions): OrganizationInfo
  /** The organization object itself (id, domain, sample, statuses, comments, ...); throws on an unknown one. */
  org(organization?: string): Tenant
  /** Faults of one organization only (the rest keep the emulator-wide ones); null goes back to those. */
  configureFaults(patch: Partial<FaultSettings> | null, organization?: string): FaultSettings

  // ---- What managers, translators and the platform do ----
  /** DONE strings sent back to the step with a changed translation, same revision: NEED_PROCESS again. */
  sendBack(options?: SendBackOptions & InOrganization): Array<{ stringId: number; languageId: string }>
  /** Translations of FAILED or TODO strings edited by a translator (status unchanged; a Resend brings them back). */
  editTranslations(options?: SendBackOptions & InOrganization): Array<{ stringId: number; languageId: string }>
  /** The source of strings edited (a new revision; `append` added to source and translations): NEED_PROCESS again. */
  editSource(options: { stringIds: number[]; append: string } & InOrganization): Array<{ stringId: number; languageId: string }>
  /** Status PATCHes of the organization answer 403 for `ms` (default: until `restore`). A refresh does not help. */
  revoke(organization?: string, ms?: number): void
  restore(organization?: string): void
  /** Every API request of the organization answers 401 for `ms` (default: until `restore`), even with a fresh token. */
  refuseTokens(organization?: string, ms?: number): void
  /** Takes a language out of the step: status GET/PATCH for it answer 404; it is no longer sent. */
  removeLanguage(languageId: string, organization?: string): void
  addLanguage(languageId: string, organization?: string): void
  /** The translations endpoint leaves these strings out (no translation yet), in one language or all. */
  leaveUntranslated(stringIds: number[], languageId?: string, organization?: string): void
  /** Every comments request of the organization answers this status (403, 500, ...); null serves them again. */
  refuseComments(status: number | null, organization?: string): void
  /** Comments and issues the app raised. */
  comments(filter?: CommentFilter & InOrganization): StringComment[]
  /** Unresolved issues on one (string, language). */
  openIssues(stringId: number, languageId: string, organization?: string): StringComment[]

  // ---- Protocol mistakes ----
  mistakes(filter?: { kind?: MistakeKind; organizationId?: string }): Mistake[]
  /** Throws, listing them, when the app made any protocol mistake. */
  assertNoMistakes(): void
  clearMistakes(): void
  /** Status PATCH requests (not operations) by organization, language and answer status. */
  patchRequests(filter?: PatchRequestFilter): number

  /** The workflow editor: saves and deletes step settings at the app, mints the settings JWT. */
  readonly editor: WorkflowEditor
  requestCounts(): RequestCounts
  /** Requests to one endpoint, e.g. `PATCH /api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status`. */
  requestCount(endpoint: string, status?: number): number
  /** The most API requests each organization ever had in flight at once. */
  maxInFlight(): Record<string, number>
  resetCounters(): void
  /** Authorization + token exchange in-process, for tests that are not about OAuth. */
  authorizeDirect(options?: AuthorizeDirectOptions): Promise<TokenResponse>
  /** Every access token issued so far (to one organization, when given) stops working (401); refresh tokens stay valid. */
  expireAccessTokens(organization?: string): number
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
  const settings = initialSettings(options)
  const organizations = new Organizations(seedDefaultsOf(options), {
    ...(options.organizationId !== undefined ? { id: options.organizationId } : {}),
    ...(options.domain !== undefined ? { domain: options.domain } : {}),
    appSecret: () => settings.appSecret,
  })
  for (const o of options.organizations ?? []) organizations.create(o)
  const first = organizations.first
  const mistakes = new MistakeLog()

  let url = ''
  const client = {
    clientId: options.clientId ?? 'switchyard-emulator',
    clientSecret: options.clientSecret ?? randomBytes(24).toString('base64url'),
    redirectUris: options.redirectUris ?? ['http://localhost:3000/oauth/callback'],
  }
  const oauth = new OAuthServer(settings, (key) => (key === undefined ? first.organization : organizations.find(key)?.organization), () => url, mistakes)
  oauth.registerClient(client)
  const tenant = (key?: string) => organizations.get(key)
  const core: EmulatorCore = {
    settings,
    organizations,
    client,
    oauth,
    sender: new WebhookSender(settings, () => organizations.list, tenant, log),
    counter: new RequestCounter(),
    inFlight: new InFlightCounter(),
    patches: new PatchCounter(),
    mistakes,
    log,
    url: () => url,
  }
  const openai = options.openai === false ? undefined : createFakeOpenAi(options.openai ?? {})
  const app = createServiceApp(core, [...(openai ? [{ path: '/v1', middleware: openai.middleware }] : []), ...(options.mounts ?? [])])

  const emulator: Emulator = {
    openai,
    editor: new WorkflowEditor(settings, client, tenant),
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
      return first.sample
    },
    settings,
    oauth,
    ...serviceMethods(core),
    ...organizationMethods(core),
    ...recordMethods(core),
    ...autoSendMethods(core),
    async stop() {
      emulator.stopAutoSend()
      await closeServer(server)
    },
  }

  const control = controlRoutes(emulator)
  app.use(control.routes()).use(control.allowedMethods())
  const server = await listenOn(app, options.port ?? 0, options.host ?? '127.0.0.1')
  url = serverUrl(server)
  log.info({ url }, 'emulator: listening')
  return emulator
}

/** The emulator-wide settings: the defaults, the named options, then `settings`. */
function initialSettings(options: EmulatorOptions): EmulatorSettings {
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
  return settings
}

/** The sample-project options every organization starts from. */
function seedDefaultsOf(options: EmulatorOptions): SeedOptions {
  const seedDefaults: SeedOptions = {}
  for (const key of ['seed', 'strings', 'languages', 'defectRate', 'outputs', 'passOutput', 'failOutput', 'projectId', 'stepId', 'stepTitle', 'moduleKey', 'applicationIdentifier'] as const) {
    if (options[key] !== undefined) (seedDefaults as Record<string, unknown>)[key] = options[key]
  }
  return seedDefaults
}

/** The parts of a running emulator that its routes and methods act on. */
interface EmulatorCore {
  settings: EmulatorSettings
  organizations: Organizations
  client: { clientId: string; clientSecret: string; redirectUris: string[] }
  oauth: OAuthServer
  sender: WebhookSender
  counter: RequestCounter
  inFlight: InFlightCounter
  patches: PatchCounter
  mistakes: MistakeLog
  log: Logger
  /** The base address, known once the server listens. */
  url: () => string
}

/** The Koa app of the service: organization routing, errors as JSON, mounts, OAuth, API, comments. */
function createServiceApp(core: EmulatorCore, mounts: EmulatorMount[]): Koa {
  const { settings, oauth, mistakes } = core
  const app = new Koa()
  app.proxy = false
  app.use(organizationRouting(core.organizations))
  app.use(core.counter.middleware())
  app.use(errorsAsJson(core.log))
  // Extra mounts: the fake OpenAI-compatible endpoint of fake-openai.ts under /v1, and whatever
  // whoever starts the emulator (demo, bench, tests) passes in.
  for (const mount of mounts) app.use(mounted(mount))
  const oauthRouter = oauth.router()
  app.use(oauthRouter.routes()).use(oauthRouter.allowedMethods())
  const random = seededRandom(core.organizations.first.sample.seed ^ 0x5eed)
  const guard = apiGuard(settings, oauth, core.inFlight, random, mistakes)
  const api = apiRoutes(settings, guard, mistakes, (organizationId, languageId, status) => core.patches.count(organizationId, languageId, status))
  app.use(api.routes()).use(api.allowedMethods())
  const comments = commentRoutes((ctx) => (ctx.state as ApiState).tenant, guard)
  app.use(comments.routes()).use(comments.allowedMethods())
  return app
}

/**
 * Which organization a request addresses: `/o/{domain}/...` (the prefix is removed before the
 * routes see the path), a `{domain}.localhost` host, or else the first organization.
 */
function organizationRouting(organizations: Organizations): Middleware {
  const notFound = (ctx: Koa.Context, name: string) => {
    ctx.status = 404
    ctx.body = { error: { code: 404, message: `Organization "${name}" not found` } }
  }
  return async (ctx, next) => {
    const state = ctx.state as ApiState
    const path = ctx.path
    if (path.startsWith('/o/')) {
      const end = path.indexOf('/', 3)
      const domain = decodeURIComponent(end < 0 ? path.slice(3) : path.slice(3, end))
      const found = organizations.find(domain)
      if (!found || found.domain !== domain) return notFound(ctx, domain)
      state.tenant = found
      ctx.path = end < 0 ? '/' : path.slice(end)
    } else if (ctx.hostname.endsWith('.localhost')) {
      const found = organizations.find(ctx.hostname.slice(0, -'.localhost'.length))
      if (!found) return notFound(ctx, ctx.hostname)
      state.tenant = found
    } else {
      state.tenant = organizations.first
    }
    await next()
  }
}

/** Errors answered as the service's JSON error body; 5xx messages hidden unless exposed. */
function errorsAsJson(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      const status = (error as { status?: number }).status ?? 500
      const expose = (error as { expose?: boolean }).expose ?? false
      ctx.status = status
      ctx.body = { error: { code: status, message: expose || status < 500 ? (error as Error).message : 'Internal Server Error' } }
      if (status >= 500) log.error({ err: error, path: ctx.path }, 'emulator: request failed')
    }
  }
}

/** A middleware run for requests under `mount.path` only, the prefix stripped when asked. */
function mounted(mount: EmulatorMount): Middleware {
  const prefix = mount.path.replace(/\/+$/, '')
  return async (ctx, next) => {
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
  }
}

function organizationInfo(t: Tenant, url: string): OrganizationInfo {
  return {
    id: t.id,
    domain: t.domain,
    appSecret: t.appSecret,
    apiUrl: `${url}/o/${t.domain}`,
    projectId: t.sample.project.id,
    workflowId: t.workflowId,
    templateId: t.templateId,
    stepId: t.sample.step.id,
    moduleKey: t.sample.step.applicationModule.moduleKey,
    languages: [...t.sample.languages],
    stepLanguages: [...t.sample.step.languages],
    strings: t.sample.strings.length,
  }
}

/** What the service holds and sends: the sample, settings, webhooks, statuses. */
function serviceMethods(core: EmulatorCore): Pick<
  Emulator,
  'info' | 'seed' | 'configure' | 'sendPending' | 'sendEvents' | 'sendRaw' | 'deliveries' | 'resend' | 'statuses' | 'status' | 'summary' | 'progress'
> {
  const { settings, sender, organizations } = core
  const tenant = (key?: string) => organizations.get(key)
  return {
    info() {
      const url = core.url()
      const { sample } = organizations.first
      return {
        url,
        authUrl: url,
        apiUrl: url,
        controlUrl: `${url}/_control`,
        clientId: core.client.clientId,
        clientSecret: core.client.clientSecret,
        redirectUris: [...core.client.redirectUris],
        appSecret: settings.appSecret,
        headerPrefix: settings.headerPrefix,
        organization: { ...organizations.first.organization },
        organizations: organizations.list.map((t) => organizationInfo(t, url)),
        apiUrlTemplate: `${url}/o/{organization_domain}`,
        projectId: sample.project.id,
        stepId: sample.step.id,
        moduleKey: sample.step.applicationModule.moduleKey,
        languages: [...sample.languages],
        outputs: [...sample.outputs],
        strings: sample.strings.length,
      }
    },
    seed(seedOptions = {}) {
      const { organizationId: _id, domain: _domain, ...rest } = seedOptions
      return organizations.first.seed(rest)
    },
    configure: (patch) => applySettingsPatch(settings, patch),
    sendPending: (sendOptions) => sender.sendPending(sendOptions),
    sendEvents: (events, sendOptions) => sender.sendEvents(events, sendOptions),
    sendRaw: (request) => sender.sendRaw(request),
    deliveries: () => sender.totals,
    resend: ({ organization, ...filter } = {}) => tenant(organization).resend(filter),
    statuses: ({ organization, ...filter } = {}) => tenant(organization).statuses.views(filter),
    status(stringId, languageId, organization) {
      const t = tenant(organization)
      const str = t.sample.byId.get(stringId)
      return str ? t.statuses.view(str, languageId) : undefined
    },
    summary: (organization) => tenant(organization).statuses.summary(),
    progress(organization) {
      if (organization !== undefined) return tenant(organization).statuses.progress()
      if (organizations.list.length === 1) return organizations.first.statuses.progress()
      const total = { total: 0, done: 0, patchOperations: 0 }
      for (const t of organizations.list) {
        const p = t.statuses.progress()
        total.total += p.total
        total.done += p.done
        total.patchOperations += p.patchOperations
      }
      return total
    },
  }
}

/** Organizations, and what managers, translators and the platform do to one. */
function organizationMethods(core: EmulatorCore): Pick<
  Emulator,
  | 'organizations' | 'addOrganization' | 'org' | 'configureFaults' | 'sendBack' | 'editSource' | 'editTranslations' | 'revoke' | 'restore' | 'refuseTokens'
  | 'removeLanguage' | 'addLanguage' | 'leaveUntranslated' | 'refuseComments' | 'comments' | 'openIssues'
> {
  const { organizations, settings } = core
  const tenant = (key?: string) => organizations.get(key)
  return {
    organizations: () => organizations.list.map((t) => organizationInfo(t, core.url())),
    addOrganization: (o) => organizationInfo(organizations.create(o), core.url()),
    org: (organization) => tenant(organization),
    configureFaults(patch, organization) {
      const t = tenant(organization)
      t.faults = patch === null ? null : applyFaultPatch(t.faults ?? { ...settings.faults, nextStatuses: [], nextLostAnswers: [] }, patch)
      return t.faults ?? settings.faults
    },
    sendBack: ({ organization, ...rest } = {}) => tenant(organization).sendBack(rest),
    editSource: ({ organization, ...rest }) => tenant(organization).editSource(rest),
    editTranslations: ({ organization, ...rest } = {}) => tenant(organization).editTranslations(rest),
    revoke: (organization, ms) => tenant(organization).revoke(ms),
    restore: (organization) => tenant(organization).restore(),
    refuseTokens: (organization, ms) => tenant(organization).refuseTokens(ms),
    removeLanguage: (languageId, organization) => tenant(organization).removeLanguage(languageId),
    addLanguage: (languageId, organization) => tenant(organization).addLanguage(languageId),
    leaveUntranslated: (stringIds, languageId, organization) => tenant(organization).setUntranslated(stringIds, languageId),
    refuseComments(status, organization) {
      tenant(organization).refuseComments = status
    },
    comments: ({ organization, ...filter } = {}) => tenant(organization).comments.list(filter),
    openIssues: (stringId, languageId, organization) =>
      tenant(organization).comments.list({ stringId, languageId, type: 'issue', issueStatus: 'unresolved' }),
  }
}

/** What the emulator recorded of the app: protocol mistakes, request counts, tokens. */
function recordMethods(core: EmulatorCore): Pick<
  Emulator,
  | 'mistakes' | 'assertNoMistakes' | 'clearMistakes' | 'patchRequests' | 'requestCounts' | 'requestCount' | 'maxInFlight'
  | 'resetCounters' | 'authorizeDirect' | 'expireAccessTokens'
> {
  const { mistakes, counter, inFlight, patches, oauth, organizations } = core
  return {
    mistakes: (filter) => mistakes.all(filter),
    assertNoMistakes: () => assertNoMistakes(mistakes),
    clearMistakes: () => mistakes.clear(),
    patchRequests: ({ organization, ...filter } = {}) =>
      patches.total({ ...filter, ...(organization !== undefined ? { organizationId: organizations.get(organization).id } : {}) }),
    requestCounts: () => counter.snapshot(),
    requestCount: (endpoint, status) => counter.count(endpoint, status),
    maxInFlight: () => inFlight.max(),
    resetCounters() {
      counter.reset()
      inFlight.reset()
      core.sender.resetTotals()
      patches.clear()
    },
    authorizeDirect: (authOptions) => oauth.authorizeDirect(authOptions),
    expireAccessTokens: (organization) => oauth.expireAccessTokens(organization === undefined ? undefined : organizations.get(organization).id),
  }
}

/** Sending NEED_PROCESS strings on a timer, one send at a time, as the service does. */
function autoSendMethods(core: EmulatorCore): Pick<Emulator, 'startAutoSend' | 'stopAutoSend'> {
  let autoSend: NodeJS.Timeout | undefined
  const stopAutoSend = () => {
    if (autoSend) clearInterval(autoSend)
    autoSend = undefined
  }
  return {
    startAutoSend(intervalMs, sendOptions) {
      stopAutoSend()
      let running = false
      autoSend = setInterval(() => {
        if (running || !core.settings.webhookUrl) return
        running = true
        core.sender
          .sendPending(sendOptions)
          .catch((error: unknown) => core.log.warn({ err: error }, 'emulator: automatic send failed'))
          .finally(() => {
            running = false
          })
      }, intervalMs)
      autoSend.unref()
    },
    stopAutoSend,
  }
}

async function listenOn(app: Koa, port: number, host: string): Promise<Server> {
  const server = createServer(app.callback())
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return server
}

function serverUrl(server: Server): string {
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve())
    server.closeIdleConnections()
    setTimeout(() => server.closeAllConnections(), 1000).unref()
  })
}
