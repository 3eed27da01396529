// One suite, every back end: what the worker relies on from its store must hold on memory://,
// SQLite, Redis and PostgreSQL alike. Each run uses its own namespace prefix so parallel runs on
// a shared Redis or database don't see each other, and clears its keys afterwards.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { Journal } from '../../src/queue/journal.js'
import type { Job } from '../../src/protocol/job.js'
import { SettingsService, type StepRef } from '../../src/settings/settings-service.js'
import { createStores, requireSqlite, STORE_NAMES, type Stores } from '../../src/store/create-stores.js'
import { silentLogger } from '../../src/util/logger.js'
import { describeWithService } from '../support/services.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function job(batchId: string, stringId: number, over: Partial<Job> = {}): Job {
  return {
    key: `org-1|7|41|de|${stringId}|1`,
    organizationId: 'org-1',
    domain: 'acme',
    moduleKey: 'qa-gate',
    projectId: 7,
    stepId: 41,
    languageId: 'de',
    stringId,
    revision: 1,
    string: { key: `k${stringId}`, context: '', maxLength: 0, text: `Hello ${stringId} — ünïcödé ✓`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [1, 2] },
    sourceLanguage: { id: 'en', name: 'English', locale: 'en-US', pluralCategoryNames: ['one', 'other'], textDirection: 'ltr' } as unknown as Job['sourceLanguage'],
    targetLanguage: { id: 'de', name: 'German', locale: 'de-DE', pluralCategoryNames: ['one', 'other'], textDirection: 'ltr' } as unknown as Job['targetLanguage'],
    batchId,
    attempts: 0,
    ...over,
  }
}

