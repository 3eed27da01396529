// The operator's pages (`/`, `/oauth/start`) show which organizations are connected and start a
// connection. With OPERATOR_PASSWORD set they ask for it (HTTP Basic, any user name), compared in
// constant time, and a client that keeps guessing wrong waits longer and longer (login-throttle).
// Without a password they are open only where nobody else can reach them (a loopback HOST), or
// when the operator says so with OPERATOR_OPEN=true (e.g. behind a proxy that authenticates);
// otherwise they answer 403 and the start-up log says what to set.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Middleware } from 'koa'
import type { Config } from '../config/load-config.js'
import type { Logger } from '../util/logger.js'
import { operatorAccess, operatorAccessNote } from '../config/operator-access.js'
import { LoginThrottle, clientKey } from './login-throttle.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

export function operatorAuth(config: Pick<Config, 'operatorPassword' | 'operatorOpen' | 'host'>, log: Logger, throttle = new LoginThrottle()): Middleware {
  const access = operatorAccess(config)
  if (access === 'open-loopback') return async (_ctx, next) => next()
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
