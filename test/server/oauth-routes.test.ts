// The OAuth routes and the operator page with a fake token endpoint (injected fetch): cookie
// attributes, configuration errors, error pages, the organization check on the token, escaping.
import { createHash } from 'node:crypto'
import Keyv from 'keyv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { renderOperatorPage } from '../../src/server/operator-page.js'
import { startTestWorker, stateCookieOf, type TestWorker } from './oauth-helpers.js'

const AUTH = 'https://auth.example.test'

function jwt(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`
}

const tokenRequests: Array<Record<string, unknown>> = []
let nextClaims: Record<string, unknown> = {}
const fakeFetch = (async (_url: string | URL | Request, init?: RequestInit) => {
  tokenRequests.push(JSON.parse(String(init?.body)) as Record<string, unknown>)
  return new Response(JSON.stringify({ access_token: jwt(nextClaims), token_type: 'bearer', expires_in: 7200, refresh_token: 'rt-secret-1' }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  })
}) as typeof fetch

let worker: TestWorker
let httpsWorker: TestWorker
let upperHttpsWorker: TestWorker
let unconfigured: TestWorker

beforeAll(async () => {
  worker = await startTestWorker({ authUrl: AUTH }, { fetch: fakeFetch })
  httpsWorker = await startTestWorker({ authUrl: AUTH, baseUrl: 'https://switchyard.example.test' }, { fetch: fakeFetch })
  upperHttpsWorker = await startTestWorker({ authUrl: AUTH, baseUrl: 'HTTPS://switchyard.example.test' }, { fetch: fakeFetch })
  unconfigured = await startTestWorker({ authUrl: '', clientId: '' })
})
afterAll(async () => {
  await Promise.all([worker?.close(), httpsWorker?.close(), upperHttpsWorker?.close(), unconfigured?.close()])
})

async function start(w: TestWorker, domain: string) {
  const res = await fetch(`${w.url}/oauth/start?domain=${domain}`, { redirect: 'manual' })
  const location = new URL(res.headers.get('location')!)
  return { res, location, state: location.searchParams.get('state')!, cookie: stateCookieOf(res)! }
}

describe('OAuth routes', () => {
  it('marks the state cookie Secure when BASE_URL is https, and uses it in the redirect URI', async () => {
    const { res, location } = await start(httpsWorker, 'acme')
    expect(res.headers.getSetCookie().join()).toMatch(/HttpOnly; SameSite=Lax; Secure/)
    expect(location.searchParams.get('redirect_uri')).toBe('https://switchyard.example.test/oauth/callback')
    expect(location.origin + location.pathname).toBe(`${AUTH}/oauth/authorize`)
  })

  // Rule: a URL's scheme is case-insensitive; BASE_URL=HTTPS://... (kept as given by loadConfig)
  // is https, so the state cookie is Secure (the scheme is read from the parsed URL).
  it('marks the state cookie Secure for BASE_URL=HTTPS://... too', async () => {
    const { res } = await start(upperHttpsWorker, 'acme')
    expect(res.status).toBe(302)
    expect(res.headers.getSetCookie().find((c) => c.startsWith('switchyard_oauth='))).toMatch(/HttpOnly; SameSite=Lax; Secure/)
  })

  it('says what is missing when OAuth is not configured', async () => {
    const res = await fetch(`${unconfigured.url}/oauth/start?domain=acme`, { redirect: 'manual' })
    expect(res.status).toBe(503)
    const text = await res.text()
    expect(text).toContain('CLIENT_ID')
    expect(text).toContain('AUTH_URL')
    const home = await (await fetch(`${unconfigured.url}/`)).text()
    expect(home).toContain('Connecting is not possible yet')
  })

  it('exchanges the code with a JSON body carrying the verifier, and remembers the organization id from the token', async () => {
    nextClaims = { domain: 'acme', organization_id: 1001 }
    tokenRequests.length = 0
    const s = await start(worker, 'acme')
    const res = await fetch(`${worker.url}/oauth/callback?code=the-code&state=${s.state}`, { headers: { cookie: s.cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.getSetCookie().join()).toMatch(/switchyard_oauth=; Path=\/oauth; Max-Age=0/)
    expect(tokenRequests).toEqual([
      {
        grant_type: 'authorization_code',
        code: 'the-code',
        code_verifier: expect.stringMatching(/^[\w-]{43}$/),
        redirect_uri: `${worker.url}/oauth/callback`,
        client_id: 'switchyard-test',
        client_secret: 'test-client-secret',
      },
    ])
    expect(await worker.tokens.domainOf('1001')).toBe('acme')
    expect(worker.logText()).not.toContain('rt-secret-1')
    expect(worker.logText()).not.toContain('the-code')
  })

  it('takes a state once across two instances sharing the store, even when both read it before either deletes it', async () => {
    // Two replicas behind one BASE_URL share the state store and TOKEN_KEY; the browser's callback
    // (or a replay of it) may reach both at once. Both reads are held until both are in.
    const shared = new Keyv()
    const get = shared.get.bind(shared)
    let reads = 0
    let bothIn!: () => void
    const barrier = new Promise<void>((resolve) => (bothIn = resolve))
    shared.get = (async (key: string) => {
      const value = await get(key)
      if (key.startsWith('oauth-pending:') && ++reads === 2) bothIn()
      if (key.startsWith('oauth-pending:')) await barrier
      return value
    }) as typeof shared.get
    const tokenKey = Buffer.alloc(32, 7).toString('base64')
    const [a, b] = await Promise.all([0, 1].map(() => startTestWorker({ authUrl: AUTH, tokenKey }, { fetch: fakeFetch, stateStore: shared })))
    try {
      nextClaims = { domain: 'acme', organization_id: 1001 }
      tokenRequests.length = 0
      const s = await start(a!, 'acme')
      const callback = (w: TestWorker) => fetch(`${w.url}/oauth/callback?code=the-code&state=${s.state}`, { headers: { cookie: s.cookie } })
      const answers = await Promise.all([callback(a!), callback(b!)])
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400])
      expect(await answers.find((r) => r.status === 400)!.text()).toContain('unknown or used state')
      // The code was exchanged once.
      expect(tokenRequests).toHaveLength(1)
    } finally {
      await Promise.all([a?.close(), b?.close()])
    }
  })

  // Rule: secrets are encrypted at rest. For the ten minutes an authorization may take, the PKCE
  // verifier in the state store buys tokens together with an intercepted code; the store holds
  // it sealed, and the state it is bound to only as a hash.
  it('keeps the pending PKCE verifier sealed in the store, and exchanges the one whose challenge it sent', async () => {
    const store = new Keyv()
    const w = await startTestWorker({ authUrl: AUTH }, { fetch: fakeFetch, stateStore: store })
    try {
      nextClaims = { domain: 'acme' }
      tokenRequests.length = 0
      const s = await start(w, 'acme')
      const stored: string[] = []
      for await (const [key, value] of store.iterator!(undefined)) stored.push(`${String(key)} ${JSON.stringify(value)}`)
      expect(stored).toHaveLength(1)
      expect(stored[0]).not.toContain(s.state)
      const res = await fetch(`${w.url}/oauth/callback?code=the-code&state=${s.state}`, { headers: { cookie: s.cookie } })
      expect(res.status).toBe(200)
      const verifier = String(tokenRequests[0]!.code_verifier)
      expect(createHash('sha256').update(verifier).digest('base64url')).toBe(s.location.searchParams.get('code_challenge'))
      expect(stored[0]).not.toContain(verifier)
    } finally {
      await w.close()
    }
  })

  it('refuses, with a page that says to start again, a pending authorization it cannot open (started before the upgrade, or altered)', async () => {
    const store = new Keyv()
    const w = await startTestWorker({ authUrl: AUTH }, { fetch: fakeFetch, stateStore: store })
    try {
      tokenRequests.length = 0
      for (const replace of [
        (v: Record<string, unknown>) => ({ domain: v.domain, verifier: 'x'.repeat(43), createdAt: v.createdAt }),
        (v: Record<string, unknown>) => ({ ...v, sealedVerifier: String(v.sealedVerifier).slice(0, -2) + 'AA' }),
      ]) {
        const s = await start(w, 'acme')
        const keys: string[] = []
        for await (const [key] of store.iterator!(undefined)) keys.push(String(key))
        const value = (await store.get<Record<string, unknown>>(keys[0]!))!
        await store.set(keys[0]!, replace(value))
        const res = await fetch(`${w.url}/oauth/callback?code=the-code&state=${s.state}`, { headers: { cookie: s.cookie } })
        expect(res.status).toBe(400)
        expect(await res.text()).toContain('Start again')
      }
      expect(tokenRequests).toHaveLength(0)
      expect(w.logText()).toContain('its started authorization cannot be read')
    } finally {
      await w.close()
    }
  })

  it('refuses tokens approved for another organization than the one asked for', async () => {
    nextClaims = { domain: 'someone-else' }
    const s = await start(worker, 'mine')
    const res = await fetch(`${worker.url}/oauth/callback?code=c&state=${s.state}`, { headers: { cookie: s.cookie } })
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('Wrong organization')
    await expect(worker.tokens.getAccessToken('mine')).rejects.toThrow(/not connected/)
  })

  it('answers other authorization errors and a missing code with a clear 400 page, escaping what it echoes', async () => {
    const s = await start(worker, 'acme')
    const res = await fetch(`${worker.url}/oauth/callback?error=${encodeURIComponent('<b>bad</b>')}&state=${s.state}`, { headers: { cookie: s.cookie } })
    expect(res.status).toBe(400)
    const text = await res.text()
    expect(text).toContain('&lt;b&gt;bad&lt;/b&gt;')
    expect(text).not.toContain('<b>bad')
    const s2 = await start(worker, 'acme')
    const res2 = await fetch(`${worker.url}/oauth/callback?state=${s2.state}`, { headers: { cookie: s2.cookie } })
    expect(res2.status).toBe(400)
    expect(await res2.text()).toContain('neither a <code>code</code>')
    const res3 = await fetch(`${worker.url}/oauth/callback?code=x`)
    expect(res3.status).toBe(400)
    expect(await res3.text()).toContain('no <code>state</code>')
  })
})

describe('operator page', () => {
  it('lists organizations with status and expiry, flags disconnected ones, escapes everything', () => {
    const config = loadConfig({}, { authUrl: AUTH, clientId: 'c', clientSecret: 's', baseUrl: 'https://w.test', storeUrl: 'memory://' })
    const now = Date.UTC(2026, 0, 1)
    const html = renderOperatorPage(
      config,
      [
        { domain: 'acme', connected: true, state: 'connected', expiresAt: now + 90 * 60_000, organizationId: '1' },
        { domain: 'beta', connected: false, state: 'disconnected', reason: '<img src=x onerror=alert(1)>' },
        { domain: 'gamma', connected: false, state: 'not-connected', reason: 'never connected' },
      ],
      now,
    )
    expect(html).toContain('2026-01-01 01:30:00 UTC')
    expect(html).toContain('in 90 min')
    expect(html).toContain('Disconnected')
    expect(html).toContain('1 organization is disconnected')
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(html).not.toContain('<img')
    expect(html).toContain('<form method="post" action="/oauth/start">')
    expect(html).toContain('href="/oauth/start?domain=beta"')
    expect(html).toContain('https://w.test/oauth/callback')
  })

  it('is served with a strict CSP and no scripts', async () => {
    const res = await fetch(`${worker.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain(`form-action 'self' ${AUTH}`)
    expect(csp).not.toContain('unsafe-inline')
    const html = await res.text()
    expect(html).not.toMatch(/<script|https?:\/\/[^"<]*\.(css|js)/)
    // the one inline stylesheet is the one the CSP hash allows
    const { createHash } = await import('node:crypto')
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!
    expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`)
  })
})
