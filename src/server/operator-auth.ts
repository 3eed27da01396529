// The operator's pages (`/`, `/oauth/start`) show which organizations are connected and start a
// connection. With OPERATOR_PASSWORD set they ask for it (HTTP Basic, any user name), compared in
// constant time; without it they are open, and the log says so once.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Middleware } from 'koa'
import type { Logger } from '../util/logger.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

export function operatorAuth(password: string, log: Logger): Middleware {
  if (!password) {
    log.warn('OPERATOR_PASSWORD is not set: the operator page and /oauth/start are open to anyone who can reach the worker')
    return async (_ctx, next) => next()
  }
  const expected = digest(password)
  return async (ctx, next) => {
    const header = ctx.get('authorization')
    const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header)
    const given = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : ''
    const colon = given.indexOf(':')
    // Hashing first gives both sides one length, so the comparison is constant-time.
    if (m && colon >= 0 && timingSafeEqual(digest(given.slice(colon + 1)), expected)) return next()
    ctx.status = 401
    ctx.set('WWW-Authenticate', 'Basic realm="Switchyard operator", charset="UTF-8"')
    ctx.type = 'text/plain'
    ctx.body = 'The operator pages need the OPERATOR_PASSWORD.'
  }
}
