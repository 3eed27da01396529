// GET /oauth/start and GET /oauth/callback: the authorization-code flow with PKCE (S256).
// The `state` is bound to the browser by a signed HttpOnly cookie; the PKCE verifier never leaves
// the server: it waits in the store under a hash of the state, for a few minutes, for one use.
import type { Middleware } from 'koa'
import { createHash } from 'node:crypto'
import { Router } from '@koa/router'
import type { Context } from 'koa'
import type Keyv from 'keyv'
import { isHttpsUrl } from '../config/base-url.js'
import type { Config } from '../config/load-config.js'
import { authorizeUrl, codeChallengeS256, randomToken, type TokenResponse } from '../platform/oauth-client.js'
import { hmac, open, safeEqual, seal } from '../platform/token-crypto.js'
import { TokenEndpointError } from '../platform/token-errors.js'
import { normalizeDomain, type TokenManager } from '../platform/token-manager.js'
import type { Logger } from '../util/logger.js'
import { koaBody } from 'koa-body'
import { escapeHtml, sendPage } from './operator-page.js'
import { refuseCrossSite } from './refuse-cross-site.js'

export const STATE_COOKIE = 'switchyard_oauth'
/** How long a started authorization may take before its state and verifier are forgotten. */
export const PENDING_TTL_MS = 10 * 60_000

/**
 * What waits in the store for a started authorization. The PKCE verifier is a secret for those
 * ten minutes (with an intercepted code it buys tokens), so it is sealed like the tokens, under a
 * key of its own derived from the token key and bound to the state, which the store never holds
 * (the entry's key is the state's hash).
 */
interface Pending {
  domain: string
  sealedVerifier: string
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
  const router = new Router({ sensitive: true, strict: true })
  const flow = new AuthorizationFlow(deps)
  const start: Middleware = (ctx) => flow.start(ctx)
  // Connecting is started by the operator page's form (POST) or a typed-in link (GET); either way
  // never by another site's page in the operator's browser (refuse-cross-site.ts).
  const sameSite = refuseCrossSite(deps.config.baseUrl)
  const form = koaBody({ urlencoded: true, json: false, text: false, multipart: false, formLimit: '2kb' } as Parameters<typeof koaBody>[0])
  const guard = deps.guard ?? (async (_ctx, next) => next())
  router.get('/oauth/start', sameSite, guard, start)
  router.post('/oauth/start', sameSite, guard, form, start)
  router.get('/oauth/callback', (ctx) => flow.callback(ctx))
  return router
}

/** The two ends of one authorization: sending the browser off, and taking its answer back. */
class AuthorizationFlow {
  private readonly config: Config
  private readonly tokens: TokenManager
  private readonly store: Keyv
  private readonly log: Logger
  private readonly cookieKey: Buffer
  private readonly verifierKey: Buffer
  private readonly secure: boolean
  /**
   * One callback per state in this instance, before the store is asked. Across instances sharing
   * the store the delete decides: only the request whose delete removed the entry goes on.
   */
  private readonly consuming = new Set<string>()

  constructor(deps: OAuthRouterDeps) {
    this.config = deps.config
    this.tokens = deps.tokens
    this.store = deps.store
    this.log = deps.log
    this.cookieKey = deps.tokens.derivedKey('oauth-state-cookie')
    this.verifierKey = deps.tokens.derivedKey('oauth-pending-verifier')
    this.secure = isHttpsUrl(deps.config.baseUrl)
  }

