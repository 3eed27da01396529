// Talking to `{AUTH_URL}/oauth/token` (code exchange, refresh) and the PKCE/state helpers of the
// authorization request. Written by hand: two POSTs and a SHA-256 don't justify an OAuth library,
// and we need exact control over what may reach an error message (never a token or a secret).
import { createHash, randomBytes } from 'node:crypto'
import type { Config } from '../config/load-config.js'
import { redactSecrets } from '../util/redact-secrets.js'
import { TokenEndpointError } from './token-errors.js'

/** Section 2.2 of the interface document. */
export interface TokenResponse {
  access_token: string
  token_type?: string
  expires_in?: number
  refresh_token?: string
  scope?: string
}

export type TokenGrant =
  | { grant_type: 'authorization_code'; code: string; code_verifier: string; redirect_uri: string }
  | { grant_type: 'refresh_token'; refresh_token: string }

/** 32 random bytes, base64url: an unguessable `state`, or a PKCE verifier (43 chars, RFC 7636 4.1). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url')
}

/** S256 code challenge of a verifier. */
export function codeChallengeS256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}

export function redirectUriOf(config: Pick<Config, 'baseUrl'>): string {
  return `${config.baseUrl.replace(/\/+$/, '')}/oauth/callback`
}

export function authorizeUrl(
  config: Pick<Config, 'authUrl' | 'clientId' | 'baseUrl' | 'oauthScopes'>,
  params: { state: string; codeChallenge: string },
): string {
  const url = new URL(`${config.authUrl.replace(/\/+$/, '')}/oauth/authorize`)
  url.searchParams.set('client_id', config.clientId)
  url.searchParams.set('redirect_uri', redirectUriOf(config))
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('scope', config.oauthScopes.trim().split(/\s+/).filter(Boolean).join(' '))
  url.searchParams.set('state', params.state)
  url.searchParams.set('code_challenge', params.codeChallenge)
  url.searchParams.set('code_challenge_method', 'S256')
  return url.toString()
}

// Errors that mean "this grant is dead, a person has to connect again"; everything else from the
// token endpoint is a configuration problem or transient.
const DEAD_GRANT_ERRORS = new Set(['invalid_grant', 'invalid_token', 'expired_token'])

export function isDeadGrant(err: unknown): boolean {
  return err instanceof TokenEndpointError && err.oauthError !== undefined && DEAD_GRANT_ERRORS.has(err.oauthError)
}

/** Remove every secret we sent from a text the server wrote, and keep it short. */
function scrub(text: string, secrets: string[]): string {
  // Anything that looks like a JWT or a long opaque credential goes too, whoever it belongs to.
  return redactSecrets(text, secrets).replace(/[\r\n\t]+/g, ' ').slice(0, 200)
}

function parseBody(text: string, contentType: string): Record<string, unknown> | undefined {
  if (!text) return undefined
  if (/json/i.test(contentType) || /^\s*[{[]/.test(text)) {
    try {
      const v: unknown = JSON.parse(text)
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
    } catch {
      return undefined
    }
  }
  if (/x-www-form-urlencoded/i.test(contentType)) return Object.fromEntries(new URLSearchParams(text))
  return undefined
}

/**
 * POST a grant to the token endpoint, as JSON (the service) or form-encoded (OAUTH_TOKEN_FORMAT=form).
 * Returns a validated token response; throws TokenEndpointError whose message names the status and
 * the OAuth error code but never echoes a token, a code, a verifier or the client secret.
 */
export async function requestToken(
  config: Pick<Config, 'authUrl' | 'clientId' | 'clientSecret' | 'oauthTokenFormat' | 'apiTimeoutMs'>,
  grant: TokenGrant,
  fetchImpl: typeof fetch = fetch,
): Promise<TokenResponse> {
  if (!config.authUrl) throw new TokenEndpointError('AUTH_URL is not set: cannot reach the token endpoint', { retryable: false })
  const url = `${config.authUrl.replace(/\/+$/, '')}/oauth/token`
  const fields: Record<string, string> = { ...grant, client_id: config.clientId }
  if (config.clientSecret) fields.client_secret = config.clientSecret
  const secrets = [config.clientSecret, ...Object.entries(grant).filter(([k]) => k !== 'grant_type' && k !== 'redirect_uri').map(([, v]) => v)]
  const form = config.oauthTokenFormat === 'form'
  let res: Response
  try {
    res = await fetchImpl(url, {
      method: 'POST',
      headers: {
        'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
        accept: 'application/json',
      },
      body: form ? new URLSearchParams(fields).toString() : JSON.stringify(fields),
      signal: AbortSignal.timeout(config.apiTimeoutMs || 30_000),
      redirect: 'error',
    })
  } catch (err) {
    const why = err instanceof Error ? `${err.name}: ${scrub(err.message, secrets)}` : 'network error'
    throw new TokenEndpointError(`token endpoint ${url} unreachable (${why})`, { retryable: true })
  }
  const text = await res.text().catch(() => '')
  const body = parseBody(text, res.headers.get('content-type') ?? '')
  if (!res.ok) {
    const oauthError = typeof body?.error === 'string' ? scrub(body.error, secrets) : undefined
    const description = typeof body?.error_description === 'string' ? `: ${scrub(body.error_description, secrets)}` : ''
    const retryable = res.status >= 500 || res.status === 429 || res.status === 408
    let hint = ''
    if (oauthError === 'invalid_client' || oauthError === 'unauthorized_client') hint = ' (check CLIENT_ID and CLIENT_SECRET)'
    throw new TokenEndpointError(
      `token endpoint refused the ${grant.grant_type} grant: HTTP ${res.status}${oauthError ? ` ${oauthError}` : ''}${description}${hint}`,
      { status: res.status, retryable, ...(oauthError ? { oauthError } : {}) },
    )
  }
  const accessToken = body?.access_token
  if (typeof accessToken !== 'string' || accessToken === '') {
    throw new TokenEndpointError(`token endpoint answered HTTP ${res.status} without an access_token`, { status: res.status, retryable: true })
  }
  const out: TokenResponse = { access_token: accessToken }
  if (typeof body?.token_type === 'string') out.token_type = body.token_type
  const expiresIn = Number(body?.expires_in)
  if (body?.expires_in !== undefined && Number.isFinite(expiresIn) && expiresIn > 0) out.expires_in = expiresIn
  if (typeof body?.refresh_token === 'string' && body.refresh_token !== '') out.refresh_token = body.refresh_token
  if (typeof body?.scope === 'string') out.scope = body.scope
  return out
}
