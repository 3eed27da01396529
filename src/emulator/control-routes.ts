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
    const { body, headers, standardHeaders, url, method } = await readJson(ctx)
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? {})
    ctx.body = await bad(() =>
      emulator.sendRaw({
        body: text,
        ...(headers ? { headers: headers as Record<string, string> } : {}),
        ...(typeof standardHeaders === 'boolean' ? { standardHeaders } : {}),
        ...(typeof url === 'string' ? { url } : {}),
        ...(typeof method === 'string' ? { method } : {}),
      }),
    )
  })

  router.post('/resend', async (ctx) => {
    const filter = (await readJson(ctx)) as Pick<StatusFilter, 'languageId' | 'stringIds'>
    ctx.body = { resent: emulator.resend(filter) }
  })

  router.get('/statuses', (ctx) => {
    const { limit, offset = 0, ...filter } = filterFromQuery(ctx.query)
    const all = emulator.statuses(filter)
    ctx.body = { total: all.length, data: all.slice(offset, limit === undefined ? undefined : offset + limit) }
  })

  router.get('/summary', (ctx) => {
    ctx.body = emulator.summary()
  })

  router.get('/progress', (ctx) => {
    ctx.body = emulator.progress()
  })

  // The fake model endpoint under /v1: its stats, and its faults (latency for the benchmark).
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

  router.post('/authorize', async (ctx) => {
    const options = await readJson(ctx)
    ctx.body = await bad(() => emulator.authorizeDirect(options))
  })

  router.post('/expire-tokens', (ctx) => {
    ctx.body = { expired: emulator.expireAccessTokens() }
  })

  router.get('/strings', (ctx) => {
    const limit = Math.min(Number(ctx.query.limit ?? 100) || 100, 10_000)
    const offset = Number(ctx.query.offset ?? 0) || 0
    const { sample } = emulator
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

  return router
}
