// The per-step settings routes the manifest names, for each pipeline (module key `:key`):
//   GET    /steps/:key/settings   the settings page for the workflow editor's iframe (url)
//   POST   /steps/:key/settings   the service saves a step's settings (updateSettingsUrl)
//   DELETE /steps/:key/settings   the step was deleted from a workflow or template (deleteSettingsUrl)
// Every one needs the service's JWT (verify-settings-token.ts) before anything else is read.
import { randomBytes } from 'node:crypto'
import { Router } from '@koa/router'
import createHttpError, { isHttpError } from 'http-errors'
import type { Context, Middleware, Next } from 'koa'
import { koaBody } from 'koa-body'
import type { Config } from '../config/load-config.js'
import { settingsFrameAncestors, settingsScriptSource } from '../config/settings-page.js'
import type { Logger } from '../util/logger.js'
import { renderSettingsPage } from './render-settings-page.js'
import type { SettingsService, StepRef } from './settings-service.js'
import { extractToken, verifySettingsToken, type SettingsToken } from './verify-settings-token.js'
import { deeperThan } from '../webhooks/limit-depth.js'

export interface SettingsTarget {
  key: string
  name: string
  settingsSchema: object
  resolveSettings(stored: unknown): { ok: true; settings: Record<string, unknown> } | { ok: false; errors: string[] }
  /** Option errors the checks that take settings would meet with these (resolved) settings. */
  checkSettings?(settings: Record<string, unknown>): Promise<string[]>
}

export interface SettingsRouterDeps {
  config: Config
  settings: SettingsService
  pipelines: () => { get(key: string): SettingsTarget | undefined }
  log: Logger
  /**
   * Binds the organization id to the domain a verified settings token names, when that domain is
   * connected here (TokenManager.bindFromSettings): deliveries then trust no header's domain for it.
   */
  bindOrganization?(id: string, domain: string): Promise<boolean>
}

export const SETTINGS_PATH = '/steps/:key/settings'
/** The path of a pipeline's settings routes, for the manifest (url, updateSettingsUrl, deleteSettingsUrl). */
export const settingsPathFor = (key: string): string => `/steps/${encodeURIComponent(key)}/settings`

/** Largest settings body accepted; settings are a handful of fields. */
export const SETTINGS_BODY_LIMIT = '100kb'
/** Deeper than any step's settings; shallow enough for every recursive copy and check of them. */
export const MAX_SETTINGS_DEPTH = 32

interface AuthedState {
  token: SettingsToken
  target: SettingsTarget
}

/** What a settings body the parser refused is answered with. */
function unparsedBody(error: unknown): Error {
  if (isHttpError(error) && error.status === 413) return createHttpError(413, `request body is larger than ${SETTINGS_BODY_LIMIT}`)
  // The parser refuses a key named __proto__ (it would set an object's prototype): the JSON is
  // valid, so the answer says what is wrong with it rather than that it does not parse.
  if (/forbidden prototype property/.test((error as Error)?.message ?? '')) return createHttpError(400, 'request body has a key named "__proto__", which is not accepted')
  return createHttpError(400, 'request body is not valid JSON')
}

/** The organization and domain a verified settings token names, bound (see SettingsRouterDeps.bindOrganization). */
async function bindOrganization({ bindOrganization: bind, log }: SettingsRouterDeps, token: SettingsToken): Promise<void> {
  if (!token.domain || !bind) return
  const { organizationId } = token.context
  await bind(organizationId, token.domain).then(
    (bound) => bound && log.info({ organization: organizationId, domain: token.domain!.slice(0, 100) }, 'organization bound to its domain, as its settings token names them'),
    (error: unknown) => log.warn({ err: error, organization: organizationId }, 'could not bind the organization to the domain its settings token names; tried again with its next token'),
  )
}

