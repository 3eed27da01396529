// The control API, /_control/* (JSON), so that a test or benchmark in another process can drive
// the emulator exactly as an in-process caller drives the `Emulator` object.
import { Router } from '@koa/router'
import type { Context } from 'koa'
import getRawBody from 'raw-body'
import createError from 'http-errors'
import type { FakeOpenAiFaults } from './fake-openai.js'
import type { Emulator } from './start-emulator.js'
import type { StatusFilter } from './status-store.js'
import type { SeedOptions } from './sample-project.js'
import type { SendOptions } from './webhook-sender.js'
import type { OrganizationOptions } from './tenant.js'
import type { MistakeKind } from './mistakes.js'
import type { EditorTarget } from './workflow-editor.js'

async function readJson(ctx: Context): Promise<Record<string, unknown>> {
  const raw = await getRawBody(ctx.req, { limit: '50mb', encoding: 'utf8' })
  if (raw.trim() === '') return {}
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch {
    throw createError(400, 'The body is not valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw createError(400, 'The body must be a JSON object')
  return body as Record<string, unknown>
}

/** Runs `fn`, turning a plain Error (bad option) into a 400 that names it. */
async function bad<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    if (createError.isHttpError(error)) throw error
    throw createError(400, (error as Error).message)
  }
}

function optionalOrg(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' && typeof value !== 'number') throw createError(400, 'organization must be an id or a domain')
  return String(value)
}

function queryOrg(query: Context['query']): string | undefined {
  return typeof query.organization === 'string' && query.organization !== '' ? query.organization : undefined
}

function numberList(value: unknown, name: string): number[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((n) => Number.isInteger(n))) throw createError(400, `${name} must be an array of integers`)
  return value as number[]
}

function filterFromQuery(query: Context['query']): StatusFilter & { limit?: number; offset?: number } {
  const one = (name: string): string | undefined => (typeof query[name] === 'string' && query[name] !== '' ? (query[name] as string) : undefined)
  const filter: StatusFilter & { limit?: number; offset?: number } = {}
  const languageId = one('languageId')
  const status = one('status')
  const output = typeof query.output === 'string' ? query.output : undefined
  const stringIds = one('stringIds')
  if (languageId) filter.languageId = languageId
  if (status) filter.status = status
  if (output !== undefined) filter.output = output
  if (stringIds) filter.stringIds = stringIds.split(',').map(Number)
  if (one('wrong') === 'true') filter.wrong = true
  if (one('conflicting') === 'true') filter.conflicting = true
  const limit = one('limit')
  const offset = one('offset')
  if (limit) filter.limit = Number(limit)
  if (offset) filter.offset = Number(offset)
  return filter
}

export function controlRoutes(emulator: Emulator): Router {
  const router = new Router({ prefix: '/_control' })
  serviceRoutes(router, emulator)
  organizationRoutes(router, emulator)
  platformActionRoutes(router, emulator)
  recordRoutes(router, emulator)
  tokenRoutes(router, emulator)
  editorRoutes(router, emulator)
  openAiRoutes(router, emulator)
  return router
}

