// Connecting an organization must be the operator's own act, not something another site makes
// their browser do (which sends their HTTP Basic credentials along): a request that a browser
// marks as coming from another site (Sec-Fetch-Site) or, from a browser too old to say so, whose
// Origin is not this worker is refused with 403. Clients that send neither (curl, the service)
// are not browsers and cannot be made to send a request by a third party, so they pass.
import type { Context, Middleware } from 'koa'

export function isCrossSite(ctx: Context, baseUrl: string): boolean {
  const site = ctx.get('sec-fetch-site')
  // A browser that sends Sec-Fetch-Site (no page can set it) has said where the request comes
  // from: that decides. Its Origin may be `null` for the worker's own form (the operator page's
  // Referrer-Policy is no-referrer, under which a form post carries `Origin: null`).
  if (site) return site !== 'same-origin' && site !== 'none'
  // The worker's own origin as this request reached it (Host, or X-Forwarded-Host behind a
  // proxy), and the public one of BASE_URL. Not ctx.origin: in Koa 3 that can echo the header.
  const own = new Set([`${ctx.protocol}://${ctx.host}`, safeOrigin(baseUrl)])
  const origin = ctx.get('origin')
  if (origin) return !own.has(origin)
  // A browser too old for Sec-Fetch-Site sends no Origin on a GET navigation; its Referer, when
  // it sends one, still tells another site's link apart.
  const referer = ctx.get('referer')
  if (referer) return !own.has(safeOrigin(referer))
  return false
}

function safeOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

export function refuseCrossSite(baseUrl: string): Middleware {
  return async (ctx, next) => {
    if (!isCrossSite(ctx, baseUrl)) return next()
    ctx.status = 403
    ctx.type = 'text/plain'
    ctx.set('Cache-Control', 'no-store')
    ctx.body = 'Refused: this request came from another site. Start from the operator page of this worker.'
  }
}
