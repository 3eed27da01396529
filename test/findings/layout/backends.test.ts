// The findings log on every back end: a string's entries by id (1, 12, 123 apart), get(), both
// layouts and a mix, the split, the sweep's count, expired entries left out, prefixes with '_' and
// '-', PostgreSQL with a non-C collation.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
const { Client } = pg as unknown as { Client: new (o: { connectionString: string }) => { connect(): Promise<void>; query(sql: string): Promise<unknown>; end(): Promise<void> } }
import { afterAll, describe, expect, it } from 'vitest'
import { FindingsLog, type FindingsEntry } from '../../../src/findings/findings-log.js'
import { createStores, STORE_NAMES, type Stores } from '../../../src/store/create-stores.js'
import { describeWithService } from '../../support/services.js'

const DAY = 86_400_000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const entry = (stringId: number, o: Partial<FindingsEntry> = {}): Omit<FindingsEntry, 'issues'> => ({
  domain: 'acme', projectId: 7, languageId: 'de', stringId, at: new Date().toISOString(), organizationId: '1', stepId: 11,
  key: `key.${stringId}`, pipeline: 'qa-gate', outcome: 'translated', output: 'failed', sentBack: true, findings: [], ...o,
})
const dir = mkdtempSync(path.join(tmpdir(), 'findings-backends-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function suite(open: () => Promise<Stores>) {
  let stores: Stores
  afterAll(async () => {
    if (stores) for (const name of STORE_NAMES) await stores[name].clear()
    await stores?.close()
  })
  it('ids apart, both layouts, split, sweep, expiry', async () => {
    stores = await open()
    const findings = new FindingsLog(stores.findings, {
      retentionMs: 30 * DAY, maxStrings: 1000, lingerMs: 0,
      setMany: (e, t) => stores.setMany('findings', e, t),
      ...(stores.scan ? { scan: (p: string[]) => stores.scan!('findings', p) } : {}),
    })
    for (const id of [1, 12, 123, 1234]) await findings.recordMany(['de', 'fr'].map((languageId) => entry(id, { languageId })))
    for (const id of [1, 12, 123]) expect((await findings.search({ stringId: id })).map((e) => `${e.stringId}/${e.languageId}`).sort()).toEqual([`${id}/de`, `${id}/fr`])
    // Earlier layout, and a mix (string 12 also has a document, with a newer German entry and an Italian one).
    const t = (m: number) => new Date(Date.now() + m * 60_000).toISOString()
    await stores.findings.set('s:12', { entries: [entry(12, { outcome: 'doc-de', at: t(5) }), entry(12, { languageId: 'it', at: t(-5) })] }, 30 * DAY)
    await stores.findings.set('s:7', { entries: [entry(7, { at: t(-5), issues: [{ id: 1, hash: 'h', status: 'unresolved', at: t(-5) }] } as Partial<FindingsEntry>)] }, 30 * DAY)
    expect((await findings.search({ stringId: 12 })).map((e) => `${e.languageId}/${e.outcome}`).sort()).toEqual(['de/doc-de', 'fr/translated', 'it/translated'])
    expect((await findings.get({ domain: 'acme', projectId: 7, languageId: 'de', stringId: 12 }))?.outcome).toBe('doc-de')
    expect((await findings.sweep()).strings).toBe(5)
    // The split: the document goes, its entries keep theirs, issues carried by a new outcome.
    await findings.record(entry(12, { languageId: 'fr', outcome: 'new-fr' }))
    const saved = await findings.record(entry(7, { outcome: 'new-7' }))
    expect(saved.issues).toHaveLength(1)
    expect(await stores.findings.get('s:12')).toBeUndefined()
    expect(await stores.findings.get('s:7')).toBeUndefined()
    expect((await findings.search({ stringId: 12 })).map((e) => `${e.languageId}/${e.outcome}`).sort()).toEqual(['de/doc-de', 'fr/new-fr', 'it/translated'])
    expect((await findings.search({ key: 'key.12' })).length).toBe(3)
    // Expired entries are not answered.
    await stores.findings.set('e:1:zzzzzzzzzzzzzzzzzzzzzzzz', entry(1, { languageId: 'xx' }), 1)
    await sleep(20)
    expect((await findings.search({ stringId: 1 })).map((e) => e.languageId).sort()).toEqual(['de', 'fr'])
    expect((await findings.sweep()).strings).toBe(5)
  })
}

describe('sqlite, prefix with _ and -', () => suite(() => createStores(`sqlite://${path.join(dir, 'c.sqlite')}`, { prefix: `r1_${randomBytes(3).toString('hex')}-` })))
describe('memory', () => suite(() => createStores('memory://')))
await describeWithService('redis', 'redis', (url) => suite(() => createStores(url, { prefix: `r1_${randomBytes(3).toString('hex')}-` })))
await describeWithService('postgres', 'postgres, prefix with _', (url) => suite(() => createStores(url, { prefix: `r1_${randomBytes(3).toString('hex')}-` })))
await describeWithService('postgres', 'postgres, a table in an ICU collation', (url) => {
  const table = `r1coll${randomBytes(3).toString('hex')}`
  const client = new Client({ connectionString: url })
  afterAll(async () => {
    await client.query(`DROP TABLE IF EXISTS public.${table}`)
    await client.end()
  })
  suite(async () => {
    await client.connect()
    await client.query(`CREATE TABLE public.${table}(key VARCHAR(255) COLLATE "en-US-x-icu" PRIMARY KEY, value TEXT)`)
    return createStores(`${url}?table=${table}`, { prefix: 'r1-' })
  })
})