/** The service itself: info, settings, the sample, sending webhooks, statuses. */
function serviceRoutes(router: Router, emulator: Emulator): void {
  router.get('/info', (ctx) => {
    ctx.body = emulator.info()
  })

  router.get('/settings', (ctx) => {
    ctx.body = emulator.settings
  })

  router.post('/settings', async (ctx) => {
    const patch = await readJson(ctx)
    ctx.body = await bad(() => emulator.configure(patch))
  })

  router.post('/seed', async (ctx) => {
    const options = (await readJson(ctx)) as SeedOptions
    await bad(() => emulator.seed(options))
    ctx.body = emulator.info()
  })

  router.post('/send', async (ctx) => {
    const options = (await readJson(ctx)) as SendOptions
    ctx.body = await bad(() => emulator.sendPending(options))
  })

  router.post('/send-events', async (ctx) => {
    const { events, ...options } = await readJson(ctx)
    if (!Array.isArray(events)) throw createError(400, 'events must be an array')
    ctx.body = await bad(() => emulator.sendEvents(events, options as SendOptions))
  })

  router.post('/send-raw', async (ctx) => {
    const { body, headers, standardHeaders, url, method, organization } = await readJson(ctx)
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? {})
    ctx.body = await bad(() =>
      emulator.sendRaw({
        body: text,
        ...(headers ? { headers: headers as Record<string, string> } : {}),
        ...(typeof standardHeaders === 'boolean' ? { standardHeaders } : {}),
        ...(typeof url === 'string' ? { url } : {}),
        ...(typeof method === 'string' ? { method } : {}),
        ...(optionalOrg(organization) !== undefined ? { organization: optionalOrg(organization)! } : {}),
      }),
    )
  })

  router.post('/resend', async (ctx) => {
    const filter = (await readJson(ctx)) as Pick<StatusFilter, 'languageId' | 'stringIds'> & { organization?: string }
    ctx.body = { resent: await bad(() => emulator.resend(filter)) }
  })

  router.get('/statuses', async (ctx) => {
    const { limit, offset = 0, ...filter } = filterFromQuery(ctx.query)
    const organization = queryOrg(ctx.query)
    const all = await bad(() => emulator.statuses({ ...filter, ...(organization ? { organization } : {}) }))
    ctx.body = { total: all.length, data: all.slice(offset, limit === undefined ? undefined : offset + limit) }
  })

  router.get('/summary', async (ctx) => {
    ctx.body = await bad(() => emulator.summary(queryOrg(ctx.query)))
  })

  router.get('/progress', async (ctx) => {
    ctx.body = await bad(() => emulator.progress(queryOrg(ctx.query)))
  })

  router.get('/strings', async (ctx) => {
    const limit = Math.min(Number(ctx.query.limit ?? 100) || 100, 10_000)
    const offset = Number(ctx.query.offset ?? 0) || 0
    const { sample } = await bad(() => emulator.org(queryOrg(ctx.query)))
    ctx.body = {
      total: sample.strings.length,
      data: sample.strings.slice(offset, offset + limit).map((str) => ({
        id: str.id,
        key: str.key,
        text: str.text,
        type: str.type,
        fileId: str.fileId,
        maxLength: str.maxLength,
        ...(str.sourcePlurals ? { plurals: str.sourcePlurals } : {}),
        translations: Object.fromEntries(
          [...str.translations].map(([lang, t]) => [lang, { text: t.text, ...(t.plurals ? { plurals: t.plurals } : {}), defect: t.defect, expected: t.expected }]),
        ),
      })),
    }
  })

  router.post('/auto-send', async (ctx) => {
    const { intervalMs, ...options } = await readJson(ctx)
    if (intervalMs === 0 || intervalMs === null) emulator.stopAutoSend()
    else if (typeof intervalMs === 'number' && intervalMs > 0) emulator.startAutoSend(intervalMs, options as SendOptions)
    else throw createError(400, 'intervalMs must be a positive number (0 stops)')
    ctx.body = { ok: true }
  })
}

/** Organizations and their own faults. */
function organizationRoutes(router: Router, emulator: Emulator): void {
  router.get('/organizations', (ctx) => {
    ctx.body = emulator.organizations()
  })

  router.post('/organizations', async (ctx) => {
    const options = (await readJson(ctx)) as unknown as OrganizationOptions
    ctx.body = await bad(() => emulator.addOrganization(options))
  })

  router.post('/faults', async (ctx) => {
    const { organization, faults } = await readJson(ctx)
    if (faults !== null && (typeof faults !== 'object' || Array.isArray(faults))) throw createError(400, 'faults must be an object or null')
    ctx.body = await bad(() => emulator.configureFaults(faults as Parameters<Emulator['configureFaults']>[0], optionalOrg(organization)))
  })
}