export function createSettingsRouter(deps: SettingsRouterDeps): Router {
  const { config, settings, log } = deps
  const csp = contentSecurityPolicy(config)
  const parseJson = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonStrict: true,
    jsonLimit: SETTINGS_BODY_LIMIT,
    parsedMethods: ['POST', 'DELETE'],
  } as Parameters<typeof koaBody>[0])

  // Answer errors here rather than relying on the app's error middleware: the service and the
  // iframe both get a clear message, and a 5xx never shows its details.
  const answerErrors = (format: 'json' | 'text'): Middleware => async (ctx: Context, next: Next) => {
    try {
      await next()
    } catch (error) {
      const status = isHttpError(error) ? error.status : 500
      const message = isHttpError(error) && error.expose ? error.message : 'internal error'
      if (status >= 500) log.error({ err: error, key: ctx.params?.key }, 'settings route failed')
      else log.info({ key: ctx.params?.key, method: ctx.method, status, reason: message }, 'settings request refused')
      ctx.status = status
      if (isHttpError(error) && error.headers) ctx.set(error.headers as Record<string, string>)
      ctx.set('Cache-Control', 'no-store')
      const details = isHttpError(error) && Array.isArray((error as { errors?: unknown }).errors) ? (error as unknown as { errors: string[] }).errors : undefined
      if (format === 'json') {
        ctx.body = { error: message, ...(details ? { errors: details } : {}) }
      } else {
        ctx.set('Content-Security-Policy', "default-src 'none'")
        ctx.type = 'text/plain; charset=utf-8'
        ctx.body = `${status} ${message}\n`
      }
    }
  }

  const authenticate: Middleware = async (ctx: Context, next: Next) => {
    const key = String(ctx.params.key)
    const token = await verifySettingsToken(extractToken(ctx.get('authorization') || undefined, ctx.query), {
      clientSecret: config.clientSecret,
      clientId: config.clientId || undefined,
      moduleKey: key,
    })
    await bindOrganization(deps, token)
    const target = deps.pipelines().get(key)
    if (!target) throw createHttpError(404, `no pipeline with the module key "${key}"`)
    ;(ctx.state as AuthedState).token = token
    ;(ctx.state as AuthedState).target = target
    await next()
  }

  const readBody = async (ctx: Context): Promise<Record<string, unknown>> => {
    const type = ctx.is('json', '+json')
    if (type === null) {
      // No body. A DELETE may name the step in the query string instead.
      if (ctx.method === 'DELETE') return { ...ctx.query }
      throw createHttpError(400, 'request body is missing: expected JSON')
    }
    if (type === false) throw createHttpError(415, 'request body must be application/json')
    try {
      // A body parser mounted before this router has consumed the stream already: use its result.
      if (ctx.request.body === undefined) await parseJson(ctx, async () => undefined)
    } catch (error) {
      throw unparsedBody(error)
    }
    const body = ctx.request.body as unknown
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw createHttpError(400, 'request body must be a JSON object')
    return body as Record<string, unknown>
  }

  const router = new Router({ sensitive: true, strict: true })

  router.get(SETTINGS_PATH, answerErrors('text'), authenticate, async (ctx) => {
    const { token, target } = ctx.state as AuthedState
    const stepId = positiveInt(first(ctx.query.stepId) ?? first(ctx.query.workflowStepId))
    const templateId = positiveInt(first(ctx.query.templateId))
    const projectId = token.context.projectId
    let stored: Record<string, unknown> | undefined
    let note: string | undefined
    let missingContext: string | undefined
    if (stepId === undefined || (templateId === undefined && projectId === undefined)) {
      // Defaults shown here and saved would overwrite the step's real settings: show no form.
      const lacking = stepId === undefined ? 'no step id (stepId) in the page address' : 'no project in the token and no templateId in the page address'
      missingContext = `This page does not know which step it edits (${lacking}), so it shows no settings rather than defaults that a save would write over the step's own. Open the settings from the step in the workflow editor.`
      log.info({ key: target.key, stepId, reason: lacking }, 'settings page opened without a step to edit')
    } else {
      const ref: StepRef = {
        organizationId: token.context.organizationId,
        moduleKey: target.key,
        stepId,
        ...(templateId !== undefined ? { templateId } : { projectId }),
      }
      assertInScope(ref, token)
      stored = await settings.get(ref)
      note = stored ? `Settings of step ${stepId}.` : `Step ${stepId} has no saved settings yet; showing the defaults.`
    }
    const nonce = randomBytes(16).toString('base64')
    ctx.set('Content-Security-Policy', csp(nonce))
    ctx.set('Cache-Control', 'no-store')
    ctx.set('Referrer-Policy', 'no-referrer')
    ctx.set('X-Content-Type-Options', 'nosniff')
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = renderSettingsPage({
      title: target.name,
      settingsSchema: target.settingsSchema,
      stored,
      nonce,
      scriptUrl: config.settingsScriptUrl || undefined,
      note,
      missingContext,
    })
  })

  router.post(SETTINGS_PATH, answerErrors('json'), authenticate, async (ctx) => {
    const { token, target } = ctx.state as AuthedState
    const body = await readBody(ctx)
    const ref = stepRefFrom(body, token, target.key)
    if (!Object.hasOwn(body, 'settings')) throw createHttpError(400, 'settings: required')
    const submitted = body.settings
    if (!submitted || typeof submitted !== 'object' || Array.isArray(submitted)) throw createHttpError(400, 'settings: must be an object')
    // JSON.parse takes any depth; the copy below, the store's serializer and the schema's checks
    // overflow the stack a few thousand levels down (a 20 KB body of brackets gave 500).
    if (deeperThan(submitted, MAX_SETTINGS_DEPTH)) throw createHttpError(400, 'settings are invalid', { errors: [`settings: nested deeper than ${MAX_SETTINGS_DEPTH} levels`] })
    // JSON.parse reads 1e400 as Infinity, which every schema `number` takes; the store writes it
    // as null: the step would run with a null it never saved (refused by its own schema).
    const infinite = nonFiniteAt(submitted, 'settings')
    if (infinite) throw createHttpError(400, 'settings are invalid', { errors: [`${infinite}: must be a finite number (too large to be stored)`] })
    // Validated on a copy (defaults applied there); stored as submitted, so a default the
    // pipeline changes later reaches every field the user never set.
    const result = target.resolveSettings(structuredClone(submitted))
    if (!result.ok) throw createHttpError(400, 'settings are invalid', { errors: result.errors })
    // Valid by the schema, but a check would refuse the options they make: every string of the
    // step would fail to start it.
    const refused = (await target.checkSettings?.(result.settings)) ?? []
    if (refused.length) throw createHttpError(400, 'settings are invalid', { errors: refused })
    await settings.put(ref, submitted as Record<string, unknown>)
    ctx.status = 200
    ctx.body = { status: 'saved' }
  })

  router.delete(SETTINGS_PATH, answerErrors('json'), authenticate, async (ctx) => {
    const { token, target } = ctx.state as AuthedState
    await deleteStep(ctx, { settings, log }, await readBody(ctx), token, target.key)
  })

  return router
}