/** The whole contract, for one STORE_URL. `url()` is called in beforeAll (the SQLite file is made there). */
function storeSuite(url: () => string, o: { persistent: boolean } = { persistent: true }) {
  // Plain letters and '-': Keyv splits keys at ':', Redis matches namespaces as globs and
  // PostgreSQL's LIKE reads '_' as a wildcard.
  const prefix = `t${Date.now().toString(36)}${randomBytes(4).toString('hex')}-`
  let stores: Stores
  const opened: Stores[] = []
  // What "another process on the same store" opens; memory:// lives and dies with its Stores, so
  // there the second instance shares the first one's.
  const open = async () => {
    if (!o.persistent && stores) return stores
    const s = await createStores(url(), { prefix })
    opened.push(s)
    return s
  }

  beforeAll(async () => {
    stores = await open()
  })
  afterAll(async () => {
    if (stores) for (const name of STORE_NAMES) await stores[name].clear()
    for (const s of opened) await s.close()
  })

  it('ping() answers true', async () => {
    expect(await stores.ping()).toBe(true)
  })

  it.each(STORE_NAMES)('%s: set, get, overwrite and delete', async (name) => {
    const ns = stores[name]
    expect(await ns.get('k1')).toBeUndefined()
    await ns.set('k1', { n: 1 })
    expect(await ns.get('k1')).toEqual({ n: 1 })
    await ns.set('k1', { n: 2 })
    expect(await ns.get('k1')).toEqual({ n: 2 })
    expect(await ns.delete('k1')).toBe(true)
    expect(await ns.get('k1')).toBeUndefined()
    expect(await ns.delete('k1')).toBe(false)
  })

  it('keeps namespaces apart: the same key in each holds its own value, deleting one leaves the others', async () => {
    for (const name of STORE_NAMES) await stores[name].set('shared', `value of ${name}`)
    for (const name of STORE_NAMES) expect(await stores[name].get('shared')).toBe(`value of ${name}`)
    await stores.settings.delete('shared')
    expect(await stores.settings.get('shared')).toBeUndefined()
    for (const name of STORE_NAMES.filter((n) => n !== 'settings')) expect(await stores[name].get('shared')).toBe(`value of ${name}`)
    for (const name of STORE_NAMES) await stores[name].delete('shared')
    // A key in journal is not visible in settings, and the other way round.
    await stores.journal.set('only-in-journal', 1)
    expect(await stores.settings.get('only-in-journal')).toBeUndefined()
    await stores.journal.delete('only-in-journal')
  })

  it('iterates only its own namespace (journal replay must not pick up look-alike keys)', async () => {
    // Keys shaped like journal entries, in every other namespace.
    for (const name of STORE_NAMES.filter((n) => n !== 'journal')) {
      await stores[name].set('b:intruder', [job('intruder', 1)])
      await stores[name].set('p:intruder', { job: job('intruder', 1), reason: 'x', at: 1 })
    }
    await stores.journal.set('b:mine', [job('mine', 1)])
    const seen: Array<[string, unknown]> = []
    for await (const entry of stores.journal.iterator!(undefined) as AsyncIterable<[string, unknown]>) seen.push(entry)
    expect(seen.map(([k]) => String(k).replace(/^journal:/, ''))).toEqual(['b:mine'])
    const loaded = await new Journal(stores.journal).load()
    expect(loaded.batches.map((b) => b.batchId)).toEqual(['mine'])
    expect(loaded.parked).toEqual([])
    for (const name of STORE_NAMES) {
      await stores[name].delete('b:intruder')
      await stores[name].delete('p:intruder')
    }
    await stores.journal.delete('b:mine')
  })

  it('expires entries after their TTL, on read and in iteration', async () => {
    await stores.cache.set('short', 'soon gone', 250)
    await stores.cache.set('long', 'stays', 60_000)
    await stores.journal.set('b:short', [job('short', 1)], 250)
    expect(await stores.cache.get('short')).toBe('soon gone')
    await sleep(400)
    expect(await stores.cache.get('short')).toBeUndefined()
    expect(await stores.cache.get('long')).toBe('stays')
    expect((await new Journal(stores.journal).load()).batches).toEqual([])
    await stores.cache.delete('long')
  })

  it('round-trips unicode, nested objects, arrays, numbers, booleans and null, under unicode keys', async () => {
    const value = {
      text: 'Grüße 👋 — こんにちは — مرحبا — \u0000nul and "quotes" \\ backslash \n newline',
      nested: { deep: { deeper: [1, 2.5, -3, { x: null, y: true, z: false }], empty: {}, none: [] } },
      big: Number.MAX_SAFE_INTEGER,
    }
    await stores.settings.set('project:qa-gate:组织:7:41', value)
    await stores.activity.set('ключ 🔑', ['a', { b: 'ç' }])
    expect(await stores.settings.get('project:qa-gate:组织:7:41')).toEqual(value)
    expect(await stores.activity.get('ключ 🔑')).toEqual(['a', { b: 'ç' }])
    await stores.settings.delete('project:qa-gate:组织:7:41')
    await stores.activity.delete('ключ 🔑')
  })

  it('setMany writes what set() would: the same values read back, with the time to live honoured', async () => {
    const values: unknown[] = [
      { text: 'Grüße 👋 — \u0000 "quotes" \\ \n \u2028 lone \ud800 surrogate', nested: { a: [1, { b: null }], empty: {} } },
      [0.1, -5e-324, 1e21, 1.5e300, Number.MAX_SAFE_INTEGER, true, false, null],
      'a plain "string" with \\ escapes',
      42,
      null,
    ]
    await stores.setMany('cache', values.map((value, i) => ({ key: `many:${i}`, value })), 60_000)
    for (const [i, value] of values.entries()) expect(await stores.cache.get(`many:${i}`)).toEqual(value)
    if (stores.kind === 'sqlite') {
      // The rows go to SQLite as UTF-8 bytes: stored as text, what set() stores.
      const adapter = stores.cache.store as unknown as { query(sql: string, ...args: unknown[]): Promise<Array<{ t: string; value: string }>> }
      await stores.cache.set('one:0', values[0], 60_000)
      const [many] = await adapter.query('SELECT typeof(value) AS t, value FROM keyv WHERE key = ?', `${prefix}cache:many:0`)
      const [one] = await adapter.query('SELECT typeof(value) AS t, value FROM keyv WHERE key = ?', `${prefix}cache:one:0`)
      expect([many!.t, one!.t]).toEqual(['text', 'text'])
      expect(JSON.parse(many!.value).value).toEqual(values[0])
      expect(JSON.parse(many!.value).value).toEqual(JSON.parse(one!.value).value)
      await stores.cache.delete('one:0')
      // In one statement: not the row-by-row fallback kept for values SQLite's JSON parser refuses.
      const statements = vi.spyOn(adapter, 'query')
      await stores.setMany('cache', values.map((value, i) => ({ key: `many:${i}`, value })), 60_000)
      expect(statements).toHaveBeenCalledTimes(1)
      statements.mockRestore()
    }
    if (stores.kind === 'postgres') {
      // One statement for all the rows (a round trip and a commit per row held a restart's drain
      // to a fifth of SQLite's), however many.
      const adapter = stores.cache.store as unknown as { query(sql: string, values?: unknown[]): Promise<unknown[]> }
      const statements = vi.spyOn(adapter, 'query')
      await stores.setMany('cache', Array.from({ length: 300 }, (_, i) => ({ key: `many:row${i}`, value: i })), 60_000)
      expect(statements).toHaveBeenCalledTimes(1)
      statements.mockRestore()
      expect(await stores.cache.get('many:row299')).toBe(299)
      for (let i = 0; i < 300; i++) await stores.cache.delete(`many:row${i}`)
    }
    // A key given twice keeps its last value, as when written one by one (PostgreSQL refuses to
    // upsert one row twice in a statement).
    await stores.setMany('cache', [{ key: 'many:twice', value: 'first' }, { key: 'many:other', value: 1 }, { key: 'many:twice', value: 'last' }], 60_000)
    expect(await stores.cache.get('many:twice')).toBe('last')
    expect(await stores.cache.get('many:other')).toBe(1)
    await stores.cache.delete('many:twice')
    await stores.cache.delete('many:other')
    await stores.setMany('cache', [{ key: 'many:brief', value: { gone: 'soon' } }], 1)
    await new Promise((r) => setTimeout(r, 10))
    expect(await stores.cache.get('many:brief')).toBeUndefined()
    for (const i of values.keys()) await stores.cache.delete(`many:${i}`)
    // Nested deeper than SQLite's JSON parser goes: written all the same, beside the others.
    let deep: unknown = 'bottom'
    for (let i = 0; i < 1_200; i++) deep = [deep]
    await stores.setMany('cache', [{ key: 'many:plain', value: 1 }, { key: 'many:deep', value: deep }], 60_000)
    expect(await stores.cache.get('many:deep')).toEqual(deep)
    expect(await stores.cache.get('many:plain')).toBe(1)
    await stores.cache.delete('many:deep')
    await stores.cache.delete('many:plain')
  })

  it('delete and deleteMany say whether a row was there, touch only their keys, and (SQL) never read a value back', async () => {
    // A journal entry (a group of batches, up to 1-2 MB) is deleted once its last string is
    // reported: the SQL adapters' own deletes read every row whole first, only to answer.
    const big = 'x'.repeat(200_000)
    await stores.setMany('journal', ['del:1', 'del:2', 'del:3', 'del:4'].map((key) => ({ key, value: { big } })))
    await stores.settings.set('del:1', 'neighbour')
    const sql = stores.kind === 'sqlite' || stores.kind === 'postgres'
    const adapter = stores.journal.store as unknown as { query(sql: string, ...args: unknown[]): Promise<unknown[]> }
    const statements = sql ? vi.spyOn(adapter, 'query') : undefined
    expect(await stores.journal.delete('del:1')).toBe(true)
    expect(await stores.journal.delete('del:1')).toBe(false)
    expect(await stores.journal.delete(['del:2', 'del:3'])).toBe(true)
    expect(await stores.journal.delete(['del:2', 'del:3'])).toBe(false)
    if (statements) {
      expect(statements.mock.calls.length).toBeGreaterThan(0)
      for (const [text] of statements.mock.calls) expect(text).toMatch(/^DELETE /)
      for (const r of statements.mock.results) expect(JSON.stringify(await r.value).length).toBeLessThan(100)
      statements.mockRestore()
    }
    expect(await stores.journal.get('del:1')).toBeUndefined()
    expect(await stores.journal.get('del:2')).toBeUndefined()
    expect(await stores.journal.get('del:3')).toBeUndefined()
    expect(await stores.journal.get('del:4')).toEqual({ big })
    expect(await stores.settings.get('del:1')).toBe('neighbour')
    await stores.journal.delete('del:4')
    await stores.settings.delete('del:1')
  })

  it('scan answers the keys of a namespace that begin with a prefix, with their values, none expired (where the back end has a range query)', async () => {
    if (stores.kind !== 'sqlite' && stores.kind !== 'postgres') return expect(stores.scan).toBeUndefined()
    const values: Record<string, unknown> = { 'e:12:a': { n: 1, text: 'ünï ✓' }, 'e:12:b': 'two', 'e:123:a': 3, 'e:1:a': 4, 'e:12;': 5, 'e:12': 6, 'e:12:': 7 }
    await stores.setMany('findings', Object.entries(values).map(([key, value]) => ({ key, value })), 60_000)
    await stores.findings.set('e:12:gone', 8, 1)
    await stores.cache.set('e:12:other-namespace', 9, 60_000)
    await sleep(10)
    const found = await stores.scan!('findings', ['e:12:'])
    expect(found.sort(([a], [b]) => a.localeCompare(b))).toEqual([['e:12:', 7], ['e:12:a', { n: 1, text: 'ünï ✓' }], ['e:12:b', 'two']])
    expect(await stores.scan!('findings', ['e:9:'])).toEqual([])
    // Several prefixes at once, one beginning another: each key once.
    const both = await stores.scan!('findings', ['e:1:', 'e:12', 'e:123:'])
    expect(both.map(([k]) => k).sort()).toEqual(['e:1:a', 'e:12', 'e:12:', 'e:12:a', 'e:12:b', 'e:123:a', 'e:12;'].sort())
    expect(await stores.scan!('findings', [])).toEqual([])
    for (const key of [...Object.keys(values), 'e:12:gone']) await stores.findings.delete(key)
    await stores.cache.delete('e:12:other-namespace')
  })

  it('Journal: append, done, park and load; a second instance on the same store replays what the first left', async () => {
    const first = new Journal(stores.journal)
    const finished = first.newBatchId()
    const unfinished = first.newBatchId()
    await first.append(finished, [job(finished, 1), job(finished, 2)])
    await first.append(unfinished, [job(unfinished, 3), job(unfinished, 4), job(unfinished, 5)])
    expect(first.size).toBe(5)
    await first.done(job(finished, 1))
    await first.done(job(finished, 2))
    await first.done(job(unfinished, 3))
    await first.park(job(unfinished, 4), 'plugin failed: timeout')
    expect(first.size).toBe(1)
    expect(first.parked).toBe(1)

    // "Crash": a new process (its own connections) opens the same store.
    const other = await open()
    const second = new Journal(other.journal)
    const { batches, parked } = await second.load()
    expect(batches.map((b) => b.batchId)).toEqual([unfinished])
    // The entry holds the batch as acknowledged; which of its jobs were done lives in memory only
    // (at-least-once: the repeat is harmless).
    expect(batches[0]!.jobs.map((j) => j.stringId)).toEqual([3, 4, 5])
    expect(batches[0]!.jobs[0]).toEqual(job(unfinished, 3))
    expect(parked).toHaveLength(1)
    expect(parked[0]!.job).toEqual(job(unfinished, 4))
    expect(parked[0]!.reason).toBe('plugin failed: timeout')

    // The second instance took the batch into its books when it loaded it; it finishes it, and the
    // entry goes away for everyone.
    for (const id of [3, 4, 5]) await second.done(job(unfinished, id))
    await second.unpark(job(unfinished, 4))
    expect(second.size).toBe(0)
    expect(await first.load()).toEqual({ batches: [], parked: [] })
  })

  it('SettingsService: put, get and delete, seen by a second instance sharing the store', async () => {
    const project: StepRef = { organizationId: 'org-ü', projectId: 7, stepId: 41, moduleKey: 'qa-gate' }
    const template: StepRef = { organizationId: 'org-ü', templateId: 5, stepId: 42, moduleKey: 'qa-gate' }
    const a = new SettingsService(stores.settings, silentLogger(), { ttlMs: 0 })
    const other = await open()
    const b = new SettingsService(other.settings, silentLogger(), { ttlMs: 0 })
    await a.put(project, { tone: 'formal', terms: ['Größe', '大小'], nested: { max: 1.5 } })
    await a.put(template, { tone: 'casual' })
    expect(await b.get(project)).toEqual({ tone: 'formal', terms: ['Größe', '大小'], nested: { max: 1.5 } })
    expect(await b.get(template)).toEqual({ tone: 'casual' })
    // A project's lookup finds the template's settings when it names the template, and only then.
    expect(await b.get({ organizationId: 'org-ü', projectId: 9, templateId: 5, stepId: 42, moduleKey: 'qa-gate' })).toEqual({ tone: 'casual' })
    expect(await b.get({ organizationId: 'org-ü', projectId: 9, stepId: 42, moduleKey: 'qa-gate' })).toBeUndefined()
    await b.delete(project)
    await b.delete(template)
    expect(await a.get(project)).toBeUndefined()
    expect(await a.get(template)).toBeUndefined()
  })

  it('close() can be called twice', async () => {
    const s = await createStores(url(), { prefix })
    expect(await s.ping()).toBe(true)
    await s.close()
    await s.close()
  })
}

