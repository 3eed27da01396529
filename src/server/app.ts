// The Koa app: routes and one error middleware that turns thrown http-errors into JSON answers,
// with `expose` deciding what the client sees. No business logic here.
import type { ReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import Router from '@koa/router'
import Koa, { type Middleware } from 'koa'
import type { Logger } from '../util/logger.js'
import type { Metrics } from '../util/metrics.js'
import { APP_LOGO, APP_LOGO_PATH, DEFAULT_STEP_LOGO, namesStep, WEBHOOK_PATH } from './manifest.js'
import { bearerGuard } from './bearer-guard.js'
import { LOGO_HEADERS, isServableLogoType } from './logo-headers.js'
import { unverifiedBodyGate } from './unverified-body-gate.js'

export interface AppDeps {
  log: Logger
  metrics: Metrics
  webhook: Middleware
  health(): Promise<Record<string, unknown>>
  ready(): Promise<{ ready: boolean; checks: Record<string, unknown> }>
  manifest(): Record<string, unknown>
  logo(key: string): { path: string; contentType: string } | undefined
  /** Webhook bodies read at once before their signature is checked (default: no bound), and how
   * long a request past that waits for a slot before 503. */
  unverifiedBodies?: { max: number; waitMs: number }
  /** When set, /metrics needs it as a bearer token. */
  metricsToken?: string
  /** The worker is stopping: every answer closes its connection, so the listener can close soon. */
  closing?(): boolean
  /** Routers of other parts (OAuth, settings, operator page), mounted as they are. */
  routers?: Router[]
}

export function errorMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      const e = error as { status?: number; statusCode?: number; expose?: boolean; message?: string; code?: string; headers?: Record<string, string> }
      const status = e.status ?? e.statusCode ?? 500
      if (status >= 500) log.error({ err: error, path: ctx.path }, 'request failed')
      ctx.status = status
      if (e.headers) ctx.set(e.headers)
      const message = e.expose ? (e.message ?? 'error') : status >= 500 ? 'internal error' : (e.message ?? 'error')
      ctx.body = { error: { code: e.code ?? (status >= 500 ? 'internal' : 'bad_request'), message } }
    }
  }
}

/**
 * Every answer of the worker is sent with `X-Content-Type-Options: nosniff`: none is meant to be
 * read as anything but the type it names. Set before the routes run, so that each answer has it:
 * the pages (which set it themselves too, with their other security headers), and also the errors
 * of the settings routes, the operator pages' refusals (401, 403, 429) and every JSON and text
 * answer, which had it not.
 */
const noSniffing: Middleware = async (ctx, next) => {
  ctx.set('X-Content-Type-Options', 'nosniff')
  await next()
}

/**
 * An error that escapes errorMiddleware (one of sending the answer, after the routes are done: a
 * body JSON.stringify refuses) is answered by Koa's own ctx.onerror, which first removes every
 * header set so far: the 500 went without nosniff, and without the `Connection: close` of a worker
 * stopping. Koa sets the headers the error carries: these go with them. (A body stream that fails
 * gets no answer at all: Koa pipes it with stream.pipeline, which destroys the response.)
 */
function keepHeadersOnErrors(app: Koa): void {
  const onerror = app.context.onerror
  app.context.onerror = function (this: Koa.Context, error: unknown) {
    if (error instanceof Error && !this.headerSent) {
      const e = error as Error & { headers?: Record<string, string> }
      const closing: Record<string, string> = this.response.get('Connection') === 'close' ? { Connection: 'close' } : {}
      e.headers = { ...e.headers, 'X-Content-Type-Options': 'nosniff', ...closing }
    }
    onerror.call(this, error as Error)
  }
}

/**
 * A logo file opened to be streamed. A file gone or unreadable (moved, or replaced by a directory,
 * after the pipelines were loaded) fails here, before any header is sent, and is answered as any
 * other error. Streamed from its path as it was, it failed only once the 200 and its headers were
 * out: Koa then destroys the response, and the client got no answer at all. Read from the handle
 * opened here, the file cannot go in between. (Koa destroys the stream, closing the handle, once
 * the response is over, a HEAD's or a dropped one's too.)
 */
async function openLogo(file: string): Promise<ReadStream> {
  const handle = await open(file, 'r')
  try {
    if (!(await handle.stat()).isFile()) throw new Error('not a file')
    return handle.createReadStream()
  } catch (error) {
    await handle.close().catch(() => undefined)
    throw error
  }
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa()
  app.proxy = true
  // Koa logs errors itself unless told otherwise; ours are logged (or not) by the middleware.
  app.silent = true
  keepHeadersOnErrors(app)
  app.use(noSniffing)
  app.use(errorMiddleware(deps.log))
  // A kept-alive connection would hold the listener open (and a request on it would be cut when
  // the drain is over): once stopping, each answer is the connection's last.
  if (deps.closing) {
    const closing = deps.closing
    app.use(async (ctx, next) => {
      try {
        await next()
      } finally {
        if (closing()) ctx.set('Connection', 'close')
      }
    })
  }

  // Exact case and no trailing slash, in every router of the worker: a proxy rule that keeps
  // `/metrics` off the public address (`location = /metrics` in nginx) was passed by /METRICS and by /metrics/.
  const router = new Router({ sensitive: true, strict: true })
  const bound = deps.unverifiedBodies
  const gate = bound ? [unverifiedBodyGate(bound.max, { waitMs: bound.waitMs, onRefused: () => deps.metrics.batches.inc({ result: 'busy_unverified' }) })] : []
  router.post(WEBHOOK_PATH, ...gate, deps.webhook)
  router.get('/healthz', async (ctx) => {
    ctx.body = await deps.health()
  })
  router.get('/readyz', async (ctx) => {
    const r = await deps.ready()
    ctx.status = r.ready ? 200 : 503
    ctx.body = r
  })
  router.get('/metrics', bearerGuard(deps.metricsToken, 'metrics'), async (ctx) => {
    ctx.type = deps.metrics.registry.contentType
    ctx.body = await deps.metrics.registry.metrics()
  })
  router.get('/manifest.json', (ctx) => {
    ctx.body = deps.manifest()
  })
  // Every logo the manifest names: the app's, and each step's (its pipeline's, else the default).
  router.get([APP_LOGO_PATH, '/steps/:key/logo'], async (ctx) => {
    const key = ctx.params.key
    const logo = key === undefined ? APP_LOGO : (deps.logo(key) ?? (namesStep(deps.manifest(), key) ? DEFAULT_STEP_LOGO : undefined))
    if (!logo) return ctx.throw(404, 'no logo for this step')
    if (!isServableLogoType(logo.contentType)) return ctx.throw(404, 'the logo of this step is not a png, svg, jpeg, webp or gif image')
    // A logo the manifest names is the worker's to have: one it cannot read is a 500, logged with why.
    const stream = await openLogo(logo.path).catch((error: unknown) => ctx.throw(500, `cannot read the logo file ${logo.path}: ${(error as Error).message}`))
    ctx.type = logo.contentType
    ctx.set(LOGO_HEADERS)
    ctx.body = stream
  })
  app.use(router.routes()).use(router.allowedMethods())
  for (const r of deps.routers ?? []) app.use(r.routes()).use(r.allowedMethods())
  return app
}
