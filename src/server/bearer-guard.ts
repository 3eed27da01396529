// A bearer token in front of one route (METRICS_TOKEN for /metrics), compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Middleware } from 'koa'

const digest = (s: string) => createHash('sha256').update(s).digest()

/** No token configured: the route stays open (the operator keeps it off the public address). */
export function bearerGuard(token: string | undefined, realm: string): Middleware {
  if (!token) return async (_ctx, next) => next()
  const expected = digest(token)
  return async (ctx, next) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))
    // Hashing first gives both sides one length, so the comparison is constant-time.
    if (m && timingSafeEqual(digest(m[1]!), expected)) return next()
    ctx.status = 401
    ctx.set('WWW-Authenticate', `Bearer realm="${realm}"`)
    ctx.type = 'text/plain'
    ctx.body = `${realm} needs "Authorization: Bearer <token>" (the worker's METRICS_TOKEN).`
  }
}
