// A refresh whose new tokens the store refused to keep: the token endpoint has retired the refresh
// token it was given, so the worker must never send that one again (it would be refused, and the
// organization marked disconnected). It keeps the new tokens and writes them when the store takes them.
import { randomBytes } from 'node:crypto'
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { TokenManager } from '../../src/platform/token-manager.js'
import { createLogger } from '../../src/util/logger.js'

const AUTH = 'http://auth.test'

function setup() {
  // A strict token endpoint: every refresh retires the refresh token it was given.
  const live = new Set<string>(['rt-0'])
  let issued = 0
  const sent: string[] = []
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as Record<string, string>
    sent.push(body.refresh_token!)
    const json = (status: number, b: unknown) => new Response(JSON.stringify(b), { status, headers: { 'content-type': 'application/json' } })
    if (!live.delete(body.refresh_token!)) return json(400, { error: 'invalid_grant' })
    issued++
    live.add(`rt-${issued}`)
    return json(200, { access_token: `at-${issued}`, refresh_token: `rt-${issued}`, expires_in: 3600 })
  }) as unknown as typeof fetch
  const log = createLogger({ level: 'silent' })
  const config = loadConfig({}, { authUrl: AUTH, clientId: 'cid', clientSecret: 'csecret', baseUrl: 'https://worker.test', storeUrl: 'memory://' })
  const clock = { now: 1_000_000 }
  const store = new Keyv()
  const failing = { writes: 0 }
  const set = store.set.bind(store)
  store.set = (async (k: string, v: unknown, ttl?: number) => {
    if (failing.writes > 0 && String(k).startsWith('org:')) {
      failing.writes--
      throw new Error('store unavailable')
    }
    return set(k, v, ttl)
  }) as typeof store.set
  const key = randomBytes(32)
  const make = () => new TokenManager({ config, store, log, fetch: fetchImpl, now: () => clock.now, key })
  return { tokens: make(), make, store, clock, sent, failing }
}

describe('a refresh the store could not keep', () => {
  it('never sends the retired refresh token again, and keeps the organization connected once the store answers', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', { access_token: 'at-0', refresh_token: 'rt-0', expires_in: 3600 })
    t.clock.now += 3600_000
    t.failing.writes = 1
    await expect(t.tokens.getAccessToken('acme')).rejects.toThrow()
    expect(t.sent).toEqual(['rt-0'])
    // The store is back: the tokens the endpoint gave are written, not refreshed with rt-0 again.
    const token = await t.tokens.getAccessToken('acme')
    expect(t.sent).not.toContain(undefined)
    expect(t.sent.filter((s) => s === 'rt-0')).toHaveLength(1)
    expect(token).toMatch(/^at-/)
    const [status] = await t.tokens.status()
    expect(status).toMatchObject({ domain: 'acme', state: 'connected' })
    // And the next refresh uses the newest refresh token.
    t.clock.now += 3600_000
    expect(await t.tokens.getAccessToken('acme')).toMatch(/^at-/)
    expect(new Set(t.sent).size).toBe(t.sent.length)
  })

  it('a store still failing leaves it to the next try, with the newest refresh token', async () => {
    const t = setup()
    await t.tokens.saveTokenResponse('acme', { access_token: 'at-0', refresh_token: 'rt-0', expires_in: 3600 })
    t.clock.now += 3600_000
    t.failing.writes = 3
    for (let i = 0; i < 3; i++) await expect(t.tokens.getAccessToken('acme')).rejects.toThrow()
    expect(await t.tokens.getAccessToken('acme')).toMatch(/^at-/)
    expect(new Set(t.sent).size).toBe(t.sent.length)
    expect((await t.tokens.status())[0]).toMatchObject({ state: 'connected' })
  })

  it('revives the organization when another instance, holding only the retired refresh token, had it disconnected meanwhile', async () => {
    const t = setup()
    const other = t.make()
    await t.tokens.saveTokenResponse('acme', { access_token: 'at-0', refresh_token: 'rt-0', expires_in: 3600 })
    t.clock.now += 3600_000
    t.failing.writes = 1
    await expect(t.tokens.getAccessToken('acme')).rejects.toThrow()
    // The other instance reads the store: rt-0, which the endpoint refuses now.
    await expect(other.getAccessToken('acme')).rejects.toThrow(/disconnected/)
    expect(await t.tokens.getAccessToken('acme')).toBe('at-1')
    expect((await t.tokens.status())[0]).toMatchObject({ state: 'connected' })
    t.clock.now += 1_000
    expect(await other.getAccessToken('acme')).toBe('at-1')
  })
})
