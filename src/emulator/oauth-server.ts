// The emulator's authorization server (sections 4.1-4.3, 5.1): registered redirect URIs only,
// single-use codes, PKCE (S256 and plain) enforced when a challenge was sent, refresh-token
// rotation (an old refresh token is refused), client_secret required on refresh, JSON bodies only
// (a form body: 415), codes and tokens bound to the organization the user authorized in.
// Misuse an app should not make (form body, refresh without secret, a rotated refresh token) is
// also recorded as a protocol mistake.
// Access tokens are real HS256 JWTs, but checking one is a Map lookup: no crypto per API call.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { Router } from '@koa/router'
import type { Context } from 'koa'
import { SignJWT } from 'jose'
import getRawBody from 'raw-body'
import type { EmulatorSettings } from './emulator-settings.js'
import type { MistakeLog } from './mistakes.js'

export interface OAuthClient {
  clientId: string
  clientSecret: string
  redirectUris: string[]
}

export interface TokenResponse {
  access_token: string
  token_type: 'bearer'
  expires_in: number
  refresh_token: string
}

export interface Organization { id: string; domain: string }

interface CodeGrant {
  organizationId: string
  clientId: string
  redirectUri: string
  scope: string
  challenge: string | null
  method: 'S256' | 'plain' | null
  expiresAt: number
}

interface AccessGrant { organizationId: string; clientId: string; issuedAt: number; expiresAt: number }
interface RefreshGrant { organizationId: string; clientId: string; scope: string; used: boolean }

export interface AuthorizeDirectOptions {
  clientId?: string
  scope?: string
  /** Use PKCE (S256) instead of the client secret at exchange. Default true. */
  pkce?: boolean
  /** The organization (id or domain) the user authorizes in. Default the first. */
  organization?: string
}

const CODE_TTL_MS = 10 * 60_000
const UNRESERVED = /^[A-Za-z0-9\-._~]{43,128}$/

class OAuthError extends Error {
  constructor(readonly status: 400 | 401 | 415, readonly code: string, description: string) {
    super(description)
  }
}

function base64url(bytes: Buffer): string {
  return bytes.toString('base64url')
}

