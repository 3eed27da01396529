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
import { RequestCounter, type RequestCounts } from './request-counter.js'
import { DEFAULT_SEED, seededRandom, type SampleProject, type SeedOptions } from './sample-project.js'
import type { StatusFilter, StatusView, Summary } from './status-store.js'
import { WebhookSender, type DeliveryReport, type RawRequest, type RawResponse, type SendOptions } from './webhook-sender.js'
import { controlRoutes } from './control-routes.js'
import { Tenant, type OrganizationOptions, type SendBackOptions } from './tenant.js'
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
  for (const key of ['seed', 'strings', 'languages', 'defectRate', 'outputs', 'passOutput', 'failOutput', 'projectId', 'stepId', 'stepTitle', 'moduleKey', 'applicationIdentifier'] as const) {
    if (options[key] !== undefined) (seedDefaults as Record<string, unknown>)[key] = options[key]
  }

  // ---- Organizations: the first from the options (its app_secret is the `appSecret` setting), the
  // rest from `organizations` or `addOrganization`. Looked up by id or domain, one Map hit. ----
  const tenants: Tenant[] = []
  const byKey = new Map<string, Tenant>()
  const addTenant = (tenant: Tenant): Tenant => {
    if (byKey.has(tenant.id) || byKey.has(tenant.domain)) throw new Error(`emulator: organization ${tenant.id} / ${tenant.domain} exists already`)
    if (!/^[a-z0-9][a-z0-9-]*$/i.test(tenant.domain)) throw new Error(`emulator: organization domain "${tenant.domain}" must be letters, digits and dashes`)
    tenants.push(tenant)
    byKey.set(tenant.id, tenant)
    byKey.set(tenant.domain, tenant)
    return tenant
  }
  const first = addTenant(
    new Tenant(options.organizationId ?? DEFAULT_SEED.organizationId, options.domain ?? DEFAULT_SEED.domain, () => settings.appSecret, seedDefaults),
  )
  const tenant = (key?: string): Tenant => {
    if (key === undefined) return first
    const found = byKey.get(String(key))
    if (!found) throw new Error(`emulator: no organization "${key}" (have ${tenants.map((t) => `${t.id}/${t.domain}`).join(', ')})`)
    return found
  }
  const addOrganization = (o: OrganizationOptions): Tenant => {
    const secret = o.appSecret ?? randomBytes(24).toString('base64url')
    const { id, domain, appSecret: _secret, workflowId, templateId, ...seed } = o
    // Ids are global on the platform: another organization's project and step get their own by default.
    const n = tenants.length
    const ids = { projectId: (seedDefaults.projectId ?? DEFAULT_SEED.projectId) + 100 * n, stepId: (seedDefaults.stepId ?? DEFAULT_SEED.stepId) + 100 * n }
    return addTenant(
      new Tenant(id, domain, () => secret, { ...seedDefaults, ...ids, ...seed }, {
        ...(workflowId !== undefined ? { workflowId } : {}),
        ...(templateId !== undefined ? { templateId } : {}),
      }),
    )
  }
  for (const o of options.organizations ?? []) addOrganization(o)
  const mistakeLog = new MistakeLog()
  // PATCH status requests by organization|language|status: what "requests per group" is measured with.
  const patchCounts = new Map<string, number>()

  let url = ''
  const client = {
    clientId: options.clientId ?? 'switchyard-emulator',
    clientSecret: options.clientSecret ?? randomBytes(24).toString('base64url'),
    redirectUris: options.redirectUris ?? ['http://localhost:3000/oauth/callback'],
  }
  const oauth = new OAuthServer(
    settings,
    (key) => (key === undefined ? first.organization : byKey.get(key)?.organization),
    () => url,
    mistakeLog,
  )
  oauth.registerClient(client)
  const inFlight = new InFlightCounter()
  const counter = new RequestCounter()
  const sender = new WebhookSender(settings, () => tenants, tenant, log)
  const editor = new WorkflowEditor(settings, client, tenant)
  const random = seededRandom(first.sample.seed ^ 0x5eed)
  let autoSend: NodeJS.Timeout | undefined

  const app = new Koa()
  app.proxy = false
  // Which organization a request addresses: `/o/{domain}/...` (the prefix is removed before the
  // routes see the path), a `{domain}.localhost` host, or else the first organization.
  app.use(async (ctx, next) => {
    const state = ctx.state as ApiState
    const path = ctx.path
    if (path.startsWith('/o/')) {
      const end = path.indexOf('/', 3)
      const domain = decodeURIComponent(end < 0 ? path.slice(3) : path.slice(3, end))
      const found = byKey.get(domain)
      if (!found || found.domain !== domain) {
        ctx.status = 404
        ctx.body = { error: { code: 404, message: `Organization "${domain}" not found` } }
        return
      }
      state.tenant = found
      ctx.path = end < 0 ? '/' : path.slice(end)
    } else {
      const host = ctx.hostname
      if (host.endsWith('.localhost')) {
        const found = byKey.get(host.slice(0, -'.localhost'.length))
        if (!found) {
          ctx.status = 404
          ctx.body = { error: { code: 404, message: `Organization "${host}" not found` } }
          return
        }
        state.tenant = found
      } else {
        state.tenant = first
      }
    }
    await next()
  })
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
  const guard = apiGuard(settings, oauth, inFlight, random, mistakeLog)
  const countPatch = (organizationId: string, languageId: string, status: number): void => {
    const key = `${organizationId}|${languageId}|${status}`
    patchCounts.set(key, (patchCounts.get(key) ?? 0) + 1)
  }
  const api = apiRoutes(settings, guard, mistakeLog, countPatch)
  app.use(api.routes()).use(api.allowedMethods())
  const comments = commentRoutes((ctx) => (ctx.state as ApiState).tenant, guard)
  app.use(comments.routes()).use(comments.allowedMethods())

  const orgInfo = (t: Tenant): OrganizationInfo => ({
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
  })

  const emulator: Emulator = {
    openai,
    editor,
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
    info() {
      const { sample } = first
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
        organization: { ...first.organization },
        organizations: tenants.map(orgInfo),
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
      return first.seed(rest)
    },
    configure(patch) {
      return applySettingsPatch(settings, patch)
    },
    sendPending: (sendOptions) => sender.sendPending(sendOptions),
    sendEvents: (events, sendOptions) => sender.sendEvents(events, sendOptions),
    sendRaw: (request) => sender.sendRaw(request),
    deliveries: () => sender.totals,
    resend({ organization, ...filter } = {}) {
      return tenant(organization).resend(filter)
    },
    statuses: ({ organization, ...filter } = {}) => tenant(organization).statuses.views(filter),
    status(stringId, languageId, organization) {
      const t = tenant(organization)
      const str = t.sample.byId.get(stringId)
      return str ? t.statuses.view(str, languageId) : undefined
    },
    summary: (organization) => tenant(organization).statuses.summary(),
    progress(organization) {
      if (organization !== undefined) return tenant(organization).statuses.progress()
      if (tenants.length === 1) return first.statuses.progress()
      const total = { total: 0, done: 0, patchOperations: 0 }
      for (const t of tenants) {
        const p = t.statuses.progress()
        total.total += p.total
        total.done += p.done
        total.patchOperations += p.patchOperations
      }
      return total
    },
    organizations: () => tenants.map(orgInfo),
    addOrganization: (o) => orgInfo(addOrganization(o)),
    org: (organization) => tenant(organization),
    configureFaults(patch, organization) {
      const t = tenant(organization)
      t.faults = patch === null ? null : applyFaultPatch(t.faults ?? { ...settings.faults, nextStatuses: [] }, patch)
      return t.faults ?? settings.faults
    },
    sendBack: ({ organization, ...rest } = {}) => tenant(organization).sendBack(rest),
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
    mistakes: (filter) => mistakeLog.all(filter),
    assertNoMistakes: () => assertNoMistakes(mistakeLog),
    clearMistakes: () => mistakeLog.clear(),
    patchRequests(filter = {}) {
      const orgId = filter.organization !== undefined ? tenant(filter.organization).id : undefined
      let n = 0
      for (const [key, count] of patchCounts) {
        const [org, lang, status] = key.split('|')
        if (orgId !== undefined && org !== orgId) continue
        if (filter.languageId !== undefined && lang !== filter.languageId) continue
        if (filter.status !== undefined && Number(status) !== filter.status) continue
        n += count
      }
      return n
    },
    requestCounts: () => counter.snapshot(),
    requestCount: (endpoint, status) => counter.count(endpoint, status),
    maxInFlight: () => inFlight.max(),
    resetCounters() {
      counter.reset()
      inFlight.reset()
      sender.resetTotals()
      patchCounts.clear()
    },
    authorizeDirect: (authOptions) => oauth.authorizeDirect(authOptions),
    expireAccessTokens: (organization) => oauth.expireAccessTokens(organization === undefined ? undefined : tenant(organization).id),
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