/** What managers, translators and the platform do to an organization. */
function platformActionRoutes(router: Router, emulator: Emulator): void {
  router.post('/send-back', async (ctx) => {
    const { organization, stringIds, languageId, text, breakAgain } = await readJson(ctx)
    const moved = await bad(() =>
      emulator.sendBack({
        ...(optionalOrg(organization) !== undefined ? { organization: optionalOrg(organization)! } : {}),
        ...(numberList(stringIds, 'stringIds') ? { stringIds: numberList(stringIds, 'stringIds')! } : {}),
        ...(typeof languageId === 'string' ? { languageId } : {}),
        ...(typeof text === 'string' ? { text } : {}),
        ...(breakAgain === true ? { breakAgain: true } : {}),
      }),
    )
    ctx.body = { sentBack: moved.length, strings: moved }
  })

  router.post('/edit-translations', async (ctx) => {
    const { organization, stringIds, languageId, text, breakAgain } = await readJson(ctx)
    const edited = await bad(() =>
      emulator.editTranslations({
        ...(optionalOrg(organization) !== undefined ? { organization: optionalOrg(organization)! } : {}),
        ...(numberList(stringIds, 'stringIds') ? { stringIds: numberList(stringIds, 'stringIds')! } : {}),
        ...(typeof languageId === 'string' ? { languageId } : {}),
        ...(typeof text === 'string' ? { text } : {}),
        ...(breakAgain === true ? { breakAgain: true } : {}),
      }),
    )
    ctx.body = { edited: edited.length, strings: edited }
  })

  router.post('/edit-source', async (ctx) => {
    const { organization, stringIds, append } = await readJson(ctx)
    const ids = numberList(stringIds, 'stringIds')
    if (!ids) throw createError(400, 'stringIds is required')
    if (typeof append !== 'string') throw createError(400, 'append must be a string')
    const moved = await bad(() => emulator.editSource({ stringIds: ids, append, ...(optionalOrg(organization) !== undefined ? { organization: optionalOrg(organization)! } : {}) }))
    ctx.body = { edited: moved.length, strings: moved }
  })

  router.post('/revoke', async (ctx) => {
    const { organization, ms } = await readJson(ctx)
    if (ms !== undefined && (typeof ms !== 'number' || ms < 0)) throw createError(400, 'ms must be a non-negative number (leave it out: until restored)')
    await bad(() => emulator.revoke(optionalOrg(organization), ms as number | undefined))
    ctx.body = { ok: true }
  })

  router.post('/refuse-tokens', async (ctx) => {
    const { organization, ms } = await readJson(ctx)
    if (ms !== undefined && (typeof ms !== 'number' || ms < 0)) throw createError(400, 'ms must be a non-negative number (leave it out: until restored)')
    await bad(() => emulator.refuseTokens(optionalOrg(organization), ms as number | undefined))
    ctx.body = { ok: true }
  })

  router.post('/restore', async (ctx) => {
    const { organization } = await readJson(ctx)
    await bad(() => emulator.restore(optionalOrg(organization)))
    ctx.body = { ok: true }
  })

  router.post('/remove-language', async (ctx) => {
    const { organization, languageId } = await readJson(ctx)
    if (typeof languageId !== 'string') throw createError(400, 'languageId is required')
    await bad(() => emulator.removeLanguage(languageId, optionalOrg(organization)))
    ctx.body = { ok: true }
  })

  router.post('/add-language', async (ctx) => {
    const { organization, languageId } = await readJson(ctx)
    if (typeof languageId !== 'string') throw createError(400, 'languageId is required')
    await bad(() => emulator.addLanguage(languageId, optionalOrg(organization)))
    ctx.body = { ok: true }
  })

  router.post('/untranslated', async (ctx) => {
    const { organization, stringIds, languageId } = await readJson(ctx)
    const ids = numberList(stringIds, 'stringIds')
    if (!ids) throw createError(400, 'stringIds is required')
    await bad(() => emulator.leaveUntranslated(ids, typeof languageId === 'string' ? languageId : undefined, optionalOrg(organization)))
    ctx.body = { ok: true }
  })

  router.post('/refuse-comments', async (ctx) => {
    const { organization, status } = await readJson(ctx)
    if (status !== null && !(Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 599)) throw createError(400, 'status must be an HTTP error status or null')
    await bad(() => emulator.refuseComments(status as number | null, optionalOrg(organization)))
    ctx.body = { ok: true }
  })

  router.get('/comments', async (ctx) => {
    const q = ctx.query
    const one = (name: string): string | undefined => (typeof q[name] === 'string' && q[name] !== '' ? (q[name] as string) : undefined)
    ctx.body = await bad(() =>
      emulator.comments({
        ...(queryOrg(q) ? { organization: queryOrg(q)! } : {}),
        ...(one('stringId') ? { stringId: Number(one('stringId')) } : {}),
        ...(one('languageId') ? { languageId: one('languageId')! } : {}),
        ...(one('type') ? { type: one('type')! } : {}),
        ...(one('issueStatus') ? { issueStatus: one('issueStatus')! } : {}),
      }),
    )
  })
}

