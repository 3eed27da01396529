// How many webhook bodies are read at once before their signature is checked. A body is read in
// full (up to BODY_LIMIT) before it can be verified, so without a bound anyone who can reach the
// worker makes it hold BODY_LIMIT bytes per stalled upload (10 stalled 19 MB uploads: +160 MB).
// Past the bound a request is answered 503 + Retry-After at once, its body never read, and the
// connection closed. The slot is held until the handler answers (the signature check is part of it).
import type { Middleware } from 'koa'

export const UNVERIFIED_RETRY_AFTER_SECONDS = 5

export function unverifiedBodyGate(max: number, onRefused?: () => void): Middleware {
  let reading = 0
  return async (ctx, next) => {
    if (reading >= max) {
      onRefused?.()
      ctx.status = 503
      ctx.set('Retry-After', String(UNVERIFIED_RETRY_AFTER_SECONDS))
      // Close rather than read and discard a body we refused to read.
      ctx.set('Connection', 'close')
      ctx.body = { error: { code: 'busy', message: `${max} webhook bodies are being read already; retry later` } }
      return
    }
    reading++
    try {
      await next()
    } finally {
      reading--
    }
  }
}
