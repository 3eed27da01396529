// Counts requests to the emulated service by endpoint (method + route pattern) and status code,
// and status PATCH requests by organization, language and answer.
import type { Middleware } from 'koa'

export type RequestCounts = Record<string, Record<string, number>>

export class RequestCounter {
  private counts = new Map<string, Map<number, number>>()

  middleware(): Middleware {
    return async (ctx, next) => {
      try {
        await next()
      } finally {
        if (!ctx.path.startsWith('/_control')) {
          const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute
          const endpoint = `${ctx.method} ${route ? String(route) : '(no route)'}`
          let byStatus = this.counts.get(endpoint)
          if (!byStatus) this.counts.set(endpoint, (byStatus = new Map()))
          byStatus.set(ctx.status, (byStatus.get(ctx.status) ?? 0) + 1)
        }
      }
    }
  }

  snapshot(): RequestCounts {
    const out: RequestCounts = {}
    for (const [endpoint, byStatus] of this.counts) out[endpoint] = Object.fromEntries(byStatus)
    return out
  }

  /** Requests to one endpoint, optionally with one status. */
  count(endpoint: string, status?: number): number {
    const byStatus = this.counts.get(endpoint)
    if (!byStatus) return 0
    if (status !== undefined) return byStatus.get(status) ?? 0
    let total = 0
    for (const n of byStatus.values()) total += n
    return total
  }

  reset(): void {
    this.counts = new Map()
  }
}

/** Status PATCH requests (not operations) by organization, language and answer status. */
export class PatchCounter {
  private readonly counts = new Map<string, number>()

  count(organizationId: string, languageId: string, status: number): void {
    const key = `${organizationId}|${languageId}|${status}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }

  /** Requests matching every given field. */
  total(filter: { organizationId?: string; languageId?: string; status?: number }): number {
    let n = 0
    for (const [key, count] of this.counts) {
      const [org, lang, status] = key.split('|')
      if (filter.organizationId !== undefined && org !== filter.organizationId) continue
      if (filter.languageId !== undefined && lang !== filter.languageId) continue
      if (filter.status !== undefined && Number(status) !== filter.status) continue
      n += count
    }
    return n
  }

  clear(): void {
    this.counts.clear()
  }
}
