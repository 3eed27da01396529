// Token manager logic against an injected fetch that plays a strict token endpoint (rotation:
// every refresh retires the refresh token it was given).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { createLogger } from '../../src/util/logger.js'
import { createStores } from '../../src/store/create-stores.js'
import {
  NotConnectedError,
  OrganizationDisconnectedError,
  TokenEndpointError,
  TOKEN_READ_CACHE_MS,
  TokenManager,
} from '../../src/platform/token-manager.js'

const AUTH = 'http://auth.test'

function fakeTokenEndpoint(opts: { delayMs?: number; expiresIn?: number } = {}) {
  let issued = 0
  const live = new Set<string>()
  const requests: Array<{ contentType: string; body: Record<string, string> }> = []
  const mode = { value: 'ok' as 'ok' | 'error500' | 'echo-error' | 'no-refresh-token' }
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input)
    if (url !== `${AUTH}/oauth/token`) return new Response('not found', { status: 404 })
    const contentType = new Headers(init?.headers).get('content-type') ?? ''
    const text = String(init?.body ?? '')
    const body = contentType.includes('json') ? (JSON.parse(text) as Record<string, string>) : Object.fromEntries(new URLSearchParams(text))
    requests.push({ contentType, body })
    await new Promise((r) => setTimeout(r, opts.delayMs ?? 5))
    const json = (status: number, b: unknown) => new Response(JSON.stringify(b), { status, headers: { 'content-type': 'application/json' } })
    if (mode.value === 'error500') return json(500, { error: 'server_error' })
    if (mode.value === 'echo-error') return json(400, { error: 'invalid_request', error_description: `bad token ${body.refresh_token} here` })
    if (body.client_id !== 'cid' || body.client_secret !== 'csecret') return json(401, { error: 'invalid_client' })
    if (body.grant_type === 'refresh_token') {
      if (!live.has(body.refresh_token!)) return json(400, { error: 'invalid_grant', error_description: 'refresh token is invalid' })
      live.delete(body.refresh_token!)
    }
    issued++
    const refresh = `rt-${issued}-${randomBytes(4).toString('hex')}`
    live.add(refresh)
    const res: Record<string, unknown> = { access_token: `at-${issued}`, token_type: 'bearer', expires_in: opts.expiresIn ?? 7200 }
    if (mode.value !== 'no-refresh-token') res.refresh_token = refresh
    return json(200, res)
  }) as typeof fetch
  return {
    fetchImpl,
    requests,
    mode,
    /** A token response as if from a code exchange, with a live refresh token. */
    grant(expiresIn = 7200) {
      issued++
      const refresh = `rt-${issued}-${randomBytes(4).toString('hex')}`
      live.add(refresh)
      return { access_token: `at-${issued}`, token_type: 'bearer', expires_in: expiresIn, refresh_token: refresh }
    },
    refreshes: () => requests.filter((r) => r.body.grant_type === 'refresh_token').length,
  }
}

function setup(opts: { format?: 'json' | 'form'; delayMs?: number; store?: Keyv; key?: Buffer; expiresIn?: number } = {}) {
  const lines: string[] = []
  const log = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } })
  const config = loadConfig({}, {
    authUrl: AUTH,
    clientId: 'cid',
    clientSecret: 'csecret',
    baseUrl: 'https://worker.test',
    storeUrl: 'memory://',
    oauthTokenFormat: opts.format ?? 'json',
  })
  const server = fakeTokenEndpoint({ ...(opts.delayMs === undefined ? {} : { delayMs: opts.delayMs }), ...(opts.expiresIn === undefined ? {} : { expiresIn: opts.expiresIn }) })
  const clock = { now: 1_000_000 }
  const store = opts.store ?? new Keyv()
  const key = opts.key ?? randomBytes(32)
  const make = (fetchImpl = server.fetchImpl) => new TokenManager({ config, store, log, fetch: fetchImpl, now: () => clock.now, key })
  return { tokens: make(), make, server, clock, store, key, lines, log: () => lines.join('') }
}

