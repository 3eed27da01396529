// What the token manager keeps per organization and shows of it: the sealed record's contents
// (checked by opening it with the key), the times and reasons /healthz and the operator page show,
// the organization id <-> domain bindings and their writes, which domains it takes, the refresh
// rules at the edges (no refresh token, a 401 with a token already replaced, a failing store).
import { randomBytes } from 'node:crypto'
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { codeChallengeS256 } from '../../src/platform/oauth-client.js'
import { deriveKey, open } from '../../src/platform/token-crypto.js'
import { normalizeDomain, NotConnectedError, OrganizationDisconnectedError, TokenEndpointError, TokenManager, type TokenResponse } from '../../src/platform/token-manager.js'
import { createLogger } from '../../src/util/logger.js'

const AUTH = 'http://auth.test'

function setup(answer: (body: Record<string, string>) => { status: number; json: unknown } = () => ({ status: 200, json: { access_token: 'at-new', refresh_token: 'rt-new', expires_in: 3600 } })) {
  const requests: Array<Record<string, string>> = []
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as Record<string, string>
    requests.push(body)
    const a = answer(body)
    return new Response(JSON.stringify(a.json), { status: a.status, headers: { 'content-type': 'application/json' } })
  }) as unknown as typeof fetch
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const config = loadConfig({}, { authUrl: AUTH, clientId: 'cid', clientSecret: 'csecret', baseUrl: 'https://worker.test', storeUrl: 'memory://' })
  const clock = { now: 1_000_000 }
  const store = new Keyv()
  const writes: string[] = []
  const set = store.set.bind(store)
  store.set = (async (k: string, v: unknown) => (writes.push(k), set(k, v))) as typeof store.set
  const key = randomBytes(32)
  const tokens = new TokenManager({ config, store, log, fetch: fetchImpl, now: () => clock.now, key })
  return { tokens, store, key, clock, requests, lines, writes }
}

const grant = (extra: Partial<TokenResponse> = {}): TokenResponse => ({ access_token: 'at-1', refresh_token: 'rt-1', expires_in: 3600, ...extra })