  /** GET or POST /oauth/start: a state and PKCE verifier stored, the browser sent to the authorization server. */
  async start(ctx: Context): Promise<void> {
    const { config } = this
    const missing = (['clientId', 'authUrl'] as const).filter((k) => !config[k]).map((k) => (k === 'clientId' ? 'CLIENT_ID' : 'AUTH_URL'))
    if (missing.length) {
      this.page(ctx, 503, 'OAuth is not configured', `Set ${missing.map((m) => `<code>${m}</code>`).join(' and ')} (see docs/connect.md), then try again.`)
      return
    }
    const posted = (ctx.request as { body?: Record<string, unknown> }).body?.domain
    const raw = typeof posted === 'string' ? posted : queryString(ctx, 'domain')
    const domain = normalizeDomain(raw)
    if (!domain) {
      this.page(
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
    const pending: Pending = { domain, sealedVerifier: seal(this.verifierKey, verifier, state), createdAt: Date.now() }
    if ((await this.store.set(pendingKey(state), pending, PENDING_TTL_MS)) === false) {
      this.page(ctx, 503, 'Store unavailable', 'The authorization could not be started because the store (STORE_URL) refused the write. Try again.')
      return
    }
    this.setCookie(ctx, `${state}.${hmac(this.cookieKey, state)}`, PENDING_TTL_MS / 1000)
    ctx.set('Cache-Control', 'no-store')
    ctx.set('Referrer-Policy', 'no-referrer')
    this.log.info({ domain }, 'authorization started; browser sent to the authorization server')
    ctx.redirect(authorizeUrl(config, { state, codeChallenge: codeChallengeS256(verifier) }))
  }

  /** GET /oauth/callback: the state checked and used up, the code exchanged, the tokens stored. */
  async callback(ctx: Context): Promise<void> {
    const state = queryString(ctx, 'state')
    if (!state) {
      this.page(ctx, 400, 'Authorization refused', 'The callback carries no <code>state</code>, so it cannot be matched to an authorization started here. Start again from the operator page.')
      return
    }
    if (!this.stateMatchesBrowser(ctx, state)) return
    const pending = await this.takePending(ctx, state)
    if (!pending) return
    const domain = pending.domain
    const again = `<p><a class="button" href="/oauth/start?domain=${escapeHtml(encodeURIComponent(domain))}">Try again</a></p>`
    const error = queryString(ctx, 'error')
    const code = queryString(ctx, 'code')
    if (error) {
      this.refused(ctx, domain, error, again)
      return
    }
    if (!code) {
      this.page(ctx, 400, 'Authorization failed', 'The callback carries neither a <code>code</code> nor an <code>error</code>.', again)
      return
    }
    const verifier = this.openVerifier(ctx, pending, state, again)
    if (verifier === undefined) return
    const response = await this.exchange(ctx, domain, code, verifier, again)
    if (!response) return

    const claims = jwtClaims(response.access_token)
    const claimed = claims?.domain
    if (typeof claimed === 'string' && claimed !== '' && normalizeDomain(claimed) !== domain) {
      this.log.warn({ domain, approvedFor: claimed.slice(0, 100) }, 'authorization approved for another organization; not stored')
      this.page(
        ctx,
        400,
        'Wrong organization',
        `Access was approved for <strong>${escapeHtml(claimed)}</strong>, but you asked to connect <strong>${escapeHtml(domain)}</strong>. Nothing was stored.`,
        again,
      )
      return
    }

    try {
      await this.tokens.saveTokenResponse(domain, response)
    } catch (error) {
      this.log.error({ domain, err: (error as Error).message }, 'authorization approved, but its tokens could not be stored: nothing was connected')
      this.page(
        ctx,
        503,
        'Store unavailable',
        `Access for <strong>${escapeHtml(domain)}</strong> was approved, but its tokens could not be stored (the store, <code>STORE_URL</code>, refused the write), so nothing was connected. Check the store, then start again.`,
        again,
      )
      return
    }
    // Webhooks name the organization by id; when the token says which one it is, remember it now.
    const orgId = claims?.organization_id
    if ((typeof orgId === 'string' && orgId) || typeof orgId === 'number') await this.tokens.rememberOrganization(String(orgId), domain)
    this.page(ctx, 200, 'Connected', `<strong>${escapeHtml(domain)}</strong> is connected. Switchyard now reports string statuses for it and keeps its tokens fresh.`)
  }

  /** Is `state` the one the signed cookie of this browser holds? Answers the refusal page when not. */
  private stateMatchesBrowser(ctx: Context, state: string): boolean {
    const cookie = readCookie(ctx, STATE_COOKIE)
    const dot = cookie?.lastIndexOf('.') ?? -1
    const cookieState = cookie && dot > 0 ? cookie.slice(0, dot) : undefined
    const cookieValid = cookie !== undefined && cookieState !== undefined && safeEqual(cookie.slice(dot + 1), hmac(this.cookieKey, cookieState))
    if (cookieValid && safeEqual(cookieState!, state)) return true
    this.log.warn({ hasCookie: cookie !== undefined }, 'OAuth callback refused: state does not match this browser')
    this.page(
      ctx,
      400,
      'Authorization refused: state mismatch',
      'This answer from the authorization server does not belong to an authorization started in this browser (the <code>state</code> does not match). ' +
        'It may have been started in another browser, have expired, or have been forged. Start again from the operator page, ' +
        `opened at the worker's public address <code>${escapeHtml(this.config.baseUrl)}</code> (the cookie that binds the state belongs to that address).`,
    )
    return false
  }

  /**
   * Single use: the pending entry is taken before anything else, whatever the outcome, and the
   * cookie cleared. Undefined (the refusal page answered) when it is unknown, expired, used or being used.
   */
  private async takePending(ctx: Context, state: string): Promise<Pending | undefined> {
    const key = pendingKey(state)
    if (this.consuming.has(key)) {
      this.page(ctx, 400, 'Authorization refused: state already used', 'This authorization is already being completed. Start again if it did not work.')
      return undefined
    }
    this.consuming.add(key)
    let pending: Pending | undefined
    try {
      pending = (await this.store.get<Pending>(key)) ?? undefined
      // Two instances may both have read it: the one whose delete removed it takes it.
      if (pending && !(await this.store.delete(key))) pending = undefined
    } finally {
      this.consuming.delete(key)
    }
    this.setCookie(ctx, '', 0)
    if (!pending) {
      this.page(
        ctx,
        400,
        'Authorization refused: unknown or used state',
        'This authorization is unknown, expired (it must be completed within 10 minutes) or was already completed. Start again from the operator page.',
      )
    }
    return pending
  }

  /**
   * The pending entry's verifier, or undefined (the failure page answered) when this instance
   * cannot open it: written with another TOKEN_KEY (a replica set up differently) or by a version
   * that stored it in the clear.
   */
  private openVerifier(ctx: Context, pending: Pending, state: string, again: string): string | undefined {
    try {
      if (typeof pending.sealedVerifier !== 'string') throw new Error('no sealed verifier')
      const verifier = open<unknown>(this.verifierKey, pending.sealedVerifier, state)
      if (typeof verifier === 'string') return verifier
    } catch {
      // answered below
    }
    this.log.warn({ domain: pending.domain }, 'OAuth callback refused: its started authorization cannot be read with this instance\'s token key (another TOKEN_KEY, or started before an upgrade)')
    this.page(
      ctx,
      400,
      'Authorization failed',
      'This authorization was started by an instance with another token key (<code>TOKEN_KEY</code>), or before an upgrade, so it cannot be completed here. Start again.',
      again,
    )
    return undefined
  }

  /** The authorization server answered `error` instead of a code: the user refused, or it failed. */
  private refused(ctx: Context, domain: string, error: string, again: string): void {
    if (error === 'access_denied') {
      this.log.warn({ domain }, 'authorization refused by the user')
      this.page(ctx, 403, 'Access not granted', `The authorization of <strong>${escapeHtml(domain)}</strong> was refused at the service, so nothing was connected.`, again)
    } else {
      this.log.warn({ domain, error: error.slice(0, 100) }, 'authorization server answered with an error')
      this.page(ctx, 400, 'Authorization failed', `The authorization server answered <code>${escapeHtml(error.slice(0, 100))}</code> for <strong>${escapeHtml(domain)}</strong>; nothing was connected.`, again)
    }
  }

  /** The code exchanged for tokens; undefined (the failure page answered) when the exchange failed. */
  private async exchange(ctx: Context, domain: string, code: string, verifier: string, again: string): Promise<TokenResponse | undefined> {
    try {
      return await this.tokens.exchangeCode(code, verifier)
    } catch (err) {
      const e = err instanceof TokenEndpointError ? err : new TokenEndpointError('token exchange failed', { retryable: true })
      this.log.warn({ domain, err: e.message }, 'authorization code exchange failed')
      if (e.oauthError === 'invalid_grant' || (e.status !== undefined && e.status >= 400 && e.status < 500)) {
        this.page(
          ctx,
          400,
          'Authorization failed',
          `The authorization server refused the code for <strong>${escapeHtml(domain)}</strong> (${escapeHtml(e.oauthError ?? `HTTP ${e.status}`)}): ` +
            'it was already used, it expired, or it does not match this authorization.',
          again,
        )
      } else {
        this.page(ctx, 502, 'Authorization failed', `The token exchange failed: ${escapeHtml(e.message)}`, again)
      }
      return undefined
    }
  }

  private page(ctx: Context, status: number, title: string, message: string, extra = ''): void {
    sendPage(
      ctx,
      this.config,
      status,
      title,
      `<h1>${escapeHtml(title)}</h1>\n<div class="card"><p>${message}</p>${extra}\n<p><a href="/">Back to the operator page</a></p></div>`,
    )
  }

  private setCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
    // Written by hand: Koa's cookies refuse `Secure` on a plain-HTTP hop behind a TLS proxy.
    const attrs = [`${STATE_COOKIE}=${value}`, 'Path=/oauth', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax']
    if (this.secure) attrs.push('Secure')
    ctx.append('Set-Cookie', attrs.join('; '))
  }
}