describe('TokenManager', () => {
  it('stores tokens encrypted and hands out the access token', async () => {
    const t = setup()
    const grant = t.server.grant()
    await t.tokens.saveTokenResponse('Acme', grant)
    expect(await t.tokens.getAccessToken('acme')).toBe(grant.access_token)
    const stored = JSON.stringify(await t.store.get('org:acme'))
    expect(stored).not.toContain(grant.access_token)
    expect(stored).not.toContain(grant.refresh_token)
    expect(t.server.requests).toHaveLength(0)
    const [status] = await t.tokens.status()
    expect(status).toMatchObject({ domain: 'acme', connected: true, state: 'connected', expiresAt: 1_000_000 + 7200_000 })
  })

  it('reads the store once per TOKEN_READ_CACHE_MS for a run of requests, and forgets at once what it writes or sees refused', async () => {
    const t = setup()
    const reads: string[] = []
    const get = t.store.get.bind(t.store)
    t.store.get = ((key: string) => {
      reads.push(String(key))
      return get(key)
    }) as typeof t.store.get
    const orgReads = () => reads.filter((k) => k === 'org:acme').length
    const first = t.server.grant()
    await t.tokens.saveTokenResponse('acme', first)
    const before = orgReads()
    for (let i = 0; i < 50; i++) expect(await t.tokens.getAccessToken('acme')).toBe(first.access_token)
    expect(orgReads() - before).toBe(1)
    // Another instance reconnects the organization: seen once the time is up, not before.
    const other = t.make()
    const second = t.server.grant()
    await other.saveTokenResponse('acme', second)
    t.clock.now += TOKEN_READ_CACHE_MS - 1
    expect(await t.tokens.getAccessToken('acme')).toBe(first.access_token)
    t.clock.now += 1
    expect(await t.tokens.getAccessToken('acme')).toBe(second.access_token)
    // A clock that went back does not stretch the time.
    t.clock.now -= 10_000
    const n = orgReads()
    await t.tokens.getAccessToken('acme')
    expect(orgReads()).toBe(n + 1)
    // Refused with 401: the refreshed token at once, never the refused one again.
    const refreshed = await t.tokens.refreshAfterUnauthorized('acme', second.access_token)
    expect(refreshed).not.toBe(second.access_token)
    expect(await t.tokens.getAccessToken('acme')).toBe(refreshed)
    // Another instance refreshed after its own 401: the one here refused too takes that token,
    // without a request of its own, and does not hand out the refused one again.
    t.clock.now += TOKEN_READ_CACHE_MS
    expect(await t.tokens.getAccessToken('acme')).toBe(refreshed)
    const elsewhere = await other.refreshAfterUnauthorized('acme', refreshed)
    const requests = t.server.refreshes()
    expect(await t.tokens.refreshAfterUnauthorized('acme', refreshed)).toBe(elsewhere)
    expect(await t.tokens.getAccessToken('acme')).toBe(elsewhere)
    expect(t.server.refreshes()).toBe(requests)
    // A reconnection in this process is used at once.
    const third = t.server.grant()
    await t.tokens.saveTokenResponse('acme', third)
    expect(await t.tokens.getAccessToken('acme')).toBe(third.access_token)
  })

  it('callers that find no token cached share one read of the store, but none begun before a write', async () => {
    const t = setup()
    const first = t.server.grant()
    await t.tokens.saveTokenResponse('acme', first)
    const reads: string[] = []
    let release: (() => void) | undefined
    const get = t.store.get.bind(t.store)
    t.store.get = (async (key: string) => {
      const value = await get(key)
      if (key === 'org:acme') {
        reads.push(key)
        // The first read has its answer (the first tokens) and is held there.
        if (release === undefined) await new Promise<void>((r) => (release = r))
      }
      return value
    }) as typeof t.store.get
    // A run's 50 requests start together: one read.
    const together = Array.from({ length: 50 }, () => t.tokens.getAccessToken('acme'))
    await new Promise((r) => setTimeout(r, 5))
    expect(reads).toHaveLength(1)
    // A reconnection meanwhile: the next caller does not join the read begun before it.
    const second = t.server.grant()
    await t.tokens.saveTokenResponse('acme', second)
    const before = reads.length
    expect(await t.tokens.getAccessToken('acme')).toBe(second.access_token)
    expect(reads).toHaveLength(before + 1)
    release!()
    expect(new Set(await Promise.all(together))).toEqual(new Set([first.access_token]))
    // What that older read found was not kept.
    expect(await t.tokens.getAccessToken('acme')).toBe(second.access_token)
  })

  it('a read of the store that never answers holds up its own callers, not those that come a second later', async () => {
    const t = setup()
    const grant = t.server.grant()
    await t.tokens.saveTokenResponse('acme', grant)
    let release: (() => void) | undefined
    const get = t.store.get.bind(t.store)
    t.store.get = (async (key: string) => {
      if (key === 'org:acme' && release === undefined) await new Promise<void>((r) => (release = r))
      return get(key)
    }) as typeof t.store.get
    let stuckDone = false
    const stuck = t.tokens.getAccessToken('acme').then((v) => ((stuckDone = true), v))
    await new Promise((r) => setTimeout(r, 5))
    t.clock.now += TOKEN_READ_CACHE_MS
    expect(await t.tokens.getAccessToken('acme')).toBe(grant.access_token)
    expect(stuckDone).toBe(false)
    release!()
    expect(await stuck).toBe(grant.access_token)
  })

  it('does not keep a record read while this process replaced it', async () => {
    const t = setup()
    const first = t.server.grant()
    await t.tokens.saveTokenResponse('acme', first)
    // The next read of the record is held until the reconnection below has been written.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const get = t.store.get.bind(t.store)
    let hold = true
    t.store.get = (async (key: string) => {
      const value = await get(key)
      if (hold && key === 'org:acme') {
        hold = false
        await held
      }
      return value
    }) as typeof t.store.get
    const slow = t.tokens.getAccessToken('acme')
    const second = t.server.grant()
    await t.tokens.saveTokenResponse('acme', second)
    release()
    expect(await slow).toBe(first.access_token)
    expect(await t.tokens.getAccessToken('acme')).toBe(second.access_token)
  })

  it('does not keep a record read while this process was writing its replacement', async () => {
    const t = setup()
    const first = t.server.grant()
    await t.tokens.saveTokenResponse('acme', first)
    // The reconnection's write is held until a read has run meanwhile (it sees the old record).
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const set = t.store.set.bind(t.store)
    t.store.set = (async (key: string, value: unknown, ttl?: number) => {
      if (key === 'org:acme') await held
      return set(key, value, ttl)
    }) as typeof t.store.set
    const second = t.server.grant()
    const saving = t.tokens.saveTokenResponse('acme', second)
    await new Promise((r) => setTimeout(r, 5))
    expect(await t.tokens.getAccessToken('acme')).toBe(first.access_token)
    release()
    await saving
    expect(await t.tokens.getAccessToken('acme')).toBe(second.access_token)
  })

  it('a cached token about to expire is refreshed, and the cache counts from when the read began', async () => {
    const t = setup()
    // Issued a minute ago, expires 60.6 s from now: due for a refresh (60 s early) 600 ms from now,
    // within the cache's second.
    await t.tokens.saveTokenResponse('acme', t.server.grant(120.6))
    t.clock.now += 60_000
    const first = await t.tokens.getAccessToken('acme')
    t.clock.now += 700
    const refreshed = await t.tokens.getAccessToken('acme')
    expect(refreshed).not.toBe(first)
    expect(t.server.refreshes()).toBe(1)
    // A read that takes 600 ms of the clock: its token is kept for what is left of the second.
    const get = t.store.get.bind(t.store)
    let reads = 0
    t.store.get = (async (key: string) => {
      if (key === 'org:acme') {
        reads++
        t.clock.now += 600
      }
      return get(key)
    }) as typeof t.store.get
    t.clock.now += TOKEN_READ_CACHE_MS
    await t.tokens.getAccessToken('acme')
    expect(reads).toBe(1)
    t.clock.now += 300
    await t.tokens.getAccessToken('acme')
    expect(reads).toBe(1)
    t.clock.now += 100
    await t.tokens.getAccessToken('acme')
    expect(reads).toBe(2)
  })

  it('throws NotConnectedError for an organization it has no tokens for', async () => {
    const t = setup()
    await expect(t.tokens.getAccessToken('nobody')).rejects.toBeInstanceOf(NotConnectedError)
    await expect(t.tokens.getAccessToken('../etc')).rejects.toBeInstanceOf(NotConnectedError)
    await t.tokens.rememberOrganization('42', 'seen')
    await expect(t.tokens.getAccessToken('seen')).rejects.toBeInstanceOf(NotConnectedError)
    expect(await t.tokens.status()).toEqual([expect.objectContaining({ domain: 'seen', organizationId: '42', connected: false, state: 'not-connected' })])
  })

  it('refreshes shortly before expiry (skew 60 s), not earlier, and stores the rotated refresh token', async () => {
    const t = setup()
    const grant = t.server.grant(3600)
    await t.tokens.saveTokenResponse('acme', grant)
    t.clock.now += 3600_000 - 61_000
    expect(await t.tokens.getAccessToken('acme')).toBe(grant.access_token)
    expect(t.server.refreshes()).toBe(0)
    t.clock.now += 2_000
    const fresh = await t.tokens.getAccessToken('acme')
    expect(fresh).not.toBe(grant.access_token)
    expect(t.server.refreshes()).toBe(1)
    expect(t.server.requests[0]!.body).toMatchObject({ grant_type: 'refresh_token', client_id: 'cid', client_secret: 'csecret', refresh_token: grant.refresh_token })
    expect(t.server.requests[0]!.contentType).toBe('application/json')
    // A second manager on the same store (a restart) uses the newest refresh token: the strict
    // server would refuse the old one.
    t.clock.now += 7200_000
    const restarted = t.make()
    expect(await restarted.getAccessToken('acme')).not.toBe(fresh)
    expect(t.server.refreshes()).toBe(2)
    expect((await restarted.status())[0]).toMatchObject({ connected: true, refreshedAt: t.clock.now })
  })

  it('a token that lives a minute or less is refreshed half-way through its life, not for every request', async () => {
    const t = setup({ expiresIn: 30 })
    await t.tokens.saveTokenResponse('acme', t.server.grant(30))
    for (let i = 0; i < 9; i++) {
      t.clock.now += 1_500 // 13.5 s of a 30 s token: nothing due
      await t.tokens.getAccessToken('acme')
    }
    expect(t.server.refreshes()).toBe(0)
    t.clock.now += 2_000
    await t.tokens.getAccessToken('acme')
    expect(t.server.refreshes()).toBe(1)
    // The refreshed token (30 s again) is due half-way through its own life, counted from its refresh.
    t.clock.now += 14_000
    await t.tokens.getAccessToken('acme')
    expect(t.server.refreshes()).toBe(1)
    t.clock.now += 2_000
    await t.tokens.getAccessToken('acme')
    expect(t.server.refreshes()).toBe(2)
  })

  it('50 concurrent callers with an expired token make exactly one refresh request', async () => {
    const t = setup({ delayMs: 30 })
    await t.tokens.saveTokenResponse('acme', t.server.grant(60))
    t.clock.now += 120_000
    const got = await Promise.all(Array.from({ length: 50 }, () => t.tokens.getAccessToken('acme')))
    expect(t.server.refreshes()).toBe(1)
    expect(new Set(got).size).toBe(1)
    // and after it, nobody refreshes again
    await t.tokens.getAccessToken('acme')
    expect(t.server.refreshes()).toBe(1)
  })

  it('shares one in-process refresh even with a lock hook that does not serialize', async () => {
    const t = setup({ delayMs: 30 })
    const tokens = new TokenManager({
      config: loadConfig({}, { authUrl: AUTH, clientId: 'cid', clientSecret: 'csecret', storeUrl: 'memory://' }),
      store: t.store,
      log: createLogger({ level: 'silent' }),
      fetch: t.server.fetchImpl,
      now: () => t.clock.now,
      key: t.key,
      lock: (_key, fn) => fn(),
    })
    await tokens.saveTokenResponse('acme', t.server.grant(60))
    t.clock.now += 120_000
    const got = await Promise.all(Array.from({ length: 50 }, () => tokens.getAccessToken('acme')))
    expect(t.server.refreshes()).toBe(1)
    expect(new Set(got).size).toBe(1)
  })

  it('refreshes once on 401, shared by concurrent callers; a caller with an already replaced token gets the new one for free', async () => {
    const t = setup({ delayMs: 20 })
    const grant = t.server.grant()
    await t.tokens.saveTokenResponse('acme', grant)
    const rejected = await t.tokens.getAccessToken('acme')
    const got = await Promise.all(Array.from({ length: 10 }, () => t.tokens.refreshAfterUnauthorized('acme', rejected)))
    expect(t.server.refreshes()).toBe(1)
    expect(new Set(got).size).toBe(1)
    expect(got[0]).not.toBe(rejected)
    // A late caller still holding the old token: no new request.
    expect(await t.tokens.refreshAfterUnauthorized('acme', rejected)).toBe(got[0])
    expect(t.server.refreshes()).toBe(1)
    // The new token refused too: one more refresh.
    expect(await t.tokens.refreshAfterUnauthorized('acme', got[0]!)).not.toBe(got[0])
    expect(t.server.refreshes()).toBe(2)
  })

  it('a refused refresh (invalid_grant) disconnects the organization, persistently, until it is reconnected', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', { ...t.server.grant(), refresh_token: 'rt-revoked' })
    t.clock.now += 7200_000
    const err = await t.tokens.getAccessToken('acme').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OrganizationDisconnectedError)
    expect((err as OrganizationDisconnectedError).domain).toBe('acme')
    expect((err as Error).message).toContain('invalid_grant')
    expect((err as Error).message).not.toContain('rt-revoked')
    // no further requests while disconnected, also from a restarted manager
    await expect(t.tokens.getAccessToken('acme')).rejects.toBeInstanceOf(OrganizationDisconnectedError)
    await expect(t.make().refreshAfterUnauthorized('acme', 'x')).rejects.toBeInstanceOf(OrganizationDisconnectedError)
    expect(t.server.refreshes()).toBe(1)
    expect(await t.make().status()).toEqual([expect.objectContaining({ domain: 'acme', connected: false, state: 'disconnected' })])
    expect(t.log()).toContain('organization disconnected')
    expect(JSON.stringify(await t.store.get('org:acme'))).not.toContain('sealed')
    // reconnecting clears it
    const again = t.server.grant()
    await t.tokens.saveTokenResponse('acme', again)
    expect(await t.tokens.getAccessToken('acme')).toBe(again.access_token)
    expect((await t.tokens.status())[0]).toMatchObject({ connected: true, state: 'connected' })
    expect((await t.tokens.status())[0]!.reason).toBeUndefined()
  })

  it('a transient refresh failure keeps using a still valid token, and fails typed once it expired', async () => {
    const t = setup()
    const grant = t.server.grant(3600)
    await t.tokens.saveTokenResponse('acme', grant)
    t.server.mode.value = 'error500'
    t.clock.now += 3600_000 - 30_000
    expect(await t.tokens.getAccessToken('acme')).toBe(grant.access_token)
    t.clock.now += 60_000
    const err = await t.tokens.getAccessToken('acme').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TokenEndpointError)
    expect((err as TokenEndpointError).retryable).toBe(true)
    expect((await t.tokens.status())[0]!.connected).toBe(true)
    t.server.mode.value = 'ok'
    expect(await t.tokens.getAccessToken('acme')).not.toBe(grant.access_token)
  })

  it('never lets a token reach an error message or a log line, even when the server echoes it', async () => {
    const t = setup()
    const grant = t.server.grant(60)
    await t.tokens.saveTokenResponse('acme', grant)
    t.clock.now += 120_000
    t.server.mode.value = 'echo-error'
    const err = (await t.tokens.getAccessToken('acme').catch((e: unknown) => e)) as Error
    expect(err).toBeInstanceOf(TokenEndpointError)
    expect(err.message).toContain('invalid_request')
    expect(err.message).not.toContain(grant.refresh_token)
    t.server.mode.value = 'ok'
    const fresh = await t.tokens.getAccessToken('acme')
    const logged = t.log()
    expect(logged).toContain('access token refreshed')
    for (const secret of [grant.access_token, grant.refresh_token, fresh, 'csecret']) expect(logged).not.toContain(secret)
  })

  it('sends form-encoded token requests with OAUTH_TOKEN_FORMAT=form', async () => {
    const t = setup({ format: 'form' })
    await t.tokens.saveTokenResponse('acme', t.server.grant(60))
    t.clock.now += 120_000
    await t.tokens.getAccessToken('acme')
    expect(t.server.requests[0]!.contentType).toBe('application/x-www-form-urlencoded')
    expect(t.server.requests[0]!.body.grant_type).toBe('refresh_token')
  })

  it('keeps the old refresh token when a refresh response carries none', async () => {
    const t = setup()
    const grant = t.server.grant(60)
    await t.tokens.saveTokenResponse('acme', grant)
    t.server.mode.value = 'no-refresh-token'
    t.clock.now += 120_000
    await t.tokens.getAccessToken('acme')
    // the strict fake retired it, so the next refresh is refused: proves the old one was kept and sent
    t.clock.now += 7200_000
    await expect(t.tokens.getAccessToken('acme')).rejects.toBeInstanceOf(OrganizationDisconnectedError)
    expect(t.server.requests.map((r) => r.body.refresh_token)).toEqual([grant.refresh_token, grant.refresh_token])
  })

  it('tokens sealed under another key mark the organization disconnected with a clear reason', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', t.server.grant())
    const other = new TokenManager({ config: loadConfig({}, { storeUrl: 'memory://' }), store: t.store, log: createLogger({ level: 'silent' }), key: randomBytes(32) })
    const err = (await other.getAccessToken('acme').catch((e: unknown) => e)) as Error
    expect(err).toBeInstanceOf(OrganizationDisconnectedError)
    expect(err.message).toContain('TOKEN_KEY')
  })

  it('maps organization ids to domains, and runs refreshes under the lock hook', async () => {
    const t = setup()
    const keys: string[] = []
    const tokens = new TokenManager({
      config: loadConfig({}, { authUrl: AUTH, clientId: 'cid', clientSecret: 'csecret', storeUrl: 'memory://' }),
      store: t.store,
      log: createLogger({ level: 'silent' }),
      fetch: t.server.fetchImpl,
      now: () => t.clock.now,
      key: t.key,
      lock: async (key, fn) => {
        keys.push(key)
        return fn()
      },
    })
    await tokens.rememberOrganization('1001', 'Acme')
    await tokens.rememberOrganization('1001', 'acme')
    expect(await tokens.domainOf('1001')).toBe('acme')
    expect(await t.make().domainOf('1001')).toBe('acme')
    expect(await tokens.domainOf('999')).toBeUndefined()
    // A domain connected by another organization (its owner moved): the old owner's link goes.
    await tokens.rememberOrganization('2002', 'beta')
    await tokens.rememberOrganization('3003', 'beta')
    expect(await tokens.organizationOf('beta')).toBe('3003')
    expect(await tokens.domainOf('2002')).toBeUndefined()
    expect(await t.make().domainOf('2002')).toBeUndefined()
    await tokens.saveTokenResponse('acme', t.server.grant(60))
    t.clock.now += 120_000
    await tokens.getAccessToken('acme')
    expect(keys.filter((k) => k !== 'oauth-index')).toEqual(['oauth-refresh:acme', 'oauth-refresh:acme'])
    // The index of organizations, one document every instance writes, is changed under the hook too.
    expect(keys).toContain('oauth-index')
    expect((await tokens.status())[0]).toMatchObject({ domain: 'acme', organizationId: '1001', connected: true })
  })
})

describe('TokenManager on the embedded SQLite store', () => {
  it('creates the key file, and a restarted worker reads the tokens it stored', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-tm-'))
    try {
      const config = loadConfig({}, { dataDir: dir, storeUrl: `sqlite://${path.join(dir, 'switchyard.sqlite')}`, authUrl: AUTH, clientId: 'cid', clientSecret: 'csecret' })
      const log = createLogger({ level: 'silent' })
      const first = await createStores(config.storeUrl)
      const a = await TokenManager.create({ config, store: first.tokens, log })
      await a.saveTokenResponse('acme', { access_token: 'at-sqlite', refresh_token: 'rt-sqlite', expires_in: 7200, token_type: 'bearer' })
      await a.rememberOrganization('7', 'acme')
      await first.close()
      expect(statSync(path.join(dir, 'token.key')).mode & 0o777).toBe(0o600)

      const second = await createStores(config.storeUrl)
      const b = await TokenManager.create({ config, store: second.tokens, log })
      expect(await b.getAccessToken('acme')).toBe('at-sqlite')
      expect(await b.domainOf('7')).toBe('acme')
      expect(await b.status()).toEqual([expect.objectContaining({ domain: 'acme', organizationId: '7', connected: true })])
      await second.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
