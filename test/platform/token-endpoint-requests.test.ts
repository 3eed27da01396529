// The token endpoint client on its own, against a recording fetch: what it sends for each grant
// and format, what it accepts back, how it words a refusal (status, OAuth error, a hint for client
// credentials) without ever echoing a secret, a code or a token, and which failures are worth a
// retry. Plus the authorization request's URL and PKCE challenge.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { authorizeUrl, codeChallengeS256, isDeadGrant, randomToken, redirectUriOf, requestToken } from '../../src/platform/oauth-client.js'
import { TokenEndpointError } from '../../src/platform/token-errors.js'

const config = { authUrl: 'https://auth.example.test/', clientId: 'client-1', clientSecret: 'very-secret-client', oauthTokenFormat: 'json' as const, apiTimeoutMs: 5000 }
const refresh = { grant_type: 'refresh_token' as const, refresh_token: 'refresh-token-abc' }
const code = { grant_type: 'authorization_code' as const, code: 'the-code-123', code_verifier: 'verifier-xyz-0001', redirect_uri: 'https://worker.test/oauth/callback' }

function fakeFetch(status: number, body: string, contentType = 'application/json') {
  const calls: Array<{ url: string; init: RequestInit }> = []
  const impl = (async (url: string, init: RequestInit) => {
    calls.push({ url, init })
    return new Response(body, { status, headers: { 'content-type': contentType } })
  }) as unknown as typeof fetch
  return { impl, calls }
}

async function refusal(promise: Promise<unknown>): Promise<TokenEndpointError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(TokenEndpointError)
  return error as TokenEndpointError
}

describe('requestToken', () => {
  it('posts the grant as JSON with the client credentials, and reads the answer', async () => {
    const { impl, calls } = fakeFetch(200, JSON.stringify({ access_token: 'at-1', token_type: 'bearer', expires_in: 7200, refresh_token: 'rt-2', scope: 'project' }))
    expect(await requestToken(config, refresh, impl)).toEqual({ access_token: 'at-1', token_type: 'bearer', expires_in: 7200, refresh_token: 'rt-2', scope: 'project' })
    expect(calls).toHaveLength(1)
    expect(calls[0]!.url).toBe('https://auth.example.test/oauth/token')
    const init = calls[0]!.init
    expect(init.method).toBe('POST')
    expect(init.redirect).toBe('error')
    expect(init.signal).toBeInstanceOf(AbortSignal)
    expect(init.headers).toEqual({ 'content-type': 'application/json', accept: 'application/json' })
    expect(JSON.parse(String(init.body))).toEqual({ grant_type: 'refresh_token', refresh_token: 'refresh-token-abc', client_id: 'client-1', client_secret: 'very-secret-client' })
  })

  it('posts form-encoded when told to, and sends no secret it does not have', async () => {
    const { impl, calls } = fakeFetch(200, 'access_token=at-1&expires_in=60', 'application/x-www-form-urlencoded')
    expect(await requestToken({ ...config, clientSecret: '', oauthTokenFormat: 'form' }, code, impl)).toEqual({ access_token: 'at-1', expires_in: 60 })
    expect((calls[0]!.init.headers as Record<string, string>)['content-type']).toBe('application/x-www-form-urlencoded')
    expect(Object.fromEntries(new URLSearchParams(String(calls[0]!.init.body)))).toEqual({ grant_type: 'authorization_code', code: 'the-code-123', code_verifier: 'verifier-xyz-0001', redirect_uri: 'https://worker.test/oauth/callback', client_id: 'client-1' })
  })

  it('reads a JSON answer whatever its content type says', async () => {
    const { impl } = fakeFetch(200, ' {"access_token":"at-9"}', 'text/plain')
    expect(await requestToken(config, refresh, impl)).toEqual({ access_token: 'at-9' })
  })

  it('keeps only the fields it understands, with usable values', async () => {
    const { impl } = fakeFetch(200, JSON.stringify({ access_token: 'at', token_type: 5, expires_in: -3, refresh_token: '', scope: ['x'] }))
    expect(await requestToken(config, refresh, impl)).toEqual({ access_token: 'at' })
    const text = fakeFetch(200, JSON.stringify({ access_token: 'at', expires_in: 'soon' }))
    expect(await requestToken(config, refresh, text.impl)).toEqual({ access_token: 'at' })
    const numeric = fakeFetch(200, JSON.stringify({ access_token: 'at', expires_in: '120' }))
    expect(await requestToken(config, refresh, numeric.impl)).toEqual({ access_token: 'at', expires_in: 120 })
  })

  it('refuses an answer without an access token, as worth a retry', async () => {
    for (const body of ['', '[]', '{"access_token":""}', 'not json', '{"token":"x"}']) {
      const { impl } = fakeFetch(200, body, body.startsWith('{') || body.startsWith('[') ? 'application/json' : 'text/html')
      const error = await refusal(requestToken(config, refresh, impl))
      expect(error.message).toBe('token endpoint answered HTTP 200 without an access_token')
      expect(error.retryable).toBe(true)
      expect(error.status).toBe(200)
    }
  })

  it('names the status and OAuth error of a refusal, with a hint for client credentials', async () => {
    const dead = await refusal(requestToken(config, refresh, fakeFetch(400, JSON.stringify({ error: 'invalid_grant', error_description: 'expired' })).impl))
    expect(dead.message).toBe('token endpoint refused the refresh_token grant: HTTP 400 invalid_grant: expired')
    expect(dead).toMatchObject({ status: 400, oauthError: 'invalid_grant', retryable: false })
    expect(isDeadGrant(dead)).toBe(true)
    for (const oauthError of ['invalid_client', 'unauthorized_client']) {
      const client = await refusal(requestToken(config, code, fakeFetch(401, JSON.stringify({ error: oauthError })).impl))
      expect(client.message).toBe(`token endpoint refused the authorization_code grant: HTTP 401 ${oauthError} (check CLIENT_ID and CLIENT_SECRET)`)
      expect(isDeadGrant(client)).toBe(false)
    }
    const bare = await refusal(requestToken(config, refresh, fakeFetch(403, 'Forbidden', 'text/plain').impl))
    expect(bare.message).toBe('token endpoint refused the refresh_token grant: HTTP 403')
    expect(bare.oauthError).toBeUndefined()
    const form = await refusal(requestToken(config, refresh, fakeFetch(400, 'error=invalid_token', 'application/x-www-form-urlencoded').impl))
    expect(form.oauthError).toBe('invalid_token')
  })

  it('retries server errors, 429 and 408, and nothing else', async () => {
    const cases: Array<[number, boolean]> = [[500, true], [503, true], [429, true], [408, true], [400, false], [401, false], [404, false], [499, false]]
    for (const [status, retryable] of cases) {
      const error = await refusal(requestToken(config, refresh, fakeFetch(status, '{"error":"x"}').impl))
      expect([status, error.retryable]).toEqual([status, retryable])
    }
  })

  it('never echoes the secret, the code, the verifier or the refresh token it sent, nor anything that looks like a credential', async () => {
    const jwt = `${'a'.repeat(12)}.${'b'.repeat(12)}.${'c'.repeat(12)}`
    const opaque = 'Z'.repeat(45)
    const description = `bad very-secret-client the-code-123 verifier-xyz-0001 refresh-token-abc ${jwt} ${opaque}\r\nnext line`
    const error = await refusal(requestToken(config, code, fakeFetch(400, JSON.stringify({ error: 'invalid_request the-code-123', error_description: description })).impl))
    for (const secret of ['very-secret-client', 'the-code-123', 'verifier-xyz-0001', jwt, opaque]) expect(error.message).not.toContain(secret)
    expect(error.message).toContain('invalid_request [redacted]')
    expect(error.message).not.toMatch(/[\r\n]/)
    expect(error.message).toContain('next line')
    // The redirect URI is not a secret.
    const uri = await refusal(requestToken(config, code, fakeFetch(400, JSON.stringify({ error: 'x', error_description: 'redirect https://worker.test/oauth/callback' })).impl))
    expect(uri.message).toContain('https://worker.test/oauth/callback')
  })

  it('cuts a long description short', async () => {
    const error = await refusal(requestToken(config, refresh, fakeFetch(400, JSON.stringify({ error: 'x', error_description: 'word '.repeat(200) })).impl))
    expect(error.message.length).toBeLessThan(300)
  })

  it('says where it could not reach, as worth a retry, without the secrets', async () => {
    const impl = (async () => {
      throw new TypeError('fetch failed for refresh-token-abc')
    }) as unknown as typeof fetch
    const error = await refusal(requestToken(config, refresh, impl))
    expect(error.message).toBe('token endpoint https://auth.example.test/oauth/token unreachable (TypeError: fetch failed for [redacted])')
    expect(error.retryable).toBe(true)
    const odd = await refusal(requestToken(config, refresh, (async () => Promise.reject('boom')) as unknown as typeof fetch))
    expect(odd.message).toMatch(/unreachable \(network error\)/)
  })

  it('needs AUTH_URL', async () => {
    const { impl, calls } = fakeFetch(200, '{}')
    const error = await refusal(requestToken({ ...config, authUrl: '' }, refresh, impl))
    expect(error.message).toMatch(/AUTH_URL is not set/)
    expect(error.retryable).toBe(false)
    expect(calls).toEqual([])
  })
})