describe('stores on memory://', () => {
  storeSuite(() => 'memory://', { persistent: false })
})

describe('stores on sqlite:// (temp file)', () => {
  let dir: string | undefined
  storeSuite(() => {
    dir ??= mkdtempSync(path.join(tmpdir(), 'switchyard-store-'))
    return `sqlite://${path.join(dir, 'store.sqlite')}`
  })
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })
})

await describeWithService('redis', 'stores on redis://', (url) => storeSuite(() => url))
await describeWithService('postgres', 'stores on postgres://', (url) => storeSuite(() => url))

await describeWithService('postgres', 'postgres table and schema from STORE_URL', (url) => {
  it('creates and uses the table named in ?table=', async () => {
    const table = `switchyard_test_${randomBytes(4).toString('hex')}`
    const stores = await createStores(`${url}${url.includes('?') ? '&' : '?'}table=${table}`)
    try {
      await stores.state.set('x', 1)
      const { default: pg } = await import('pg')
      const pool = new pg.Pool({ connectionString: url })
      try {
        const { rows } = await pool.query<{ key: string; value: string }>(`SELECT key, value FROM public.${table}`)
        expect(rows.map((r) => r.key)).toEqual(['state:x'])
        await pool.query(`DROP TABLE public.${table}`)
      } finally {
        await pool.end()
      }
    } finally {
      await stores.close()
    }
  })

  it('iterates page by page, and a query that fails part way throws instead of ending as if every row was seen', async () => {
    // The journal's replay after a restart iterates; an iteration that ended quietly at a lost
    // connection would leave the rest of the backlog on disk, unworked, until the next restart.
    const table = `switchyard_test_${randomBytes(4).toString('hex')}`
    const stores = await createStores(`${url}${url.includes('?') ? '&' : '?'}table=${table}`)
    const { default: pg } = await import('pg')
    const pool = new pg.Pool({ connectionString: url })
    try {
      const ENTRIES = 40 // more than two pages of the journal's
      for (let i = 0; i < ENTRIES; i++) await stores.journal.set(`b:${String(i).padStart(3, '0')}`, { i })
      await stores.state.set('other', 1)
      const all: string[] = []
      for await (const [key] of stores.journal.iterator!(undefined) as AsyncIterable<[string, unknown]>) all.push(String(key))
      expect(all.sort()).toEqual(Array.from({ length: ENTRIES }, (_, i) => `b:${String(i).padStart(3, '0')}`))

      const seen: string[] = []
      const iterate = async () => {
        for await (const [key] of stores.journal.iterator!(undefined) as AsyncIterable<[string, unknown]>) {
          // The table goes away after the first row (as a connection would): the next page fails.
          if (!seen.length) await pool.query(`ALTER TABLE public.${table} RENAME TO ${table}_away`)
          seen.push(String(key))
        }
      }
      await expect(iterate()).rejects.toThrow(/does not exist/)
      expect(seen.length).toBeLessThan(ENTRIES)
      await pool.query(`ALTER TABLE public.${table}_away RENAME TO ${table}`)
    } finally {
      await pool.query(`DROP TABLE IF EXISTS public.${table}`).catch(() => undefined)
      await pool.query(`DROP TABLE IF EXISTS public.${table}_away`).catch(() => undefined)
      await pool.end()
      await stores.close()
    }
  })

  it('refuses a table name that is not a plain identifier', async () => {
    await expect(createStores(`${url}?table=x;drop`)).rejects.toThrow(/table "x;drop" must be letters/)
  })
})

