// The emulated API: string statuses on a custom step (sections 4.4, 4.5 and the platform notes)
// and translations in bulk. Strict where the service is strict; every lookup is a Map hit so the
// benchmark can push thousands of requests a second through it.
import { Router } from '@koa/router'
import type { Context, Middleware } from 'koa'
import getRawBody from 'raw-body'
import type { EmulatorSettings } from './emulator-settings.js'
import { STRING_STATUSES, type StatusStore } from './status-store.js'
import { apiError, validationError } from './api-errors.js'
import type { ApiState } from './api-guard.js'
import type { MistakeLog } from './mistakes.js'
import type { Tenant, World } from './tenant.js'

export type { World } from './tenant.js'

const MAX_IDS = 500
const MAX_LIMIT = 500
const DEFAULT_LIMIT = 25
const OUTPUT_PATH = /^\/(\d+)\/output$/

type Query = Context['query']

class QueryError extends Error {
  constructor(readonly key: string, message: string) {
    super(message)
  }
}

function queryValue(query: Query, name: string): string | undefined {
  const value = query[name]
  if (Array.isArray(value)) throw new QueryError(name, `${name} must be given once`)
  return value === undefined || value === '' ? undefined : value
}

function intParam(query: Query, name: string, fallback: number, min: number, max: number): number {
  const raw = queryValue(query, name)
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw)) throw new QueryError(name, `${name} must be an integer`)
  const value = Number(raw)
  if (value < min || value > max) throw new QueryError(name, `${name} must be between ${min} and ${max}`)
  return value
}

function idsParam(query: Query): number[] | undefined {
  const raw = queryValue(query, 'stringIds')
  if (raw === undefined) return undefined
  const parts = raw.split(',')
  if (parts.length > MAX_IDS) throw new QueryError('stringIds', `stringIds takes at most ${MAX_IDS} ids, got ${parts.length}`)
  return parts.map((part) => {
    const id = part.trim()
    if (!/^\d+$/.test(id)) throw new QueryError('stringIds', `stringIds must be comma-separated integers, got "${part}"`)
    return Number(id)
  })
}

/** Resolves the project of the path for the caller's organization; answers 404 itself. */
function findProject(ctx: Context, world: World): boolean {
  const { sample } = world
  if (Number(ctx.params.projectId) !== sample.project.id || !/^\d+$/.test(ctx.params.projectId ?? '')) {
    apiError(ctx, 404, 'Project Not Found')
    return false
  }
  return true
}

function findStepLanguage(ctx: Context, world: World): boolean {
  if (!findProject(ctx, world)) return false
  const { step } = world.sample
  if (!/^\d+$/.test(ctx.params.stepId ?? '') || Number(ctx.params.stepId) !== step.id) {
    apiError(ctx, 404, 'Workflow Step Not Found')
    return false
  }
  if (!step.languages.includes(ctx.params.languageId ?? '')) {
    apiError(ctx, 404, `Language ${ctx.params.languageId} is not among the languages of workflow step ${step.id}`)
    return false
  }
  return true
}

function withQueryErrors(ctx: Context, run: () => void): void {
  try {
    run()
  } catch (error) {
    if (!(error instanceof QueryError)) throw error
    validationError(ctx, error.key, error.message)
  }
}