describe('the authorization request', () => {
  it('asks for a code with PKCE (S256), the callback on this worker and the scopes, normalised', () => {
    const url = new URL(authorizeUrl({ authUrl: 'https://auth.example.test//', clientId: 'client-1', baseUrl: 'https://worker.test/', oauthScopes: '  project   webhook ' }, { state: 'st', codeChallenge: 'ch' }))
    expect(`${url.origin}${url.pathname}`).toBe('https://auth.example.test/oauth/authorize')
    expect(Object.fromEntries(url.searchParams)).toEqual({ client_id: 'client-1', redirect_uri: 'https://worker.test/oauth/callback', response_type: 'code', scope: 'project webhook', state: 'st', code_challenge: 'ch', code_challenge_method: 'S256' })
    expect(redirectUriOf({ baseUrl: 'http://127.0.0.1:8080///' })).toBe('http://127.0.0.1:8080/oauth/callback')
  })

  it('makes the S256 challenge of RFC 7636 and unguessable 43-character tokens', () => {
    // RFC 7636, appendix B.
    expect(codeChallengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
    expect(codeChallengeS256('abc')).toBe(createHash('sha256').update('abc').digest('base64url'))
    const a = randomToken()
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(randomToken()).not.toBe(a)
  })

  it('takes only a TokenEndpointError with a dead-grant code as a dead grant', () => {
    expect(isDeadGrant(new TokenEndpointError('x', { retryable: false, oauthError: 'expired_token' }))).toBe(true)
    expect(isDeadGrant(new TokenEndpointError('x', { retryable: false }))).toBe(false)
    expect(isDeadGrant(new TokenEndpointError('x', { retryable: false, oauthError: 'server_error' }))).toBe(false)
    expect(isDeadGrant(Object.assign(new Error('x'), { oauthError: 'invalid_grant' }))).toBe(false)
  })
})