/**
 * A step deleted in the workflow editor. Section 4.6 shows no body for a deletion, and anything
 * but a 2XX leaves it unconfirmed: one that names no step is confirmed, and deletes nothing (there
 * is nothing to tell which).
 */
async function deleteStep(ctx: Context, deps: Pick<SettingsRouterDeps, 'settings' | 'log'>, body: Record<string, unknown>, token: SettingsToken, moduleKey: string): Promise<void> {
  if (!present(body.stepId)) {
    deps.log.info({ key: moduleKey, organization: token.context.organizationId }, 'step deleted, but the request names no step: no settings deleted')
    ctx.status = 200
    ctx.body = { status: 'nothing to delete' }
    return
  }
  await deps.settings.delete(stepRefFrom(body, token, moduleKey))
  ctx.status = 200
  ctx.body = { status: 'deleted' }
}

/**
 * The step a callback is about: `{ organizationId, projectId, workflowId, stepId }` (a project's
 * workflow) or `{ organizationId, templateId, stepId }` (a workflow template). A body with both a
 * projectId and a templateId is taken as the project's.
 */
function stepRefFrom(body: Record<string, unknown>, token: SettingsToken, moduleKey: string): StepRef {
  const errors: string[] = []
  const org = body.organizationId
  if ((typeof org !== 'string' && typeof org !== 'number') || String(org) === '') errors.push('organizationId: required (string or number)')
  const stepId = positiveInt(body.stepId)
  if (stepId === undefined) errors.push('stepId: required, a positive integer')
  const projectId = positiveInt(body.projectId)
  const templateId = positiveInt(body.templateId)
  if (present(body.projectId) && projectId === undefined) errors.push('projectId: must be a positive integer')
  if (present(body.templateId) && templateId === undefined) errors.push('templateId: must be a positive integer')
  if (!present(body.projectId) && !present(body.templateId)) errors.push('projectId or templateId: one is required')
  if (errors.length) throw createHttpError(400, 'request body is invalid', { errors })
  if (String(org) !== token.context.organizationId) {
    throw createHttpError(403, 'organizationId of the request is not the organization the token was issued for')
  }
  const ref: StepRef = {
    organizationId: String(org),
    moduleKey,
    stepId: stepId as number,
    ...(projectId !== undefined ? { projectId } : { templateId }),
  }
  assertInScope(ref, token)
  return ref
}

