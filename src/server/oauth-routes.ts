// GET /oauth/start and GET /oauth/callback: the authorization-code flow with PKCE (S256).
// The `state` is bound to the browser by a signed HttpOnly cookie; the PKCE verifier never leaves
// the server: it waits in the store under a hash of the state, for a few minutes, for one use.
import type { Middleware } from 'koa'
import { createHash } from 'node:crypto'
import { Router } from '@koa/router'
import type { Context } from 'koa'
import type Keyv from 'keyv'
import type { Config } from '../config/load-config.js'
import { authorizeUrl, codeChallengeS256, randomToken } from '../platform/oauth-client.js'
import { hmac, safeEqual } from '../platform/token-crypto.js'
import { TokenEndpointError } from '../platform/token-errors.js'
import { normalizeDomain, type TokenManager } from '../platform/token-manager.js'
import type { Logger } from '../util/logger.js'
import { koaBody } from 'koa-body'
import { escapeHtml, sendPage } from './operator-page.js'
import { refuseCrossSite } from './refuse-cross-site.js'

export const STATE_COOKIE = 'switchyard_oauth'
/** How long a started authorization may take before its state and verifier are forgotten. */
export const PENDING_TTL_MS = 10 * 60_000

interface Pending {
  domain: string
  verifier: string
  createdAt: number
}

export interface OAuthRouterDeps {
  config: Config
  tokens: TokenManager
  /** Where pending authorizations wait (stores.state); entries expire after PENDING_TTL_MS. */
  store: Keyv
  log: Logger
}

const pendingKey = (state: string) => `oauth-pending:${createHash('sha256').update(state).digest('base64url')}`

function readCookie(ctx: Context, name: string): string | undefined {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

function queryString(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name]
  return typeof v === 'string' ? v : undefined
}

/** Payload of a JWT, unverified: only used to check the token was issued for the organization we asked for. */
function jwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const v: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'))
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

