// Several instances on one shared store (Redis, PostgreSQL), as docs/deployment.md's scale-out.
//
// An instance whose TOKEN_KEY differs from the others' (a replica added without it, which then
// uses its own DATA_DIR/token.key, or a typo) cannot read the tokens they saved: it must say so
// ("Connected in one instance, not in another", docs/connect.md), not write the organization
// disconnected over the shared record and so erase the tokens every other instance still reads
// (and that "Restore the old key" would have brought back). Before, one such replica's first
// request disconnected every organization for every replica, until each was connected again.
//
// The index of connected organizations (the operator page's list) is one document that every
// instance reads and writes again: organizations connected at the same time through two
// instances must all be listed (each instance's own lock let one overwrite the other's).
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { createStores, type Stores } from '../../src/store/create-stores.js'
import { createLock, type Locks } from '../../src/store/locks.js'
import { OrganizationDisconnectedError, TokenManager } from '../../src/platform/token-manager.js'
import { createLogger } from '../../src/util/logger.js'
import { describeWithService } from '../support/services.js'

const REDIS_DB = 14
const TABLE = `auditf_token_key_${randomBytes(4).toString('hex')}`

function grant(n: number) {
  return { access_token: `at-${n}`, token_type: 'bearer', expires_in: 7200, refresh_token: `rt-${n}` }
}

function suite(storeUrl: () => string, drop: () => Promise<void>) {
  let stores: Stores
  let locks: Locks
  const log = createLogger({ level: 'silent' })
  // Each test run its own key prefix (the store's), so nothing it writes meets another file's.
  const prefix = `tk${randomBytes(3).toString('hex')}-`
  const config = () => loadConfig({}, { authUrl: 'http://auth.test', clientId: 'cid', clientSecret: 'csecret', storeUrl: storeUrl() })
  const instance = (key: Buffer) => new TokenManager({ config: config(), store: stores.tokens, log, key, lock: locks.lock })

  beforeAll(async () => {
    stores = await createStores(storeUrl(), { prefix })
    locks = await createLock(storeUrl(), { prefix })
  })
  afterAll(async () => {
    for await (const [key] of stores.tokens.iterator!(undefined) as AsyncIterable<[string]>) await stores.tokens.delete(String(key).replace(/^[^:]*tokens:+/, ''))
    await locks.close()
    await stores.close()
    await drop()
  })

  it('an instance with another TOKEN_KEY refuses to use the tokens, and leaves them to the instances that can read them', async () => {
    const key = randomBytes(32)
    const a = instance(key)
    await a.saveTokenResponse('acme', grant(1))
    const misconfigured = instance(randomBytes(32))
    const err = (await misconfigured.getAccessToken('acme').catch((e: unknown) => e)) as Error
    expect(err).toBeInstanceOf(OrganizationDisconnectedError)
    expect(err.message).toContain('TOKEN_KEY')
    // The instances with the right key still have the organization's tokens...
    expect(await instance(key).getAccessToken('acme')).toBe('at-1')
    // ...and so does the misconfigured one once it is given the right key (a restart with it).
    const fixed = instance(key)
    expect(await fixed.getAccessToken('acme')).toBe('at-1')
    expect((await fixed.status()).find((s) => s.domain === 'acme')).toMatchObject({ connected: true, state: 'connected' })
  })

  it('lists every organization connected at the same time through two instances', async () => {
    const key = randomBytes(32)
    const a = instance(key)
    const b = instance(key)
    const domains = Array.from({ length: 12 }, (_, i) => `org${i}`)
    await Promise.all(domains.map((d, i) => (i % 2 ? a : b).saveTokenResponse(d, grant(100 + i))))
    const listed = (await a.status()).map((s) => s.domain)
    expect(listed.filter((d) => d.startsWith('org')).sort()).toEqual([...domains].sort())
  })
}

await describeWithService('redis', 'tokens on a shared Redis store', (url) => {
  suite(() => `${url}/${REDIS_DB}`, async () => undefined)
})

await describeWithService('postgres', 'tokens on a shared PostgreSQL store', (url) => {
  const withTable = () => `${url}${url.includes('?') ? '&' : '?'}table=${TABLE}`
  suite(withTable, async () => {
    const { default: pg } = await import('pg')
    const pool = new pg.Pool({ connectionString: url })
    try {
      await pool.query(`DROP TABLE IF EXISTS public.${TABLE}`)
    } finally {
      await pool.end()
    }
  })
})