describe('unreachable back ends', () => {
  // Port 1 on loopback: nothing listens, connections are refused at once.
  it.each(['redis://127.0.0.1:1', 'postgres://postgres@127.0.0.1:1/test'])('%s: ping() is false, operations throw, close() returns', async (url) => {
    const stores = await createStores(url, { connectTimeoutMs: 500 })
    try {
      const started = Date.now()
      expect(await stores.ping()).toBe(false)
      expect(Date.now() - started).toBeLessThan(2_500)
      await expect(stores.journal.set('b:x', [])).rejects.toThrow()
      await expect(stores.settings.get('x')).rejects.toThrow()
    } finally {
      await stores.close()
    }
  })

  it('ping() gives up after its timeout when the server never answers', async () => {
    // A listener that accepts and then says nothing: connecting succeeds, every command hangs.
    const net = await import('node:net')
    const sockets: import('node:net').Socket[] = []
    const server = net.createServer((s) => sockets.push(s))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as import('node:net').AddressInfo
    const stores = await createStores(`redis://127.0.0.1:${port}`, { connectTimeoutMs: 5_000 })
    try {
      const started = Date.now()
      expect(await stores.ping(500)).toBe(false)
      expect(Date.now() - started).toBeLessThan(1_500)
    } finally {
      await stores.close()
      for (const s of sockets) s.destroy()
      await new Promise((r) => server.close(r))
    }
  })

  it('rejects an unknown scheme with the schemes it knows', async () => {
    await expect(createStores('mongodb://x')).rejects.toThrow(/unsupported scheme "mongodb".*sqlite:\/\//)
  })

  it('refuses, at start, a SQLite older than its statements need (3.35: DELETE ... RETURNING)', () => {
    for (const ok of ['3.35.0', '3.44.2', '3.50.1', '4.0.0']) expect(() => requireSqlite(ok)).not.toThrow()
    for (const old of ['3.34.1', '3.31.1', '2.8.17', 'undefined']) expect(() => requireSqlite(old)).toThrow(/SQLite .* is too old; 3\.35 or later/)
  })
})