function s256(verifier: string): string {
  return base64url(createHash('sha256').update(verifier).digest())
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

export class OAuthServer {
  private readonly clients = new Map<string, OAuthClient>()
  private readonly codes = new Map<string, CodeGrant>()
  private readonly access = new Map<string, AccessGrant>()
  private readonly refresh = new Map<string, RefreshGrant>()
  private readonly jwtKey = randomBytes(32)
  private readonly issued: string[] = []
  /** Token requests answered, by grant and outcome, for tests. */
  readonly stats = { codesIssued: 0, tokensIssued: 0, refreshes: 0, refusedRefreshes: 0 }

  constructor(
    private readonly settings: EmulatorSettings,
    /** The organization named by id or domain (undefined: the first); undefined when unknown. */
    private readonly organization: (key?: string) => Organization | undefined,
    private readonly issuer: () => string,
    private readonly mistakes?: MistakeLog,
  ) {}

  registerClient(client: OAuthClient): void {
    this.clients.set(client.clientId, { ...client, redirectUris: [...client.redirectUris] })
  }

  /** The organization a live access token belongs to, or undefined (missing, unknown, expired). */
  verifyAccessToken(token: string): AccessGrant | undefined {
    const found = this.lookupAccessToken(token)
    return found?.live ? found.grant : undefined
  }

  /** The grant of an issued access token and whether it still works; undefined: never issued. */
  lookupAccessToken(token: string): { grant: AccessGrant; live: boolean } | undefined {
    const grant = this.access.get(token)
    if (!grant) return undefined
    const now = Date.now()
    const ttl = this.settings.faults.tokenTtlSeconds
    return { grant, live: !(now >= grant.expiresAt || (ttl !== null && now >= grant.issuedAt + ttl * 1000)) }
  }

  /** Makes every access token issued so far expired (refresh tokens stay valid). */
  /** Every access and refresh token and authorization code ever issued (tests look for leaks). */
  issuedSecrets(): string[] {
    return [...this.issued]
  }

  /** Every access token issued so far (to one organization, when given) stops working. */
  expireAccessTokens(organizationId?: string): number {
    let n = 0
    for (const grant of this.access.values()) {
      if (organizationId !== undefined && grant.organizationId !== organizationId) continue
      grant.expiresAt = 0
      n++
    }
    return n
  }

  /** The authorize + token exchange done in-process, for tests that are not about OAuth. */
  async authorizeDirect(options: AuthorizeDirectOptions = {}): Promise<TokenResponse> {
    const client = options.clientId ? this.clients.get(options.clientId) : this.clients.values().next().value
    if (!client) throw new Error(`emulator: no registered OAuth client ${options.clientId ?? ''}`.trim())
    const redirectUri = client.redirectUris[0]!
    const verifier = base64url(randomBytes(32))
    const pkce = options.pkce ?? true
    const org = this.organization(options.organization)
    if (!org) throw new Error(`emulator: no organization ${options.organization}`)
    const code = this.issueCode({
      organizationId: org.id,
      clientId: client.clientId,
      redirectUri,
      scope: options.scope ?? 'project',
      challenge: pkce ? s256(verifier) : null,
      method: pkce ? 'S256' : null,
    })
    return this.exchangeCode({
      grant_type: 'authorization_code',
      client_id: client.clientId,
      redirect_uri: redirectUri,
      code,
      ...(pkce ? { code_verifier: verifier } : { client_secret: client.clientSecret }),
    })
  }

  router(): Router {
    const router = new Router()
    router.get('/oauth/authorize', (ctx) => this.authorize(ctx))
    router.post('/oauth/token', async (ctx) => {
      try {
        const body = await readTokenBody(ctx, (detail) => this.mistakes?.record('token-form-body', '', `POST ${ctx.path}`, detail))
        const basic = basicCredentials(ctx.get('authorization'))
        if (basic) {
          body.client_id ??= basic.clientId
          body.client_secret ??= basic.clientSecret
        }
        ctx.set('Cache-Control', 'no-store')
        switch (body.grant_type) {
          case 'authorization_code':
            ctx.body = await this.exchangeCode(body)
            break
          case 'refresh_token':
            ctx.body = await this.refreshToken(body)
            break
          case undefined:
            throw new OAuthError(400, 'invalid_request', 'grant_type is required')
          default:
            throw new OAuthError(400, 'unsupported_grant_type', `grant_type ${body.grant_type} is not supported`)
        }
      } catch (error) {
        if (!(error instanceof OAuthError)) throw error
        ctx.status = error.status
        if (error.status === 401) ctx.set('WWW-Authenticate', 'Basic realm="oauth"')
        ctx.body = { error: error.code, error_description: error.message }
      }
    })
    return router
  }

  private authorize(ctx: Context): void {
    const q = ctx.query
    const one = (name: string): string | undefined => (typeof q[name] === 'string' ? (q[name] as string) : undefined)
    const clientId = one('client_id')
    const redirectUri = one('redirect_uri')
    const client = clientId ? this.clients.get(clientId) : undefined
    // Without a known client and a registered redirect URI there is nowhere safe to send the
    // user: answer with a page, never a redirect (open-redirect protection).
    if (!client) return errorPage(ctx, 'Unknown client', `No application is registered with client_id "${clientId ?? ''}".`)
    if (!redirectUri || !client.redirectUris.includes(redirectUri)) {
      return errorPage(ctx, 'Invalid redirect_uri', `The redirect URI "${redirectUri ?? ''}" is not registered for this application.`)
    }
    const state = one('state')
    const back = (params: Record<string, string>): void => {
      const target = new URL(redirectUri)
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v)
      if (state !== undefined) target.searchParams.set('state', state)
      ctx.redirect(target.toString())
    }
    if (one('response_type') !== 'code') {
      return back({ error: 'unsupported_response_type', error_description: 'response_type must be code' })
    }
    const scope = one('scope')
    if (!scope || !scope.trim()) return back({ error: 'invalid_scope', error_description: 'scope is required' })
    const challenge = one('code_challenge')
    const method = one('code_challenge_method')
    if ((challenge === undefined) !== (method === undefined)) {
      return back({ error: 'invalid_request', error_description: 'code_challenge and code_challenge_method go together' })
    }
    if (method !== undefined && method !== 'S256' && method !== 'plain') {
      return back({ error: 'invalid_request', error_description: 'code_challenge_method must be S256 or plain' })
    }
    if (challenge !== undefined && (method === 'S256' ? !/^[A-Za-z0-9_-]{43}$/.test(challenge) : !UNRESERVED.test(challenge))) {
      return back({ error: 'invalid_request', error_description: 'code_challenge is malformed' })
    }
    if (!this.settings.approve) return back({ error: 'access_denied', error_description: 'The user denied the request' })
    // The user approves inside one organization: the one whose address the request came to
    // (/o/{domain}/oauth/authorize), or `organization=` (id or domain), or the first.
    const tenantDomain = (ctx.state as { tenant?: { domain: string } }).tenant?.domain
    const org = this.organization(one('organization') ?? tenantDomain)
    if (!org) return back({ error: 'invalid_request', error_description: `no organization ${one('organization') ?? ''}` })
    const code = this.issueCode({
      organizationId: org.id,
      clientId: client.clientId,
      redirectUri,
      scope,
      challenge: challenge ?? null,
      method: (method as 'S256' | 'plain' | undefined) ?? null,
    })
    back({ code })
  }

  private issueCode(grant: Omit<CodeGrant, 'expiresAt'>): string {
    const code = base64url(randomBytes(24))
    this.issued.push(code)
    this.codes.set(code, { ...grant, expiresAt: Date.now() + CODE_TTL_MS })
    this.stats.codesIssued++
    return code
  }

  private client(body: TokenBody, secretRequired: boolean): OAuthClient {
    const client = body.client_id ? this.clients.get(body.client_id) : undefined
    if (!client) throw new OAuthError(401, 'invalid_client', 'Unknown client')
    if (body.client_secret !== undefined) {
      if (!sameText(body.client_secret, client.clientSecret)) throw new OAuthError(401, 'invalid_client', 'Client authentication failed')
    } else if (secretRequired) {
      throw new OAuthError(401, 'invalid_client', 'client_secret is required')
    }
    return client
  }

  private async exchangeCode(body: TokenBody): Promise<TokenResponse> {
    if (!body.code) throw new OAuthError(400, 'invalid_request', 'code is required')
    if (!body.redirect_uri) throw new OAuthError(400, 'invalid_request', 'redirect_uri is required')
    const grant = this.codes.get(body.code)
    // A code is spent by its first use, successful or not.
    this.codes.delete(body.code)
    const client = this.client(body, false)
    if (!grant || grant.expiresAt < Date.now() || grant.clientId !== client.clientId) {
      throw new OAuthError(400, 'invalid_grant', 'The authorization code is invalid, expired or already used')
    }
    // Without PKCE the client must authenticate with its secret (section 4.2).
    if (grant.challenge === null && body.client_secret === undefined) {
      throw new OAuthError(401, 'invalid_client', 'client_secret is required without code_verifier')
    }
    if (grant.redirectUri !== body.redirect_uri) throw new OAuthError(400, 'invalid_grant', 'redirect_uri does not match the authorization request')
    if (grant.challenge !== null) {
      const verifier = body.code_verifier
      if (!verifier) throw new OAuthError(400, 'invalid_grant', 'code_verifier is required')
      if (!UNRESERVED.test(verifier)) throw new OAuthError(400, 'invalid_grant', 'code_verifier is malformed')
      const derived = grant.method === 'S256' ? s256(verifier) : verifier
      if (!sameText(derived, grant.challenge)) throw new OAuthError(400, 'invalid_grant', 'code_verifier does not match the code_challenge')
    }
    return this.issueTokens(client.clientId, grant.scope, grant.organizationId)
  }

  private async refreshToken(body: TokenBody): Promise<TokenResponse> {
    if (body.client_secret === undefined) this.mistakes?.record('refresh-without-secret', '', 'POST /oauth/token', 'grant_type=refresh_token without client_secret')
    const client = this.client(body, true)
    if (!body.refresh_token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required')
    const grant = this.refresh.get(body.refresh_token)
    if (this.settings.faults.refuseRefresh) {
      this.stats.refusedRefreshes++
      throw new OAuthError(400, 'invalid_grant', 'The refresh token was revoked')
    }
    if (!grant || grant.clientId !== client.clientId || grant.used) {
      if (grant?.used) this.mistakes?.record('refresh-token-reused', grant.organizationId, 'POST /oauth/token', 'a refresh token that was already rotated away (use only the newest one)')
      this.stats.refusedRefreshes++
      throw new OAuthError(400, 'invalid_grant', 'The refresh token is invalid or was already used')
    }
    grant.used = true
    this.stats.refreshes++
    return this.issueTokens(client.clientId, grant.scope, grant.organizationId)
  }

  private async issueTokens(clientId: string, scope: string, organizationId: string): Promise<TokenResponse> {
    const org = this.organization(organizationId)
    if (!org) throw new OAuthError(400, 'invalid_grant', `organization ${organizationId} no longer exists`)
    const ttl = this.settings.faults.tokenTtlSeconds ?? this.settings.expiresIn
    const now = Date.now()
    const access = this.settings.faults.opaqueTokens
      ? base64url(randomBytes(32))
      : await new SignJWT({ scope, domain: org.domain, organization_id: org.id, client_id: clientId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(this.issuer())
        .setSubject('9001')
        .setAudience(clientId)
        .setJti(base64url(randomBytes(12)))
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor(now / 1000) + ttl)
        .sign(this.jwtKey)
    const refresh = base64url(randomBytes(32))
    this.issued.push(access, refresh)
    this.access.set(access, { organizationId: org.id, clientId, issuedAt: now, expiresAt: now + ttl * 1000 })
    this.refresh.set(refresh, { organizationId: org.id, clientId, scope, used: false })
    this.stats.tokensIssued++
    return { access_token: access, token_type: 'bearer', expires_in: ttl, refresh_token: refresh }
  }
}

interface TokenBody {
  grant_type?: string
  client_id?: string
  client_secret?: string
  redirect_uri?: string
  code?: string
  code_verifier?: string
  refresh_token?: string
}

const TOKEN_FIELDS = ['grant_type', 'client_id', 'client_secret', 'redirect_uri', 'code', 'code_verifier', 'refresh_token'] as const

async function readTokenBody(ctx: Context, formBody: (detail: string) => void): Promise<TokenBody> {
  const type = ctx.request.type
  let raw: string
  try {
    raw = await getRawBody(ctx.req, { limit: '64kb', encoding: 'utf8' })
  } catch {
    throw new OAuthError(400, 'invalid_request', 'The request body could not be read')
  }
  let fields: Record<string, unknown>
  if (type === 'application/json') {
    try {
      fields = JSON.parse(raw) as Record<string, unknown>
    } catch {
      throw new OAuthError(400, 'invalid_request', 'The body is not valid JSON')
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new OAuthError(400, 'invalid_request', 'The body must be a JSON object')
  } else {
    // Section 4.2/4.3 and the platform notes: JSON bodies only. A form body is refused (and
    // recorded: an app that sends one works against a lenient server and fails against the service).
    formBody(`Content-Type ${type || '(none)'}`)
    throw new OAuthError(415, 'invalid_request', 'Content-Type must be application/json')
  }
  const body: TokenBody = {}
  for (const name of TOKEN_FIELDS) {
    const value = fields[name]
    if (value === undefined || value === null) continue
    if (typeof value !== 'string') throw new OAuthError(400, 'invalid_request', `${name} must be a string`)
    body[name] = value
  }
  return body
}

function basicCredentials(header: string): { clientId: string; clientSecret: string } | undefined {
  if (!/^basic /i.test(header)) return undefined
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  return { clientId: decodeURIComponent(decoded.slice(0, colon)), clientSecret: decodeURIComponent(decoded.slice(colon + 1)) }
}

function errorPage(ctx: Context, title: string, message: string): void {
  ctx.status = 400
  ctx.type = 'text/html'
  ctx.body = `<!doctype html><html><head><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`
}