describe('token records', () => {
  it('seals every token field the server gave, bound to the domain', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', grant({ token_type: 'bearer', scope: 'project webhook' }))
    const rec = (await t.store.get('org:acme')) as { sealed: string }
    expect(open(t.key, rec.sealed, 'acme')).toEqual({ accessToken: 'at-1', refreshToken: 'rt-1', tokenType: 'bearer', scope: 'project webhook' })
    await t.tokens.saveTokenResponse('beta', { access_token: 'at-b' })
    expect(open(t.key, ((await t.store.get('org:beta')) as { sealed: string }).sealed, 'beta')).toEqual({ accessToken: 'at-b' })
    expect(t.lines.find((l) => l.msg === 'organization connected')).toMatchObject({ domain: 'acme', expiresIn: 3600 })
  })

  it('shows when an organization was connected, refreshed and until when its token holds', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', grant())
    expect((await t.tokens.status())[0]).toEqual({ domain: 'acme', connected: true, state: 'connected', connectedAt: 1_000_000, expiresAt: 1_000_000 + 3_600_000 })
    t.clock.now += 3_600_000
    expect(await t.tokens.getAccessToken('acme')).toBe('at-new')
    expect((await t.tokens.status())[0]).toEqual({ domain: 'acme', connected: true, state: 'connected', connectedAt: 1_000_000, refreshedAt: 4_600_000, expiresAt: 8_200_000 })
    expect(t.lines.find((l) => l.msg === 'access token refreshed')).toMatchObject({ domain: 'acme', expiresIn: 3600 })
    // A token without an expiry is never refreshed ahead of time, and shows none.
    await t.tokens.saveTokenResponse('beta', { access_token: 'at-b' })
    t.clock.now += 100 * 3_600_000
    expect(await t.tokens.getAccessToken('beta')).toBe('at-b')
    expect((await t.tokens.status()).find((s) => s.domain === 'beta')!.expiresAt).toBeUndefined()
  })

  it('lists organizations by domain, with why each is not connected', async () => {
    const t = setup(() => ({ status: 400, json: { error: 'invalid_grant' } }))
    await t.tokens.saveTokenResponse('zeta', grant({ expires_in: 10 }))
    await t.tokens.rememberOrganization('42', 'beta')
    await t.tokens.saveTokenResponse('alpha', grant())
    t.clock.now += 60_000
    await expect(t.tokens.getAccessToken('zeta')).rejects.toBeInstanceOf(OrganizationDisconnectedError)
    const status = await t.tokens.status()
    expect(status.map((s) => s.domain)).toEqual(['alpha', 'beta', 'zeta'])
    expect(status[0]!.organizationId).toBeUndefined()
    expect(status[1]).toEqual({ domain: 'beta', organizationId: '42', connected: false, state: 'not-connected', reason: 'webhooks arrive for this organization but it was never connected' })
    expect(status[2]).toEqual({ domain: 'zeta', connected: false, state: 'disconnected', reason: 'the authorization server refused the refresh token (invalid_grant)', disconnectedAt: 1_060_000 })
    expect(t.lines.find((l) => l.level === 50)).toMatchObject({ domain: 'zeta', msg: 'organization disconnected: reconnect it at https://worker.test/oauth/start?domain=zeta' })
  })

  it('disconnects an organization whose token expired without a refresh token to renew it', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', { access_token: 'at-1', expires_in: 60 })
    t.clock.now += 60_000
    const error = (await t.tokens.getAccessToken('acme').catch((e: unknown) => e)) as OrganizationDisconnectedError
    expect(error).toBeInstanceOf(OrganizationDisconnectedError)
    expect(error.reason).toBe('the access token expired and the authorization server gave no refresh token')
    expect(t.requests).toEqual([])
    await expect(t.tokens.getAccessToken('acme')).rejects.toThrow(/gave no refresh token/)
  })

  it('keeps using a token that still holds while the token endpoint is down, and says so', async () => {
    const t = setup(() => ({ status: 503, json: { error: 'temporarily_unavailable' } }))
    await t.tokens.saveTokenResponse('acme', grant({ expires_in: 100 }))
    t.clock.now += 50_000 // inside the 60 s skew, not expired
    expect(await t.tokens.getAccessToken('acme')).toBe('at-1')
    expect(t.lines.find((l) => l.level === 40 && /using the current access token/.test(String(l.msg)))).toMatchObject({ domain: 'acme' })
    t.clock.now += 50_000 // exactly at expiry: no longer usable
    await expect(t.tokens.getAccessToken('acme')).rejects.toBeInstanceOf(TokenEndpointError)
  })

  it('does not hide a refusal that retrying will not fix behind a token that still holds', async () => {
    const t = setup(() => ({ status: 401, json: { error: 'invalid_client' } }))
    await t.tokens.saveTokenResponse('acme', grant({ expires_in: 100 }))
    t.clock.now += 50_000
    const error = (await t.tokens.getAccessToken('acme').catch((e: unknown) => e)) as TokenEndpointError
    expect(error).toBeInstanceOf(TokenEndpointError)
    expect(error.retryable).toBe(false)
  })

  it('after a 401, refreshes past the refused token, and hands a newer one over without asking again', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', grant())
    expect(await t.tokens.refreshAfterUnauthorized('acme', 'at-1')).toBe('at-new')
    expect(t.requests).toHaveLength(1)
    // Someone else already refreshed past 'at-1': no second request.
    expect(await t.tokens.refreshAfterUnauthorized('acme', 'at-1')).toBe('at-new')
    expect(t.requests).toHaveLength(1)
  })

  it('binds organization ids and domains both ways, writing only what changed', async () => {
    const t = setup()
    await t.tokens.rememberOrganization('1001', ' Acme ')
    expect(t.writes.sort()).toEqual(['index:domains', 'org-domain-id:acme', 'org-id:1001'])
    t.writes.length = 0
    await t.tokens.rememberOrganization('1001', 'acme')
    expect(t.writes).toEqual([])
    // A restarted manager reads the bindings and writes nothing new.
    const again = new TokenManager({ config: loadConfig({}, { storeUrl: 'memory://' }), store: t.store, log: createLogger({ level: 'silent' }), key: t.key })
    await again.rememberOrganization('1001', 'acme')
    expect(t.writes).toEqual([])
    expect(await again.organizationOf('ACME')).toBe('1001')
    expect(await again.organizationOf('nobody')).toBeUndefined()
    expect(await again.organizationOf('../x')).toBeUndefined()
    expect(await again.domainOf('1001')).toBe('acme')
    await t.store.delete('org-id:1001')
    expect(await again.domainOf('1001')).toBe('acme') // remembered in memory once read
    expect(await again.domainOf('2002')).toBeUndefined()
  })

  it('binds nothing without an id or a usable domain', async () => {
    const t = setup()
    await t.tokens.rememberOrganization('', 'acme')
    await t.tokens.rememberOrganization('1001', 'not a domain!')
    expect(t.writes).toEqual([])
    expect(await t.tokens.status()).toEqual([])
  })

  it('takes domains trimmed and lower-cased, and nothing else', () => {
    expect(normalizeDomain('  Acme.Example ')).toBe('acme.example')
    for (const bad of ['', ' ', 'a..b', '-acme', 'acme-', 'ac me', 'a/b', 'x'.repeat(254), 42, undefined, null]) expect(normalizeDomain(bad)).toBeUndefined()
    expect(normalizeDomain('a')).toBe('a')
  })

  it('refuses a domain it cannot use, naming it (cut short)', async () => {
    const t = setup()
    const error = (await t.tokens.getAccessToken(`bad domain ${'x'.repeat(200)}`).catch((e: unknown) => e)) as NotConnectedError
    expect(error).toBeInstanceOf(NotConnectedError)
    expect(error.domain).toBe(`bad domain ${'x'.repeat(200)}`.slice(0, 100))
  })

  it('says so when the store refuses to keep the tokens', async () => {
    const t = setup()
    t.store.set = (async () => false) as typeof t.store.set
    await expect(t.tokens.saveTokenResponse('acme', grant())).rejects.toThrow('could not write the tokens of "acme" to the store (STORE_URL)')
  })

  it('treats a record without sealed tokens as not connected, or disconnected with its reason', async () => {
    const t = setup()
    await t.store.set('org:acme', { domain: 'acme', state: 'connected' })
    await expect(t.tokens.getAccessToken('acme')).rejects.toBeInstanceOf(NotConnectedError)
    await t.store.set('org:beta', { domain: 'beta', state: 'disconnected' })
    const error = (await t.tokens.getAccessToken('beta').catch((e: unknown) => e)) as OrganizationDisconnectedError
    expect(error).toBeInstanceOf(OrganizationDisconnectedError)
    expect(error.reason).toBe('disconnected')
    await t.store.set('org:gamma', { domain: 'gamma', state: 'not-connected', sealed: 'v1.a.b.c' })
    await expect(t.tokens.getAccessToken('gamma')).rejects.toBeInstanceOf(NotConnectedError)
  })

  it('exchanges an authorization code with its verifier and the callback of this worker, storing nothing', async () => {
    const t = setup()
    const verifier = 'v'.repeat(43)
    expect(await t.tokens.exchangeCode('code-1', verifier)).toMatchObject({ access_token: 'at-new' })
    expect(t.requests).toEqual([{ grant_type: 'authorization_code', code: 'code-1', code_verifier: verifier, redirect_uri: 'https://worker.test/oauth/callback', client_id: 'cid', client_secret: 'csecret' }])
    expect(t.writes).toEqual([])
    expect(codeChallengeS256(verifier)).toHaveLength(43)
  })

  it('derives purpose keys from its key', () => {
    const t = setup()
    expect(t.tokens.derivedKey('cookie').equals(deriveKey(t.key, 'cookie'))).toBe(true)
  })
})
