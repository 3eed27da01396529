// The whole flow against oauth2-mock-server, a widely used third-party OAuth 2 server: it speaks
// form-encoded token requests and checks PKCE (S256), so the worker runs with OAUTH_TOKEN_FORMAT=form.
import { createHash } from 'node:crypto'
import { OAuth2Server } from 'oauth2-mock-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OrganizationDisconnectedError } from '../../src/platform/token-manager.js'
import { browserConnect, startTestWorker, type TestWorker } from './oauth-helpers.js'

let auth: OAuth2Server
let worker: TestWorker
const tokenRequests: Array<Record<string, string>> = []

beforeAll(async () => {
  auth = new OAuth2Server(undefined, undefined, { endpoints: { authorize: '/oauth/authorize', token: '/oauth/token' } })
  await auth.issuer.keys.generate('RS256')
  await auth.start(0, '127.0.0.1')
  auth.service.on('beforeResponse', (_res: unknown, req: { body: Record<string, string> }) => void tokenRequests.push({ ...req.body }))
  worker = await startTestWorker({ authUrl: auth.issuer.url!, oauthTokenFormat: 'form', oauthScopes: 'project  tm' })
})

afterAll(async () => {
  await worker?.close()
  await auth?.stop()
})

describe('OAuth flow against oauth2-mock-server', () => {
  it('connects an organization: authorization request, signed state cookie, PKCE S256, code exchange, stored tokens', async () => {
    tokenRequests.length = 0
    const run = await browserConnect(worker.url, 'Acme')

    expect(run.start.status).toBe(302)
    expect(run.start.headers.get('cache-control')).toBe('no-store')
    const q = run.authorizeUrl.searchParams
    expect(`${run.authorizeUrl.origin}${run.authorizeUrl.pathname}`).toBe(`${auth.issuer.url}/oauth/authorize`)
    expect(q.get('client_id')).toBe('switchyard-test')
    expect(q.get('redirect_uri')).toBe(`${worker.url}/oauth/callback`)
    expect(q.get('response_type')).toBe('code')
    expect(q.get('scope')).toBe('project tm')
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(43)
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/)
    expect([...q.keys()].join(',')).not.toMatch(/verifier/)

    const setCookie = run.start.headers.getSetCookie().join('\n')
    expect(setCookie).toMatch(/switchyard_oauth=[^;]+; Path=\/oauth; Max-Age=600; HttpOnly; SameSite=Lax/)
    expect(setCookie).not.toContain('Secure') // BASE_URL is http here
    expect(run.cookie).toContain(q.get('state')!)

    expect(run.callback!.status).toBe(200)
    expect(run.callbackBody).toContain('is connected')
    expect(run.callbackBody).toContain('href="/"')
    expect(run.callback!.headers.get('content-security-policy')).toContain("default-src 'none'")

    // The verifier only ever travelled server to server, and matches the challenge.
    const exchange = tokenRequests.find((r) => r.grant_type === 'authorization_code')!
    expect(exchange).toMatchObject({ client_id: 'switchyard-test', client_secret: 'test-client-secret', redirect_uri: `${worker.url}/oauth/callback` })
    expect(createHash('sha256').update(exchange.code_verifier!).digest('base64url')).toBe(q.get('code_challenge'))
    expect(run.authorizeUrl.href).not.toContain(exchange.code_verifier!)

    const token = await worker.tokens.getAccessToken('acme')
    expect(token.split('.')).toHaveLength(3)
    const [status] = await worker.tokens.status()
    expect(status).toMatchObject({ domain: 'acme', connected: true })
    expect(status!.expiresAt! - Date.now()).toBeGreaterThan(3500_000)
    expect(worker.logText()).not.toContain(token)
    expect(worker.logText()).not.toContain(exchange.code!)

    const home = await fetch(`${worker.url}/`)
    const html = await home.text()
    expect(home.headers.get('content-security-policy')).toMatch(/default-src 'none'; style-src 'sha256-[^']+'; form-action 'self' http:\/\/[\w.]+:\d+;/)
    expect(html).toContain('acme')
    expect(html).toContain('Connected')
    expect(html).not.toContain(token)
  })

  it('refuses a callback whose state is not the one bound to this browser', async () => {
    const other = await fetch(`${worker.url}/oauth/start?domain=acme`, { redirect: 'manual' })
    const otherCookie = other.headers.getSetCookie()[0]!.split(';')[0]!
    const run = await browserConnect(worker.url, 'acme', { cookie: otherCookie })
    expect(run.callback!.status).toBe(400)
    expect(run.callbackBody).toContain('state mismatch')
    // a forged cookie (right state, wrong signature) too
    const forged = await browserConnect(worker.url, 'acme', { cookie: 'switchyard_oauth=x' })
    expect(forged.callback!.status).toBe(400)
    const state = forged.callbackUrl!.searchParams.get('state')!
    const res = await fetch(forged.callbackUrl!, { headers: { cookie: `switchyard_oauth=${state}.AAAA` } })
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('state mismatch')
    // no cookie at all
    const bare = await fetch(forged.callbackUrl!)
    expect(bare.status).toBe(400)
  })

  it('refuses a replayed callback (state is single use)', async () => {
    const run = await browserConnect(worker.url, 'acme')
    expect(run.callback!.status).toBe(200)
    const again = await fetch(run.callbackUrl!, { headers: { cookie: run.cookie! } })
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('unknown or used state')
  })

  it('shows a clear page when the user refuses access', async () => {
    const onRedirect = (redirect: { url: URL }) => {
      redirect.url.searchParams.delete('code')
      redirect.url.searchParams.set('error', 'access_denied')
    }
    auth.service.once('beforeAuthorizeRedirect', onRedirect)
    const run = await browserConnect(worker.url, 'refuser')
    expect(run.callback!.status).toBe(403)
    expect(run.callbackBody).toContain('Access not granted')
    await expect(worker.tokens.getAccessToken('refuser')).rejects.toThrow(/not connected/)
  })

  it('refreshes with a form-encoded refresh grant when the token is about to expire', async () => {
    await browserConnect(worker.url, 'refresh-org')
    const before = await worker.tokens.getAccessToken('refresh-org')
    tokenRequests.length = 0
    worker.clock.real = false
    worker.clock.now = Date.now() + 3600_000
    try {
      const after = await worker.tokens.getAccessToken('refresh-org')
      // (the mock may sign an identical JWT within the same second, so count requests instead)
      expect(after.split('.')).toHaveLength(3)
      expect(tokenRequests).toHaveLength(1)
      expect(tokenRequests[0]).toMatchObject({ grant_type: 'refresh_token', client_id: 'switchyard-test' })
      expect(tokenRequests[0]!.refresh_token).toMatch(/^[\w-]{36}$/)
      expect((await worker.tokens.status()).find((s) => s.domain === 'refresh-org')!.refreshedAt).toBe(worker.clock.now)
      expect(before).toBeTruthy()
    } finally {
      worker.clock.real = true
    }
  })

  it('marks the organization disconnected when the server refuses the refresh (invalid_grant)', async () => {
    await browserConnect(worker.url, 'revoked-org')
    const rejected = await worker.tokens.getAccessToken('revoked-org')
    auth.service.once('beforeResponse', (res: { body: unknown; statusCode: number }) => {
      res.body = { error: 'invalid_grant', error_description: 'refresh token revoked' }
      res.statusCode = 400
    })
    await expect(worker.tokens.refreshAfterUnauthorized('revoked-org', rejected)).rejects.toBeInstanceOf(OrganizationDisconnectedError)
    const status = (await worker.tokens.status()).find((s) => s.domain === 'revoked-org')
    expect(status).toMatchObject({ connected: false, state: 'disconnected' })
    const html = await (await fetch(`${worker.url}/`)).text()
    expect(html).toContain('Disconnected')
    // reconnecting through /oauth/start clears it
    const run = await browserConnect(worker.url, 'revoked-org')
    expect(run.callback!.status).toBe(200)
    expect((await worker.tokens.status()).find((s) => s.domain === 'revoked-org')).toMatchObject({ connected: true })
  })

  it('turns away bad domains and explains how to start', async () => {
    const none = await fetch(`${worker.url}/oauth/start`, { redirect: 'manual' })
    expect(none.status).toBe(400)
    expect(await none.text()).toContain('/oauth/start?domain=acme')
    const bad = await fetch(`${worker.url}/oauth/start?domain=${encodeURIComponent('<script>x</script>')}`, { redirect: 'manual' })
    expect(bad.status).toBe(400)
    const body = await bad.text()
    expect(body).not.toContain('<script>x')
    expect(body).toContain('&lt;script&gt;')
  })
})
