// The operator pages are not open by accident, not guessable and not usable from another site
// (issue 17): no OPERATOR_PASSWORD on a public address means 403 unless OPERATOR_OPEN=true;
// wrong passwords are throttled per client with back-off; a cross-site connect is refused.
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { startServe, type Running } from '../../src/cli/serve.js'
import { loadConfig, missingForProduction, type Config } from '../../src/config/load-config.js'
import { LoginThrottle, FREE_FAILURES, clientKey } from '../../src/server/login-throttle.js'
import { operatorAccess } from '../../src/config/operator-access.js'
import { silentLogger } from '../../src/util/logger.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-operator-hardening-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const running: Running[] = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

/** A GET with headers fetch will not send as given (Host): what a browser sends to a name it resolved. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode!, body }))
    })
    req.on('error', reject).end()
  })
}

const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`

async function serve(o: Partial<Config>) {
  const config = loadConfig({}, { port: 0, host: '127.0.0.1', storeUrl: 'memory://', dataDir: dir, clientId: 'c', clientSecret: 's', authUrl: 'http://127.0.0.1:9', reconcileIntervalMs: 0, ...o })
  const r = await startServe(config, silentLogger())
  running.push(r)
  return r.worker.url
}

describe('operator pages without a password', () => {
  it('are refused on a public address unless OPERATOR_OPEN=true, and the config check says so', async () => {
    // Bound to every address; reached here over loopback.
    const url = await serve({ host: '0.0.0.0', operatorPassword: '' })
    for (const route of ['/', '/oauth/start?domain=acme']) {
      const res = await fetch(`${url}${route}`, { redirect: 'manual' })
      expect(res.status).toBe(403)
      expect(await res.text()).toMatch(/OPERATOR_PASSWORD/)
    }
    expect(missingForProduction(loadConfig({ HOST: '0.0.0.0' })).join('\n')).toMatch(/OPERATOR_PASSWORD.*OPERATOR_OPEN=true/)
    const open = await serve({ host: '0.0.0.0', operatorPassword: '', operatorOpen: true })
    expect((await fetch(`${open}/`)).status).toBe(200)
    expect(loadConfig({ HOST: '0.0.0.0', OPERATOR_OPEN: 'true' }).operatorOpen).toBe(true)
    expect(missingForProduction(loadConfig({ HOST: '0.0.0.0', OPERATOR_OPEN: 'true' })).join('\n')).toMatch(/open to anyone/)
  })

  it('stay open on a loopback address', () => {
    expect(operatorAccess({ host: '127.0.0.1', operatorPassword: '', operatorOpen: false })).toBe('open-loopback')
    expect(operatorAccess({ host: '::1', operatorPassword: '', operatorOpen: false })).toBe('open-loopback')
    expect(operatorAccess({ host: '0.0.0.0', operatorPassword: '', operatorOpen: false })).toBe('refused')
    expect(operatorAccess({ host: '0.0.0.0', operatorPassword: 'x', operatorOpen: false })).toBe('password')
  })

  // Rule: open on loopback means open to a request made on this host. Behind a reverse proxy on
  // the same host (nginx, Caddy terminating TLS) every public client is a loopback peer: a request
  // carrying a proxy's headers is refused, and the config check warns when BASE_URL is public.
  it('on a loopback address refuse what a reverse proxy on the same host forwards, and the config check says so', async () => {
    const url = await serve({ host: '127.0.0.1', operatorPassword: '', baseUrl: 'https://switchyard.example.com' })
    const proxied = { 'x-forwarded-for': '203.0.113.50', 'x-forwarded-host': 'switchyard.example.com', 'x-forwarded-proto': 'https' }
    for (const headers of [proxied, { forwarded: 'for=203.0.113.50' }, { 'x-real-ip': '203.0.113.50' }, { 'x-forwarded-host': 'switchyard.example.com' }] as Array<Record<string, string>>) {
      for (const route of ['/', '/operator/organizations', '/oauth/start?domain=acme']) {
        const res = await fetch(`${url}${route}`, { headers, redirect: 'manual' })
        expect(res.status).toBe(403)
        expect(await res.text()).toMatch(/Set OPERATOR_PASSWORD/)
      }
    }
    // The operator's own browser on the host still gets in.
    expect((await fetch(`${url}/operator/organizations`)).status).toBe(200)
    const check = (env: Record<string, string>) => missingForProduction(loadConfig({ HOST: '127.0.0.1', ...env })).join('\n')
    expect(check({ BASE_URL: 'https://switchyard.example.com' })).toMatch(/OPERATOR_PASSWORD \(BASE_URL=https:\/\/switchyard\.example\.com is public/)
    expect(check({ BASE_URL: 'http://switchyard.example.com' })).toMatch(/is public/)
    expect(check({ BASE_URL: 'https://localhost:3000' })).toMatch(/is public/)
    expect(check({ BASE_URL: 'http://127.0.0.1:3000' })).not.toMatch(/OPERATOR_PASSWORD/)
    expect(check({ BASE_URL: 'https://switchyard.example.com', OPERATOR_PASSWORD: 'x' })).not.toMatch(/OPERATOR_PASSWORD/)
  })

  // Rule: open on loopback means open to the operator's browser on this host, at a loopback name.
  // Another site's page whose name resolves to 127.0.0.1 (DNS rebinding) reaches the worker from a
  // loopback peer without a proxy's headers, and as its own origin, so the CSRF check passes it
  // too: only the Host it names tells it apart. It would read the organizations and the findings
  // (translators' texts) and could start a connection.
  it('on a loopback address refuse a page of another site rebound to 127.0.0.1 (its Host is not a loopback name)', async () => {
    const url = await serve({ host: '127.0.0.1', operatorPassword: '' })
    const port = new URL(url).port
    const evil = `rebind.evil.example:${port}`
    for (const route of ['/', '/operator/organizations', '/findings?stringId=1', '/oauth/start?domain=acme']) {
      const res = await rawGet(`${url}${route}`, { host: evil, origin: `http://${evil}`, 'sec-fetch-site': 'same-origin' })
      expect([route, res.status]).toEqual([route, 403])
      expect(res.body).toMatch(/OPERATOR_PASSWORD/)
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.0.0.1`]) {
      expect([host, (await rawGet(`${url}/operator/organizations`, { host })).status]).toEqual([host, 200])
    }
  })
})

describe('organization detail', () => {
  it('is served as JSON behind the operator password', async () => {
    const url = await serve({ operatorPassword: 'correct horse' })
    expect((await fetch(`${url}/operator/organizations`)).status).toBe(401)
    const res = await fetch(`${url}/operator/organizations`, { headers: { authorization: basic('correct horse') } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ organizations: [] })
  })
})

describe('failed logins', () => {
  it('are throttled per client with back-off; even the right password waits; others are not affected', async () => {
    const url = await serve({ operatorPassword: 'correct horse' })
    const as = (client: string, password: string) => fetch(`${url}/`, { headers: { authorization: basic(password), 'x-forwarded-for': client } })
    for (let i = 0; i < FREE_FAILURES; i++) expect((await as('203.0.113.7', 'guess')).status).toBe(401)
    const locked = await as('203.0.113.7', 'correct horse')
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await as('198.51.100.1', 'correct horse')).status).toBe(200)
  })

  it('a client is its own address unless it is a proxy on a private network', () => {
    expect(clientKey('203.0.113.9', '198.51.100.1')).toBe('203.0.113.9')
    expect(clientKey('::ffff:203.0.113.9', '198.51.100.1')).toBe('::ffff:203.0.113.9')
    expect(clientKey('10.0.0.5', '198.51.100.1')).toBe('198.51.100.1')
    expect(clientKey('172.20.0.3', '198.51.100.1')).toBe('198.51.100.1')
    expect(clientKey('::ffff:127.0.0.1', '198.51.100.1')).toBe('198.51.100.1')
    expect(clientKey('172.32.0.3', '198.51.100.1')).toBe('172.32.0.3')
  })

  // Rule: an IPv6 client is its /64 (a subscriber holds all of it); counted per address it would
  // get FREE_FAILURES fresh guesses from each of 2^64 addresses. IPv4 (mapped too) stays per address.
  it('an IPv6 guesser cannot get fresh guesses by moving to another address of its own /64', async () => {
    const url = await serve({ operatorPassword: 'correct horse' })
    // A proxy on the same host that sets X-Forwarded-For itself (as docs/security.md asks).
    const as = (client: string, password: string) => fetch(`${url}/`, { headers: { authorization: basic(password), 'x-forwarded-for': client } })
    for (let i = 0; i < FREE_FAILURES; i++) expect((await as('2001:db8:1:2::1', 'guess')).status).toBe(401)
    expect((await as('2001:db8:1:2::1', 'guess')).status).toBe(429)
    // Same client, same /64, next address: must still be waiting; another /64 is another client.
    expect((await as('2001:db8:1:2::2', 'guess')).status).toBe(429)
    expect((await as('2001:db8:1:3::1', 'correct horse')).status).toBe(200)
    // However the address is written; the peer itself when it connects directly.
    expect(clientKey('2001:DB8:1:2:0:0:0:ffff', '')).toBe('2001:db8:1:2::/64')
    expect(clientKey('2001:0db8:0001:0002:abcd::', '')).toBe('2001:db8:1:2::/64')
    expect(clientKey('2001:db8::1.2.3.4', '')).toBe('2001:db8:0:0::/64')
    expect(clientKey('10.0.0.5', '2001:db8:1:2::7')).toBe('2001:db8:1:2::/64')
    expect(clientKey('::ffff:203.0.113.9', '')).toBe('::ffff:203.0.113.9')
    expect(clientKey('198.51.100.1', '')).toBe('198.51.100.1')
  })

  it('back-off doubles with each failure and a success forgets the client', () => {
    let now = 0
    const t = new LoginThrottle(() => now)
    for (let i = 0; i < FREE_FAILURES - 1; i++) t.failed('a')
    expect(t.waitMs('a')).toBe(0)
    t.failed('a')
    expect(t.waitMs('a')).toBe(1000)
    now += 1000
    t.failed('a')
    expect(t.waitMs('a')).toBe(2000)
    now += 2000
    t.failed('a')
    expect(t.waitMs('a')).toBe(4000)
    for (let i = 0; i < 30; i++) t.failed('a')
    expect(t.waitMs('a')).toBe(15 * 60_000)
    t.succeeded('a')
    expect(t.waitMs('a')).toBe(0)
  })
})

describe('connecting is CSRF-proof', () => {
  it('refuses a cross-site POST or GET to /oauth/start and accepts the same-origin form', async () => {
    const url = await serve({ operatorPassword: 'correct horse', authUrl: 'http://127.0.0.1:9' })
    const auth = { authorization: basic('correct horse') }
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    const crossPost = await fetch(`${url}/oauth/start`, { method: 'POST', redirect: 'manual', headers: { ...auth, ...form, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, body: 'domain=acme' })
    expect(crossPost.status).toBe(403)
    expect(crossPost.headers.get('set-cookie')).toBeNull()
    const originOnly = await fetch(`${url}/oauth/start`, { method: 'POST', redirect: 'manual', headers: { ...auth, ...form, origin: 'https://evil.example' }, body: 'domain=acme' })
    expect(originOnly.status).toBe(403)
    const crossGet = await fetch(`${url}/oauth/start?domain=acme`, { redirect: 'manual', headers: { ...auth, 'sec-fetch-site': 'cross-site' } })
    expect(crossGet.status).toBe(403)
    const oldBrowser = await fetch(`${url}/oauth/start?domain=acme`, { redirect: 'manual', headers: { ...auth, referer: 'https://evil.example/page' } })
    expect(oldBrowser.status).toBe(403)
    const typed = await fetch(`${url}/oauth/start?domain=acme`, { redirect: 'manual', headers: { ...auth, 'sec-fetch-site': 'none' } })
    expect(typed.status).toBe(302)
    const own = await fetch(`${url}/oauth/start`, { method: 'POST', redirect: 'manual', headers: { ...auth, ...form, origin: url, 'sec-fetch-site': 'same-origin' }, body: 'domain=acme' })
    expect(own.status).toBe(302)
    expect(own.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9/)
  })

  // Rule: the operator page is served with Referrer-Policy: no-referrer, under which a browser
  // sends `Origin: null` with the page's own form post (Chromium does; Fetch spec, "append a
  // request Origin header"). Sec-Fetch-Site, which a page cannot set, says it is same-origin.
  it('accepts the operator page\'s own form as a browser posts it under no-referrer (Origin: null, Sec-Fetch-Site: same-origin)', async () => {
    const url = await serve({ operatorPassword: 'correct horse', authUrl: 'http://127.0.0.1:9' })
    const headers = { authorization: basic('correct horse'), 'content-type': 'application/x-www-form-urlencoded', origin: 'null' }
    const own = await fetch(`${url}/oauth/start`, { method: 'POST', redirect: 'manual', headers: { ...headers, 'sec-fetch-site': 'same-origin' }, body: 'domain=acme' })
    expect(own.status).toBe(302)
    expect(own.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9\/oauth\/authorize\?/)
    // Another site's page (a sandboxed frame, a data: URL) sends Origin: null too, but not as same-origin.
    for (const site of ['cross-site', 'same-site', undefined]) {
      const res = await fetch(`${url}/oauth/start`, { method: 'POST', redirect: 'manual', headers: { ...headers, ...(site ? { 'sec-fetch-site': site } : {}) }, body: 'domain=acme' })
      expect([site, res.status]).toEqual([site, 403])
    }
  })
})