export function createOAuthRouter(deps: OAuthRouterDeps & { guard?: Middleware }): Router {
  const { config, tokens, store, log } = deps
  const router = new Router()
  const cookieKey = tokens.derivedKey('oauth-state-cookie')
  const secure = config.baseUrl.startsWith('https:')
  // One callback per state even when the store has no atomic take (two requests racing on one state).
  const consuming = new Set<string>()

  const page = (ctx: Context, status: number, title: string, message: string, extra = '') =>
    sendPage(
      ctx,
      config,
      status,
      title,
      `<h1>${escapeHtml(title)}</h1>\n<div class="card"><p>${message}</p>${extra}\n<p><a href="/">Back to the operator page</a></p></div>`,
    )

  const setCookie = (ctx: Context, value: string, maxAgeSeconds: number) => {
    // Written by hand: Koa's cookies refuse `Secure` on a plain-HTTP hop behind a TLS proxy.
    const attrs = [`${STATE_COOKIE}=${value}`, 'Path=/oauth', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax']
    if (secure) attrs.push('Secure')
    ctx.append('Set-Cookie', attrs.join('; '))
  }

  // Connecting is started by the operator page's form (POST) or a typed-in link (GET); either way
  // never by another site's page in the operator's browser (refuse-cross-site.ts).
  const sameSite = refuseCrossSite(config.baseUrl)
  const form = koaBody({ urlencoded: true, json: false, text: false, multipart: false, formLimit: '2kb' } as Parameters<typeof koaBody>[0])
  const start: Middleware = async (ctx) => {
    const missing = (['clientId', 'authUrl'] as const).filter((k) => !config[k]).map((k) => (k === 'clientId' ? 'CLIENT_ID' : 'AUTH_URL'))
    if (missing.length) {
      page(ctx, 503, 'OAuth is not configured', `Set ${missing.map((m) => `<code>${m}</code>`).join(' and ')} (see docs/connect.md), then try again.`)
      return
    }
    const posted = (ctx.request as { body?: Record<string, unknown> }).body?.domain
    const raw = typeof posted === 'string' ? posted : queryString(ctx, 'domain')
    const domain = normalizeDomain(raw)
    if (!domain) {
      page(
        ctx,
        400,
        'Which organization?',
        raw
          ? `<code>${escapeHtml(raw.slice(0, 100))}</code> is not an organization domain: use letters, digits, dots and dashes, like <code>acme</code>.`
          : 'Give the organization domain: <code>/oauth/start?domain=acme</code>, or use the form on the operator page.',
      )
      return
    }
    const state = randomToken()
    const verifier = randomToken()
    const pending: Pending = { domain, verifier, createdAt: Date.now() }
    if ((await store.set(pendingKey(state), pending, PENDING_TTL_MS)) === false) {
      page(ctx, 503, 'Store unavailable', 'The authorization could not be started because the store (STORE_URL) refused the write. Try again.')
      return
    }
    setCookie(ctx, `${state}.${hmac(cookieKey, state)}`, PENDING_TTL_MS / 1000)
    ctx.set('Cache-Control', 'no-store')
    ctx.set('Referrer-Policy', 'no-referrer')
    log.info({ domain }, 'authorization started; browser sent to the authorization server')
    ctx.redirect(authorizeUrl(config, { state, codeChallenge: codeChallengeS256(verifier) }))
  }
  const guard = deps.guard ?? (async (_ctx, next) => next())
  router.get('/oauth/start', sameSite, guard, start)
  router.post('/oauth/start', sameSite, guard, form, start)

  router.get('/oauth/callback', async (ctx) => {
    const state = queryString(ctx, 'state')
    const error = queryString(ctx, 'error')
    const code = queryString(ctx, 'code')
    if (!state) {
      page(ctx, 400, 'Authorization refused', 'The callback carries no <code>state</code>, so it cannot be matched to an authorization started here. Start again from the operator page.')
      return
    }
    const cookie = readCookie(ctx, STATE_COOKIE)
    const dot = cookie?.lastIndexOf('.') ?? -1
    const cookieState = cookie && dot > 0 ? cookie.slice(0, dot) : undefined
    const cookieValid = cookie !== undefined && cookieState !== undefined && safeEqual(cookie.slice(dot + 1), hmac(cookieKey, cookieState))
    if (!cookieValid || !safeEqual(cookieState!, state)) {
      log.warn({ hasCookie: cookie !== undefined }, 'OAuth callback refused: state does not match this browser')
      page(
        ctx,
        400,
        'Authorization refused: state mismatch',
        'This answer from the authorization server does not belong to an authorization started in this browser (the <code>state</code> does not match). ' +
          'It may have been started in another browser, have expired, or have been forged. Start again from the operator page, ' +
          `opened at the worker's public address <code>${escapeHtml(config.baseUrl)}</code> (the cookie that binds the state belongs to that address).`,
      )
      return
    }
    // Single use: take the pending entry before anything else, whatever the outcome.
    const key = pendingKey(state)
    if (consuming.has(key)) {
      page(ctx, 400, 'Authorization refused: state already used', 'This authorization is already being completed. Start again if it did not work.')
      return
    }
    consuming.add(key)
    let pending: Pending | undefined
    try {
      pending = (await store.get<Pending>(key)) ?? undefined
      if (pending) await store.delete(key)
    } finally {
      consuming.delete(key)
    }
    setCookie(ctx, '', 0)
    if (!pending) {
      page(
        ctx,
        400,
        'Authorization refused: unknown or used state',
        'This authorization is unknown, expired (it must be completed within 10 minutes) or was already completed. Start again from the operator page.',
      )
      return
    }
    const domain = pending.domain
    const again = `<p><a class="button" href="/oauth/start?domain=${escapeHtml(encodeURIComponent(domain))}">Try again</a></p>`

    if (error) {
      if (error === 'access_denied') {
        log.warn({ domain }, 'authorization refused by the user')
        page(ctx, 403, 'Access not granted', `The authorization of <strong>${escapeHtml(domain)}</strong> was refused at the service, so nothing was connected.`, again)
      } else {
        log.warn({ domain, error: error.slice(0, 100) }, 'authorization server answered with an error')
        page(ctx, 400, 'Authorization failed', `The authorization server answered <code>${escapeHtml(error.slice(0, 100))}</code> for <strong>${escapeHtml(domain)}</strong>; nothing was connected.`, again)
      }
      return
    }
    if (!code) {
      page(ctx, 400, 'Authorization failed', 'The callback carries neither a <code>code</code> nor an <code>error</code>.', again)
      return
    }

    let response
    try {
      response = await tokens.exchangeCode(code, pending.verifier)
    } catch (err) {
      const e = err instanceof TokenEndpointError ? err : new TokenEndpointError('token exchange failed', { retryable: true })
      log.warn({ domain, err: e.message }, 'authorization code exchange failed')
      if (e.oauthError === 'invalid_grant' || (e.status !== undefined && e.status >= 400 && e.status < 500)) {
        page(
          ctx,
          400,
          'Authorization failed',
          `The authorization server refused the code for <strong>${escapeHtml(domain)}</strong> (${escapeHtml(e.oauthError ?? `HTTP ${e.status}`)}): ` +
            'it was already used, it expired, or it does not match this authorization.',
          again,
        )
      } else {
        page(ctx, 502, 'Authorization failed', `The token exchange failed: ${escapeHtml(e.message)}`, again)
      }
      return
    }

    const claims = jwtClaims(response.access_token)
    const claimed = claims?.domain
    if (typeof claimed === 'string' && claimed !== '' && normalizeDomain(claimed) !== domain) {
      log.warn({ domain, approvedFor: claimed.slice(0, 100) }, 'authorization approved for another organization; not stored')
      page(
        ctx,
        400,
        'Wrong organization',
        `Access was approved for <strong>${escapeHtml(claimed)}</strong>, but you asked to connect <strong>${escapeHtml(domain)}</strong>. Nothing was stored.`,
        again,
      )
      return
    }

    await tokens.saveTokenResponse(domain, response)
    // Webhooks name the organization by id; when the token says which one it is, remember it now.
    const orgId = claims?.organization_id
    if ((typeof orgId === 'string' && orgId) || typeof orgId === 'number') await tokens.rememberOrganization(String(orgId), domain)
    page(ctx, 200, 'Connected', `<strong>${escapeHtml(domain)}</strong> is connected. Switchyard now reports string statuses for it and keeps its tokens fresh.`)
  })

  return router
}