/** What the emulator recorded of the app: protocol mistakes, PATCH requests, deliveries, request counts. */
function recordRoutes(router: Router, emulator: Emulator): void {
  router.get('/mistakes', (ctx) => {
    const kind = typeof ctx.query.kind === 'string' ? (ctx.query.kind as MistakeKind) : undefined
    const organizationId = typeof ctx.query.organizationId === 'string' ? ctx.query.organizationId : undefined
    const list = emulator.mistakes({ ...(kind ? { kind } : {}), ...(organizationId ? { organizationId } : {}) })
    ctx.body = { count: list.length, data: list }
  })

  router.post('/mistakes/clear', (ctx) => {
    emulator.clearMistakes()
    ctx.body = { ok: true }
  })

  router.get('/patch-requests', async (ctx) => {
    const q = ctx.query
    ctx.body = {
      count: await bad(() =>
        emulator.patchRequests({
          ...(queryOrg(q) ? { organization: queryOrg(q)! } : {}),
          ...(typeof q.languageId === 'string' ? { languageId: q.languageId } : {}),
          ...(typeof q.status === 'string' ? { status: Number(q.status) } : {}),
        }),
      ),
    }
  })

  router.get('/deliveries', (ctx) => {
    ctx.body = emulator.deliveries()
  })

  router.get('/requests', (ctx) => {
    ctx.body = { counts: emulator.requestCounts(), maxInFlight: emulator.maxInFlight() }
  })

  router.post('/reset-counters', (ctx) => {
    emulator.resetCounters()
    ctx.body = { ok: true }
  })
}

/** OAuth shortcuts: authorization in-process, access tokens expired at will. */
function tokenRoutes(router: Router, emulator: Emulator): void {
  router.post('/authorize', async (ctx) => {
    const options = await readJson(ctx)
    ctx.body = await bad(() => emulator.authorizeDirect(options))
  })

  router.post('/expire-tokens', async (ctx) => {
    const { organization } = await readJson(ctx)
    ctx.body = { expired: await bad(() => emulator.expireAccessTokens(optionalOrg(organization))) }
  })
}

/** The workflow editor: saves and deletes step settings at the app, mints the settings JWT. */
function editorRoutes(router: Router, emulator: Emulator): void {
  router.post('/editor/save', async (ctx) => {
    const { settings, ...target } = await readJson(ctx)
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) throw createError(400, 'settings must be an object')
    ctx.body = await bad(() => emulator.editor.saveSettings(settings as Record<string, unknown>, target as EditorTarget))
  })

  router.post('/editor/delete', async (ctx) => {
    const target = await readJson(ctx)
    ctx.body = await bad(() => emulator.editor.deleteStep(target as EditorTarget))
  })

  router.post('/editor/jwt', async (ctx) => {
    const target = await readJson(ctx)
    ctx.body = { jwt: await bad(() => emulator.editor.mintJwt(target as EditorTarget)) }
  })

  router.post('/editor/settings-page-url', async (ctx) => {
    const target = await readJson(ctx)
    ctx.body = { url: await bad(() => emulator.editor.settingsPageUrl(target as EditorTarget)) }
  })
}

/** The fake model endpoint under /v1: its stats, and its faults (latency for the benchmark). */
function openAiRoutes(router: Router, emulator: Emulator): void {
  router.get('/openai', (ctx) => {
    if (!emulator.openai) throw createError(404, 'the fake OpenAI endpoint is not mounted')
    ctx.body = emulator.openai.stats()
  })

  router.post('/openai', async (ctx) => {
    if (!emulator.openai) throw createError(404, 'the fake OpenAI endpoint is not mounted')
    const { faults, reset } = await readJson(ctx)
    if (reset === true) emulator.openai.reset()
    if (faults !== undefined) {
      if (typeof faults !== 'object' || faults === null || Array.isArray(faults)) throw createError(400, 'faults must be an object')
      emulator.openai.setFaults(faults as FakeOpenAiFaults)
    }
    ctx.body = emulator.openai.stats()
  })
}
