// What stands in front of every API call: the bearer token (401; valid only on its own
// organization's domain; a missing, unknown or foreign token is recorded as a protocol mistake,
// an expired one is not), the per-organization count of requests in flight (the service allows 20
// at once, then 429), and the injected faults (the organization's own, or the emulator-wide ones:
// latency, scripted statuses, random 500 and 429 with Retry-After, lost and late answers).
import type { Middleware } from 'koa'
import type { EmulatorSettings } from './emulator-settings.js'
import type { OAuthServer } from './oauth-server.js'
import { apiError } from './api-errors.js'
import type { MistakeLog } from './mistakes.js'
import type { Tenant } from './tenant.js'

/** Set by the organization-address middleware (tenant) and by the guard (organizationId). */
export interface ApiState { tenant: Tenant; organizationId: string }

export class InFlightCounter {
  private readonly current = new Map<string, number>()
  private readonly highest = new Map<string, number>()

  enter(organizationId: string): number {
    const now = (this.current.get(organizationId) ?? 0) + 1
    this.current.set(organizationId, now)
    if (now > (this.highest.get(organizationId) ?? 0)) this.highest.set(organizationId, now)
    return now
  }

  leave(organizationId: string): void {
    this.current.set(organizationId, (this.current.get(organizationId) ?? 1) - 1)
  }

  /** The most API requests each organization ever had in flight at once. */
  max(): Record<string, number> {
    return Object.fromEntries(this.highest)
  }

  now(): Record<string, number> {
    return Object.fromEntries(this.current)
  }

  reset(): void {
    this.highest.clear()
    for (const [org, n] of this.current) if (n > 0) this.highest.set(org, n)
  }
}

export function apiGuard(settings: EmulatorSettings, oauth: OAuthServer, inFlight: InFlightCounter, random: () => number, mistakes: MistakeLog): Middleware {
  return async (ctx, next) => {
    const state = ctx.state as ApiState
    const tenant = state.tenant
    const header = ctx.get('authorization')
    const token = /^bearer /i.test(header) ? header.slice(7).trim() : ''
    const found = token ? oauth.lookupAccessToken(token) : undefined
    if (!found || !found.live || found.grant.organizationId !== tenant.id) {
      // An expired token is the normal life of a token (refresh and retry); the rest are the app's mistakes.
      if (!token) mistakes.record('no-token', tenant.id, `${ctx.method} ${ctx.path}`, 'no bearer token')
      else if (!found) mistakes.record('invalid-token', tenant.id, `${ctx.method} ${ctx.path}`, 'a bearer token the service never issued')
      else if (found.grant.organizationId !== tenant.id) {
        mistakes.record('token-of-another-organization', tenant.id, `${ctx.method} ${ctx.path}`, `a token of organization ${found.grant.organizationId} on the domain of ${tenant.id} (${tenant.domain})`)
      }
      ctx.set('WWW-Authenticate', `Bearer error="invalid_token"`)
      return apiError(ctx, 401, token ? 'Unauthorized: the access token is invalid or expired' : 'Unauthorized: no bearer token')
    }
    if (tenant.tokensRefusedUntil > Date.now()) {
      ctx.set('WWW-Authenticate', `Bearer error="invalid_token"`)
      return apiError(ctx, 401, 'Unauthorized: the application was disconnected from this organization')
    }
    const org = tenant.id
    state.organizationId = org
    // In flight until the answer has left (or the connection closed), not only until the handler
    // returns: with zero latency a handler finishes within one tick and nothing would overlap.
    const inFlightNow = inFlight.enter(org)
    let left = false
    const leave = (): void => {
      if (left) return
      left = true
      inFlight.leave(org)
    }
    ctx.res.once('finish', leave)
    ctx.res.once('close', leave)
    {
      const faults = tenant.faults ?? settings.faults
      const [low, high] = faults.latencyMs
      if (high > 0) await sleep(low + random() * (high - low))
      if (faults.maxInFlight > 0 && inFlightNow > faults.maxInFlight) {
        ctx.set('Retry-After', String(Math.max(1, faults.retryAfterSeconds)))
        return apiError(ctx, 429, `Too many simultaneous requests (limit ${faults.maxInFlight})`)
      }
      const scripted = faults.nextStatuses.shift()
      if (scripted !== undefined) {
        if (scripted === 429 || scripted === 503) ctx.set('Retry-After', String(faults.retryAfterSeconds))
        return apiError(ctx, scripted, 'Injected fault')
      }
      if (faults.errorRate > 0 && random() < faults.errorRate) return apiError(ctx, 500, 'Internal server error (injected)')
      if (faults.rateLimitRate > 0 && random() < faults.rateLimitRate) {
        ctx.set('Retry-After', String(faults.retryAfterSeconds))
        return apiError(ctx, 429, 'Too many requests (injected)')
      }
      // A lost answer: the request is carried out, then the caller hears only an error (a gateway
      // that gave up while the service went on). Whatever it changed stays changed.
      // Only requests that change something (PATCH, POST): a lost answer to a read is just a failed read.
      const changes = ctx.method !== 'GET' && ctx.method !== 'HEAD'
      const lost = !changes ? undefined : faults.nextLostAnswers.shift() ?? (faults.lostAnswerRate > 0 && random() < faults.lostAnswerRate ? 502 : undefined)
      await next()
      if (lost !== undefined) apiError(ctx, lost, 'Bad gateway (injected after the request was carried out)')
      // A late answer: carried out, and the caller hears nothing while answers are held (read
      // again each time: configuring the faults replaces them). A caller that gave up ends it.
      if (changes) while ((tenant.faults ?? settings.faults).holdAnswers && !left) await sleep(10)
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
