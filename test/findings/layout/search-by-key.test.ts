// A search by key, now that no index document per key is written: on every back end, the entries
// of exactly that key (keys JSON escapes, keys that begin another, keys with no plain text), in
// both layouts; where the store can scan, the database passes over the other entries (the filter
// sees only rows holding the key's text) a page at a time. The sweep deletes the index documents
// earlier versions wrote.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FindingsLog, textOfKeyAsStored, type FindingsEntry } from '../../../src/findings/findings-log.js'
import { createStores, SCAN_PAGE_ROWS, STORE_NAMES, type ScanFilter, type Stores } from '../../../src/store/create-stores.js'
import { describeWithService } from '../../support/services.js'

const DAY = 86_400_000
const entry = (stringId: number, key: string, o: Partial<FindingsEntry> = {}): Omit<FindingsEntry, 'issues'> => ({
  domain: 'acme', projectId: 7, languageId: 'de', stringId, at: new Date().toISOString(), organizationId: '1', stepId: 11,
  key, pipeline: 'qa-gate', outcome: 'translated', output: 'failed', sentBack: true, findings: [], ...o,
})
const dir = mkdtempSync(path.join(tmpdir(), 'findings-by-key-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ODD_KEYS = ['say "hi"\\now', 'ключ.заголовок', 'line\u2028sep', ':colon.first', 'emoji.😀.x', 'tab\tkey', '"', 'a/b<c>&d']

function suite(open: () => Promise<Stores>) {
  let stores: Stores
  afterAll(async () => {
    if (stores) for (const name of STORE_NAMES) await stores[name].clear()
    await stores?.close()
  })
  it('finds every entry of the key and none of another, both layouts, more than a page of them', async () => {
    stores = await open()
    let kept = 0
    const findings = new FindingsLog(stores.findings, {
      retentionMs: 30 * DAY, maxStrings: 10_000, lingerMs: 0,
      setMany: (e, t) => stores.setMany('findings', e, t),
      ...(stores.scan ? { scan: (p: string[], f?: ScanFilter) => stores.scan!('findings', p, f && { ...f, keep: (k, v) => (kept++, f.keep(k, v)) }) } : {}),
    })
    // 'key.1' begins 'key.12' and 'key.1x'; quoted inside another entry's findings too.
    await findings.recordMany([entry(1, 'key.1'), entry(1, 'key.1', { languageId: 'fr' }), entry(12, 'key.12'), entry(13, 'key.1x'), entry(14, 'other', { findings: [{ check: 'c', severity: 'error', message: 'about key.1', quote: '"key":"key.1"' }] })])
    await findings.recordMany(ODD_KEYS.map((key, i) => entry(100 + i, key)))
    // Unrelated entries, for the filter to pass over.
    await findings.recordMany(Array.from({ length: 300 }, (_, i) => entry(1000 + i, `unrelated.${i}`)))
    // More than a page of one key, each reported a second after the one before.
    const many = SCAN_PAGE_ROWS + 40
    const second = (i: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + i * 1000).toISOString()
    await findings.recordMany(Array.from({ length: many }, (_, i) => entry(5000 + i, 'common.title', { at: second(i), languageId: i % 2 ? 'de' : 'fr' })))
    // No index document per key is written any more: entries alone.
    const stored: string[] = []
    for await (const [k] of stores.findings.iterator!(undefined) as AsyncIterable<[string]>) stored.push(String(k).replace(/^.*?findings:/, ''))
    expect(stored.length).toBeGreaterThan(many)
    expect(stored.filter((k) => !k.startsWith('e:'))).toEqual([])

    kept = 0
    expect((await findings.search({ key: 'key.1' })).map((e) => `${e.stringId}/${e.languageId}`).sort()).toEqual(['1/de', '1/fr'])
    // The database left out what does not hold "key.1": the filter saw the five rows that do.
    if (stores.scan) expect(kept).toBe(5)
    expect((await findings.search({ key: 'key.1', languageId: 'fr' })).map((e) => e.stringId)).toEqual([1])
    expect((await findings.search({ key: 'key.1', stringId: 12 }))).toEqual([])
    expect((await findings.search({ key: 'key.12', stringId: 12 })).map((e) => e.stringId)).toEqual([12])
    for (const [i, key] of ODD_KEYS.entries()) expect((await findings.search({ key })).map((e) => e.stringId), key).toEqual([100 + i])
    expect(await findings.search({ key: 'no.such.key' })).toEqual([])
    expect(await findings.search({ key: 'common.title', limit: 10_000 })).toHaveLength(many)
    expect(await findings.search({ key: 'common.title' })).toHaveLength(200)
    // The newest first, in the language asked for, however many the key has.
    expect((await findings.search({ key: 'common.title', limit: 3 })).map((e) => e.stringId)).toEqual([5000 + many - 1, 5000 + many - 2, 5000 + many - 3])
    expect((await findings.search({ key: 'common.title', languageId: 'fr', limit: 2 })).map((e) => e.stringId)).toEqual([5000 + many - 2, 5000 + many - 4])

    // The earlier layout: an entry only in a string's document, and one in both (the newer counts).
    const t = (m: number) => new Date(Date.now() + m * 60_000).toISOString()
    await stores.findings.set('s:7', { entries: [entry(7, 'doc.key', { outcome: 'in-doc' })] }, 30 * DAY)
    await stores.findings.set('s:12', { entries: [entry(12, 'key.12', { outcome: 'doc-newer', at: t(5) }), entry(12, 'key.12', { languageId: 'it', outcome: 'doc-it' })] }, 30 * DAY)
    expect((await findings.search({ key: 'doc.key' })).map((e) => e.outcome)).toEqual(['in-doc'])
    expect((await findings.search({ key: 'key.12' })).map((e) => `${e.languageId}/${e.outcome}`).sort()).toEqual(['de/doc-newer', 'it/doc-it'])
    // A string whose own entry carries another key now: its document's older entry does not count.
    await stores.findings.set('s:1', { entries: [entry(1, 'renamed.key', { outcome: 'old-name', at: t(-5) })] }, 30 * DAY)
    expect(await findings.search({ key: 'renamed.key' })).toEqual([])
    // The other way round: the document's entry is newer and names another key; the own entry, of
    // the key searched, is out of date (get() answers the document's), and so is not answered.
    await findings.record(entry(20, 'before.rename', { at: t(-10) }))
    await stores.findings.set('s:20', { entries: [entry(20, 'after.rename', { outcome: 'renamed', at: t(1), issues: [{ id: 88, hash: 'h', status: 'unresolved', at: t(1) }] } as Partial<FindingsEntry>)] }, 30 * DAY)
    expect((await findings.get({ domain: 'acme', projectId: 7, languageId: 'de', stringId: 20 }))?.key).toBe('after.rename')
    expect(await findings.search({ key: 'before.rename' })).toEqual([])
    expect((await findings.search({ key: 'after.rename' })).map((e) => [e.outcome, e.issues?.[0]?.id])).toEqual([['renamed', 88]])
    // The same string and key in both layouts, the document's entry newer: it is the one answered.
    await findings.record(entry(21, 'both.layouts', { at: t(-10) }))
    await stores.findings.set('s:21', { entries: [entry(21, 'both.layouts', { outcome: 'doc', at: t(1) }), entry(21, 'other', { languageId: 'fr' })] }, 30 * DAY)
    expect((await findings.search({ key: 'both.layouts' })).map((e) => e.outcome)).toEqual(['doc'])
    // Entries within the limit that documents replace (a newer entry there under another key):
    // the next ones of the key are answered in their place.
    for (let i = 1; i <= 5; i++) await findings.record(entry(30 + i, 'K.r', { at: t(-60 + i) }))
    for (const id of [34, 35]) await stores.findings.set(`s:${id}`, { entries: [entry(id, 'K2.r', { at: t(2) })] }, 30 * DAY)
    expect((await findings.search({ key: 'K.r', limit: 2 })).map((e) => e.stringId)).toEqual([33, 32])
    expect((await findings.search({ key: 'K2.r' })).map((e) => e.stringId).sort()).toEqual([34, 35])
    if (stores.scan) {
      // A scan that ignores the filter, and names every row twice: the same answers.
      const loose = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 10_000, scan: async (p: string[]) => { const rows = await stores.scan!('findings', p); return [...rows, ...rows] } })
      expect((await loose.search({ key: 'K.r', limit: 2 })).map((e) => e.stringId)).toEqual([33, 32])
      expect((await loose.search({ key: 'common.title', limit: 3 })).map((e) => e.stringId)).toEqual([5000 + many - 1, 5000 + many - 2, 5000 + many - 3])
      expect((await loose.search({ key: 'key.1' })).map((e) => `${e.stringId}/${e.languageId}`).sort()).toEqual(['1/de', '1/fr'])
    }
  })

  it('the sweep deletes the index documents of earlier versions, more than a write of them, and nothing else', async () => {
    const findings = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 10_000, lingerMs: 0, setMany: (e, t) => stores.setMany('findings', e, t) })
    const all = async () => {
      const keys: string[] = []
      for await (const [k] of stores.findings.iterator!(undefined) as AsyncIterable<[string]>) keys.push(String(k).replace(/^.*?findings:/, ''))
      return keys.sort()
    }
    const before = await all()
    expect(before.length).toBeGreaterThan(SCAN_PAGE_ROWS)
    const strings = (await findings.sweep()).strings
    // Index documents as earlier versions wrote them, amid the entries (k: sorts between e: and s:).
    await stores.setMany('findings', Array.from({ length: 1_050 }, (_, i) => ({ key: `k:${String(i).padStart(32, '0')}`, value: { key: `old.${i}`, ids: [i] } })), 30 * DAY)
    expect(await stores.findings.get(`k:${'0'.repeat(32)}`)).toEqual({ key: 'old.0', ids: [0] })
    const del = stores.findings.delete.bind(stores.findings)
    const deletes: number[] = []
    stores.findings.delete = ((keys: string | string[]) => (deletes.push([keys].flat().length), del(keys as string[]))) as typeof stores.findings.delete
    expect((await findings.sweep()).strings).toBe(strings)
    expect(await all()).toEqual(before)
    // Deleted as the pass met them, at most 500 at a time.
    expect(deletes.reduce((a, b) => a + b, 0)).toBe(1_050)
    expect(Math.max(...deletes)).toBeLessThanOrEqual(500)
    expect((await findings.search({ key: 'key.1' })).length).toBe(2)
  })
}

describe('textOfKeyAsStored', () => {
  it('is the longest run of characters no JSON writer escapes', () => {
    expect(textOfKeyAsStored('welcome.title')).toBe('welcome.title')
    expect(textOfKeyAsStored('say "hi"\\now')).toBe('say ')
    expect(textOfKeyAsStored('ключ.заголовок')).toBe('.')
    expect(textOfKeyAsStored('"')).toBe('')
    expect(textOfKeyAsStored('tab\tkey.long')).toBe('key.long')
    expect(textOfKeyAsStored('a/b<c>&d')).toBe('a/b<c>&d')
  })
})

describe('sqlite', () => suite(() => createStores(`sqlite://${path.join(dir, 'k.sqlite')}`, { prefix: `k1_${randomBytes(3).toString('hex')}-` })))
describe('memory', () => suite(() => createStores('memory://')))
await describeWithService('redis', 'redis', (url) => suite(() => createStores(url, { prefix: `k1_${randomBytes(3).toString('hex')}-` })))
await describeWithService('postgres', 'postgres', (url) => suite(() => createStores(url, { prefix: `k1_${randomBytes(3).toString('hex')}-` })))