/** The API routes behind `guard` (token, in-flight limit, faults), which runs only on a matched route. */
export function apiRoutes(
  settings: EmulatorSettings,
  guard: Middleware,
  mistakes: MistakeLog,
  countPatch: (organizationId: string, languageId: string, status: number) => void = () => {},
): Router {
  const router = new Router()
  const tenantOf = (ctx: Context): Tenant => (ctx.state as ApiState).tenant
  // Every status PATCH request by organization, language and answer (401 and 429 included).
  const counted: Middleware = async (ctx, next) => {
    try {
      await next()
    } finally {
      countPatch(tenantOf(ctx).id, ctx.params.languageId ?? '', ctx.status)
    }
  }
  const statusPath = '/api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status'

  router.get(statusPath, guard, (ctx) => {
    const w = tenantOf(ctx).world
    if (!findStepLanguage(ctx, w)) return
    withQueryErrors(ctx, () => {
      const stringIds = idsParam(ctx.query)
      const status = queryValue(ctx.query, 'status')
      if (status !== undefined && !(STRING_STATUSES as readonly string[]).includes(status)) {
        throw new QueryError('status', `status must be one of ${STRING_STATUSES.join(', ')}`)
      }
      const limit = intParam(ctx.query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT)
      const offset = intParam(ctx.query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER)
      const data: Array<{ data: ReturnType<StatusStore['record']> }> = []
      let skipped = 0
      const filter = { languageId: ctx.params.languageId!, ...(status ? { status } : {}), ...(stringIds ? { stringIds } : {}) }
      for (const { str, languageId } of w.statuses.select(filter)) {
        if (skipped < offset) {
          skipped++
          continue
        }
        data.push({ data: w.statuses.record(str.id, languageId) })
        if (data.length >= limit) break
      }
      ctx.body = { data, pagination: { offset, limit } }
    })
  })

  router.patch(statusPath, counted, guard, async (ctx) => {
    const tenant = tenantOf(ctx)
    const w = tenant.world
    if (!findStepLanguage(ctx, w)) return
    // A manager (or the platform) took the app's right to update statuses away for a while: a
    // token refresh does not help, only time (or `restore()`).
    if (tenant.isRevoked()) return apiError(ctx, 403, 'Forbidden: the application may not update string statuses in this organization')
    if (!/json/.test(ctx.request.type)) {
      return apiError(ctx, 415, 'Content-Type must be application/json')
    }
    let body: unknown
    try {
      body = JSON.parse(await getRawBody(ctx.req, { limit: '5mb', encoding: 'utf8' }))
    } catch (error) {
      if ((error as { type?: string }).type === 'entity.too.large') return apiError(ctx, 413, 'Request body too large')
      return validationError(ctx, 'body', 'The body is not valid JSON')
    }
    if (!Array.isArray(body)) return validationError(ctx, 'body', 'The body must be a JSON array of patch operations')
    if (body.length === 0) return validationError(ctx, 'body', 'At least one patch operation is required')
    if (body.length > settings.maxPatchOperations) {
      return validationError(ctx, 'body', `At most ${settings.maxPatchOperations} operations per request, got ${body.length}`)
    }
    const { sample, statuses } = w
    const languageId = ctx.params.languageId!
    // Validate every operation before applying any: a bad request changes nothing.
    const ops: Array<{ stringId: number; value: string }> = []
    for (let i = 0; i < body.length; i++) {
      const op = body[i] as Record<string, unknown> | null
      const key = `${i}`
      if (typeof op !== 'object' || op === null || Array.isArray(op)) return validationError(ctx, key, `Operation ${i} must be an object`)
      if (op.op !== 'replace') return validationError(ctx, `${key}.op`, `Operation ${i}: op must be "replace"`)
      if (typeof op.path !== 'string') return validationError(ctx, `${key}.path`, `Operation ${i}: path must be a string like /<stringId>/output`)
      const match = OUTPUT_PATH.exec(op.path)
      if (!match) return validationError(ctx, `${key}.path`, `Operation ${i}: path "${op.path}" must have the shape /<stringId>/output`)
      const stringId = Number(match[1])
      if (!sample.byId.has(stringId)) return validationError(ctx, `${key}.path`, `Operation ${i}: string ${stringId} is not on workflow step ${sample.step.id}`, 'notFound')
      if (typeof op.value !== 'string') return validationError(ctx, `${key}.value`, `Operation ${i}: value must be a string (an output port or "")`)
      if (op.value !== '' && !sample.outputs.includes(op.value)) {
        return validationError(ctx, `${key}.value`, `Operation ${i}: "${op.value}" is not an output of workflow step ${sample.step.id} (outputs: ${sample.outputs.join(', ')})`)
      }
      ops.push({ stringId, value: op.value })
    }
    // A string that is not waiting at the step keeps its status and the request still answers 200
    // (the interface document names no error for it, and the platform routes a string once per
    // arrival): the app's mistake is recorded for the tests, not thrown back at it.
    const data = ops.map(({ stringId, value }) => {
      const { entry, result } = statuses.apply(stringId, languageId, value)
      if (result !== 'applied') {
        mistakes.record(result, tenant.id, `PATCH ${ctx.path}`, `string ${stringId} (${languageId}) is ${entry.status}${entry.output ? ` on ${entry.output}` : ''} after ${entry.answered} output(s) for ${entry.arrivals} arrival(s); PATCH asked for "${value}"`)
      }
      return { data: { stringId, languageId, stepId: sample.step.id, status: entry.status, output: entry.output } }
    })
    ctx.body = { data }
  })

  router.get('/api/v2/projects/:projectId/languages/:languageId/translations', guard, (ctx) => {
    const tenant = tenantOf(ctx)
    const w = tenant.world
    if (!findProject(ctx, w)) return
    const languageId = ctx.params.languageId!
    const { sample } = w
    if (!sample.project.targetLanguageIds.includes(languageId)) {
      return apiError(ctx, 404, `Language ${languageId} is not a target language of project ${sample.project.id}`)
    }
    withQueryErrors(ctx, () => {
      const stringIds = idsParam(ctx.query)
      const limit = intParam(ctx.query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT)
      const offset = intParam(ctx.query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER)
      const missing = tenant.untranslated.get(languageId)
      let strings = stringIds
        ? stringIds.map((id) => sample.byId.get(id)).filter((s) => s !== undefined)
        : sample.strings
      // Strings without a translation are simply absent from the list, as on the service.
      if (missing && missing.size > 0) strings = strings.filter((s) => !missing.has(s.id))
      const user = sample.translator
      const data = strings.slice(offset, offset + limit).map((str) => {
        const t = str.translations.get(languageId)!
        const common = { stringId: str.id, contentType: 'text/plain', translationId: t.translationId, user, createdAt: t.createdAt }
        return { data: t.plurals ? { ...common, plurals: t.plurals } : { ...common, text: t.text } }
      })
      ctx.body = { data, pagination: { offset, limit } }
    })
  })

  return router
}
