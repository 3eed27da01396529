// The operator's pages (`/`, `/oauth/start`) show which organizations are connected and start a
// connection. With OPERATOR_PASSWORD set they ask for it (HTTP Basic, any user name), compared in
// constant time, and a client that keeps guessing wrong waits longer and longer (login-throttle).
// Without a password they are open only where nobody else can reach them (a loopback HOST, and
// then only to a request made on this host and addressed to a loopback name: one that a reverse
// proxy on the host forwards, with its X-Forwarded-For or Forwarded headers, comes from anyone, and
// so does one that names another host, as a page rebinding its own name to 127.0.0.1 does), or when the operator says so with
// OPERATOR_OPEN=true (e.g. behind a proxy that authenticates); otherwise they answer 403 and the
// start-up log says what to set.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Context, Middleware } from 'koa'
import type { Config } from '../config/load-config.js'
import type { Logger } from '../util/logger.js'
import { isLoopbackHost, operatorAccess, operatorAccessNote } from '../config/operator-access.js'
import { LoginThrottle, clientKey } from './login-throttle.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Headers a proxy adds for the client it forwards for (X-Forwarded-Proto too: Caddy sets it alone on some setups). */
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host', 'x-forwarded-proto']

/**
 * The name a request was addressed to (its Host, without the port), lower-cased; undefined when
 * it names none or no valid one.
 */
function requestedHost(ctx: Context): string | undefined {
  const host = ctx.req.headers.host
  if (!host) return undefined
  try {
    return new URL(`http://${host}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * A request made on this host itself: a loopback peer that no proxy forwarded, addressed to a
 * loopback name. A page of another site whose name it points at 127.0.0.1 (DNS rebinding) is a
 * loopback peer too, and its own origin, but names its own host (`*.localhost` never leaves the
 * machine: browsers resolve it themselves).
 */
export function isLocalRequest(ctx: Context): boolean {
  const peer = ctx.req.socket.remoteAddress
  const host = requestedHost(ctx)
  return peer !== undefined && isLoopbackHost(peer) && PROXY_HEADERS.every((h) => ctx.req.headers[h] === undefined) &&
    host !== undefined && (isLoopbackHost(host) || host.endsWith('.localhost'))
}

export function operatorAuth(config: Pick<Config, 'operatorPassword' | 'operatorOpen' | 'host'>, log: Logger, throttle = new LoginThrottle()): Middleware {
  const access = operatorAccess(config)
  if (access === 'open-loopback') {
    // Behind a reverse proxy on the same host every public client is a loopback peer: only a
    // request without a proxy's headers, from a loopback peer, is the operator's own.
    return async (ctx, next) => {
      if (isLocalRequest(ctx)) return next()
      ctx.status = 403
      ctx.type = 'text/plain'
      ctx.body = 'The operator pages have no OPERATOR_PASSWORD, so they are open only to a browser on the worker\'s own host, at a loopback address (http://127.0.0.1:PORT or http://localhost:PORT), not through a proxy. Set OPERATOR_PASSWORD to open them here.'
    }
  }
  if (access === 'open-opted-in') {
    log.warn(operatorAccessNote(config)!)
    return async (_ctx, next) => next()
  }
  if (access === 'refused') {
    log.error(`the operator page and /oauth/start are closed: set ${operatorAccessNote(config)}`)
    return async (ctx) => {
      ctx.status = 403
      ctx.type = 'text/plain'
      ctx.body = 'The operator pages are closed: the worker has no OPERATOR_PASSWORD and listens on a public address. Set OPERATOR_PASSWORD (or OPERATOR_OPEN=true to open them on purpose).'
    }
  }
  const expected = digest(config.operatorPassword)
  return async (ctx, next) => {
    const header = ctx.get('authorization')
    const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header)
    const client = clientKey(ctx.req.socket.remoteAddress, ctx.ip)
    if (m) {
      const wait = throttle.waitMs(client)
      if (wait > 0) {
        ctx.status = 429
        ctx.set('Retry-After', String(Math.ceil(wait / 1000)))
        ctx.type = 'text/plain'
        ctx.body = `Too many wrong passwords from this address; try again in ${Math.ceil(wait / 1000)} s.`
        return
      }
      const given = Buffer.from(m[1]!, 'base64').toString('utf8')
      const colon = given.indexOf(':')
      // Hashing first gives both sides one length, so the comparison is constant-time.
      if (colon >= 0 && timingSafeEqual(digest(given.slice(colon + 1)), expected)) {
        throttle.succeeded(client)
        return next()
      }
      throttle.failed(client)
      log.warn({ client }, 'wrong operator password')
    }
    ctx.status = 401
    ctx.set('WWW-Authenticate', 'Basic realm="Switchyard operator", charset="UTF-8"')
    ctx.type = 'text/plain'
    ctx.body = 'The operator pages need the OPERATOR_PASSWORD.'
  }
}