/**
 * A token minted inside a project (its context names project_id) is about that project's
 * workflow only: another project's steps and every template are out of its reach. A token with
 * no project (the template editor) may reach any step of its organization.
 */
function assertInScope(ref: StepRef, token: SettingsToken): void {
  const own = token.context.projectId
  if (own === undefined) return
  if (ref.templateId !== undefined) throw createHttpError(403, `the token was issued for project ${own}; it may not change or read workflow templates`)
  if (ref.projectId !== own) throw createHttpError(403, `the token was issued for project ${own}, not for project ${ref.projectId}`)
}

const present = (v: unknown): boolean => v !== undefined && v !== null && v !== ''

/** Where (`settings.a.0`) the first number that is not finite lies in a parsed JSON value; undefined when none. */
function nonFiniteAt(value: unknown, at: string): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : at
  if (value === null || typeof value !== 'object') return undefined
  for (const [k, v] of Object.entries(value)) {
    const found = nonFiniteAt(v, `${at}.${k}`)
    if (found) return found
  }
  return undefined
}

function first(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v
}

function positiveInt(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}

/**
 * The page's CSP: nothing but its own nonce'd script and style and the service's iframe script.
 * frame-ancestors comes from SETTINGS_FRAME_ANCESTORS (default `*`): the page must be framed by
 * the service, whose address varies per organization, and it shows nothing without a token that
 * only the service can mint; operators who know the service's origin should narrow it.
 */
export function contentSecurityPolicy(config: Pick<Config, 'settingsScriptUrl' | 'settingsFrameAncestors'>): (nonce: string) => string {
  const script = settingsScriptSource(config.settingsScriptUrl)
  if (!script.ok) throw new Error(script.error)
  const frame = settingsFrameAncestors(config.settingsFrameAncestors)
  if (!frame.ok) throw new Error(frame.error)
  const scriptSources = script.source ? ["'self'", script.source] : ["'self'"]
  const ancestors = frame.ancestors
  return (nonce) =>
    [
      "default-src 'none'",
      `script-src ${scriptSources.join(' ')} 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      `frame-ancestors ${ancestors}`,
    ].join('; ')
}
