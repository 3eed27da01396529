// The findings log: the latest outcome per string and language, found by string id or key, kept
// for FINDINGS_RETENTION_DAYS and trimmed to FINDINGS_MAX strings.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createHash } from 'node:crypto'
import { entryKey, FindingsLog, SCOPE_HASHES_KEPT, type FindingsEntry } from '../../src/findings/findings-log.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createStores, type Stores } from '../../src/store/create-stores.js'

const DAY = 86_400_000
let stores: Stores | undefined
afterEach(async () => {
  vi.useRealTimers()
  await stores?.close()
  stores = undefined
})

async function log(o: { retentionMs?: number; maxStrings?: number } = {}) {
  stores = await createStores('memory://')
  return new FindingsLog(stores.findings, { retentionMs: o.retentionMs ?? 30 * DAY, maxStrings: o.maxStrings ?? 1000 })
}

const entry = (stringId: number, o: Partial<FindingsEntry> = {}): Omit<FindingsEntry, 'issues'> => ({
  domain: 'acme', projectId: 7, languageId: 'de', stringId, at: new Date().toISOString(), organizationId: '1', stepId: 11,
  key: `key.${stringId}`, pipeline: 'qa-gate', outcome: 'translated', output: 'failed', sentBack: true,
  findings: [{ check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', code: 'placeholder.missing', quote: '{name}', in: 'source' }],
  ...o,
})

describe('findings log', () => {
  it('stores each entry under the key of earlier versions: string id, then the first 24 hex digits of sha256(domain, project, language), whatever scopes came before', async () => {
    const stored = (stringId: number, domain: string, projectId: number, languageId: string) => `e:${stringId}:${createHash('sha256').update(`${domain}\n${projectId}\n${languageId}`).digest('hex').slice(0, 24)}`
    expect(entryKey({ domain: 'acme', projectId: 7, languageId: 'de', stringId: 12 })).toBe(stored(12, 'acme', 7, 'de'))
    // Past the hashes kept, and back to scopes seen before: the same keys, scopes that differ in one field apart.
    for (let p = 0; p < SCOPE_HASHES_KEPT + 10; p++) expect(entryKey({ domain: 'acme', projectId: p, languageId: 'de', stringId: 1 })).toBe(stored(1, 'acme', p, 'de'))
    expect(entryKey({ domain: 'acme', projectId: 7, languageId: 'de', stringId: 13 })).toBe(stored(13, 'acme', 7, 'de'))
    expect(entryKey({ domain: 'acme', projectId: 7, languageId: 'fr', stringId: 13 })).toBe(stored(13, 'acme', 7, 'fr'))
    expect(entryKey({ domain: 'other', projectId: 7, languageId: 'de', stringId: 13 })).toBe(stored(13, 'other', 7, 'de'))
    const findings = await log()
    await findings.record(entry(5))
    expect(await stores!.findings.get(stored(5, 'acme', 7, 'de'))).toMatchObject({ stringId: 5, languageId: 'de' })
  })

  it("makes an entry for a clean pass only when asked to record every outcome (the log's default; the findings stage asks for 'replace-only')", async () => {
    const findings = await log()
    const clean = { outcome: 'approved', output: 'passed', sentBack: false, findings: [] }
    expect(await findings.recordMany([entry(1, clean), entry(2)], { cleanPasses: 'replace-only' })).toEqual([undefined, expect.objectContaining({ stringId: 2 })])
    expect(await findings.recordMany([entry(2, clean), entry(3, clean)], { cleanPasses: 'replace-only' })).toEqual([expect.objectContaining({ stringId: 2, outcome: 'approved' }), undefined])
    expect(await findings.recordMany([entry(3, clean)])).toEqual([expect.objectContaining({ stringId: 3, outcome: 'approved' })])
    expect((await Promise.all([1, 2, 3].map((stringId) => findings.search({ stringId })))).map((e) => e.map((x) => x.outcome))).toEqual([[], ['approved'], ['approved']])
  })

  it('keeps the latest outcome per string and language, and finds it by string id or key', async () => {
    const findings = await log()
    await findings.record(entry(1))
    await findings.record(entry(1, { languageId: 'fr' }))
    await findings.record(entry(1, { outcome: 'approved', output: 'passed', sentBack: false, findings: [] }))
    await findings.record(entry(2, { key: 'shared.key' }))
    await findings.record(entry(3, { key: 'shared.key', projectId: 8 }))
    const one = await findings.search({ stringId: 1 })
    expect(one.map((e) => [e.languageId, e.outcome])).toEqual([['de', 'approved'], ['fr', 'translated']])
    expect(await findings.search({ stringId: 1, languageId: 'fr' })).toHaveLength(1)
    expect((await findings.search({ key: 'shared.key' })).map((e) => e.stringId).sort()).toEqual([2, 3])
    expect(await findings.search({ key: 'shared.key', stringId: 1 })).toEqual([])
    expect(await findings.search({ key: 'no.such.key' })).toEqual([])
    expect(await findings.search({ stringId: 404 })).toEqual([])
  })

  it('a new outcome keeps the issues remembered for the string', async () => {
    const findings = await log()
    await findings.record(entry(1))
    await findings.update(entry(1), (e) => e && { ...e, issues: [{ id: 5, hash: 'h', status: 'unresolved', at: 'now' }] })
    await findings.record(entry(1, { outcome: 'approved', sentBack: false }))
    expect((await findings.get(entry(1)))?.issues).toEqual([{ id: 5, hash: 'h', status: 'unresolved', at: 'now' }])
  })

  it('forgets a string after the retention period', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-11-01T00:00:00Z'))
    const findings = await log({ retentionMs: 2 * DAY })
    await findings.record(entry(1))
    vi.setSystemTime(new Date('2026-11-02T12:00:00Z'))
    expect(await findings.search({ stringId: 1 })).toHaveLength(1)
    await findings.record(entry(2))
    vi.setSystemTime(new Date('2026-11-03T06:00:00Z'))
    expect(await findings.search({ stringId: 1 })).toEqual([])
    expect(await findings.search({ key: 'key.2' })).toHaveLength(1)
    // The sweep drops what expired from the store itself, not only from answers.
    await findings.sweep()
    const keys: string[] = []
    for await (const [k] of stores!.findings.iterator!(undefined) as AsyncIterable<[string, unknown]>) keys.push(String(k))
    // One entry left, string 2's (string 1's expired one is gone from the store).
    expect(keys.filter((k) => /(^|:)e:\d+:/.test(k))).toEqual([expect.stringMatching(/e:2:/)])
  })

  it('sweep trims to the most recent FINDINGS_MAX strings', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const findings = await log({ maxStrings: 3 })
    for (let id = 1; id <= 5; id++) {
      vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, id)))
      await findings.record(entry(id))
    }
    expect(await findings.sweep()).toEqual({ strings: 3, removed: 2, owed: [] })
    for (const id of [1, 2]) expect(await findings.search({ stringId: id })).toEqual([])
    for (const id of [3, 4, 5]) expect(await findings.search({ stringId: id })).toHaveLength(1)
  })

  it('sweep answers the entries its filter picks (the issues\' catch-up), at most maxOwed, goes on past one that throws, and none of a string it removed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const findings = await log({ maxStrings: 2 })
    for (let id = 1; id <= 3; id++) {
      vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, id)))
      await findings.record(entry(id))
      await findings.record(entry(id, { languageId: 'fr' }))
    }
    const seen: string[] = []
    const r = await findings.sweep((e) => {
      seen.push(`${e.stringId}/${e.languageId}`)
      if (e.stringId === 2 && e.languageId === 'fr') throw new Error('not this one')
      return true
    })
    expect(seen.sort()).toEqual(['1/de', '1/fr', '2/de', '2/fr', '3/de', '3/fr'])
    // String 1, the oldest, was removed: none of its entries is answered.
    expect(r.owed.map((e) => `${e.stringId}/${e.languageId}`).sort()).toEqual(['2/de', '3/de', '3/fr'])
    expect(r).toMatchObject({ strings: 2, removed: 1 })
    expect((await findings.sweep(() => true, 1)).owed).toHaveLength(1)
  })

  it.each(['memory', 'sqlite'])('sweep trims by time, ties and documents without a time included (%s)', async (kind) => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const dir = mkdtempSync(path.join(tmpdir(), 'findings-sweep-'))
    stores = await createStores(kind === 'sqlite' ? `sqlite://${path.join(dir, 's.sqlite')}` : 'memory://')
    const findings = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 4 })
    // Strings 1-3 at the same minute, 4-6 later; 7 has no time (the oldest).
    for (let id = 1; id <= 6; id++) {
      vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, id <= 3 ? 1 : id)))
      await findings.record(entry(id))
    }
    await stores.findings.set('s:7', { entries: [] }, 30 * DAY)
    expect(await findings.sweep()).toMatchObject({ strings: 4, removed: 3 })
    const left = []
    for (let id = 1; id <= 7; id++) if ((await findings.search({ stringId: id })).length) left.push(id)
    // 7 went first, then two of the three tied: one of them is left, with 4, 5 and 6.
    expect(left.filter((id) => id >= 4)).toEqual([4, 5, 6])
    expect(left.filter((id) => id <= 3)).toHaveLength(1)
    expect(await stores.findings.get('s:7')).toBeUndefined()
    rmSync(dir, { recursive: true, force: true })
  })

  it('sweep removes every entry of the strings it trims, in chunks, on SQLite', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'findings-trim-'))
    stores = await createStores(`sqlite://${path.join(dir, 's.sqlite')}`)
    const deletes: number[] = []
    const del = stores.findings.delete.bind(stores.findings)
    vi.spyOn(stores.findings, 'delete').mockImplementation((keys) => (deletes.push(Array.isArray(keys) ? keys.length : 1), del(keys)))
    const findings = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 10, setMany: (e, t) => stores!.setMany('findings', e, t), scan: (p) => stores!.scan!('findings', p) })
    const languages = ['de', 'fr', 'it', 'es', 'pt']
    for (let id = 1; id <= 150; id++) await findings.recordMany(languages.map((languageId) => entry(id, { languageId, at: new Date(Date.UTC(2026, 10, 1, 0, 0, id)).toISOString() })))
    expect(await findings.sweep()).toMatchObject({ strings: 10, removed: 140 })
    // 700 entries in chunks of at most 500.
    expect(deletes.reduce((a, b) => a + b, 0)).toBe(700)
    expect(Math.max(...deletes)).toBeLessThanOrEqual(500)
    const keys: string[] = []
    for await (const [k] of stores.findings.iterator!(undefined) as AsyncIterable<[string, unknown]>) if (/(^|:)e:/.test(String(k))) keys.push(String(k))
    expect(keys).toHaveLength(50)
    expect((await findings.search({ stringId: 141 })).length).toBe(5)
    expect(await findings.search({ stringId: 140 })).toEqual([])
    expect(await findings.sweep()).toMatchObject({ strings: 10, removed: 0 })
    rmSync(dir, { recursive: true, force: true })
  })

  it('sweep judges a string by its newest entry, not the one an issue update moved to the front', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const findings = await log({ maxStrings: 1 })
    vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, 1)))
    await findings.record(entry(1))
    vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, 2)))
    await findings.record(entry(2))
    vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, 3)))
    await findings.record(entry(1, { languageId: 'fr' }))
    // The older German entry of string 1 is updated (an issue remembered): it moves to the front.
    await findings.update({ domain: 'acme', projectId: 7, languageId: 'de', stringId: 1 }, (e) => e && { ...e, issues: [] })
    expect(await findings.sweep()).toMatchObject({ strings: 1, removed: 1 })
    expect(await findings.search({ stringId: 1 })).toHaveLength(2)
    expect(await findings.search({ stringId: 2 })).toEqual([])
  })

  it('an outcome reads and writes its own entry only, however many languages its string has', async () => {
    stores = await createStores('memory://')
    const writes: string[][] = []
    const findings = new FindingsLog(stores.findings, {
      retentionMs: 30 * DAY,
      maxStrings: 1000,
      setMany: async (entries, ttlMs) => {
        writes.push(entries.map((e) => e.key))
        for (const e of entries) await stores!.findings.set(e.key, e.value, ttlMs)
      },
    })
    const languages = Array.from({ length: 30 }, (_, i) => `l${i}`)
    await findings.recordMany(languages.map((languageId) => entry(1, { languageId, sentBack: false })))
    writes.length = 0
    const read = vi.spyOn(stores.findings, 'get')
    const saved = await findings.record(entry(1, { languageId: 'l7', outcome: 'approved' }))
    expect(saved).toMatchObject({ languageId: 'l7', outcome: 'approved' })
    // One key written, holding one entry; what was read holds no other language's entry.
    expect(writes).toEqual([[expect.stringMatching(/^e:1:/)]])
    expect(await stores.findings.get(writes[0]![0]!)).toMatchObject({ languageId: 'l7', outcome: 'approved' })
    const answers = await Promise.all(read.mock.results.map((r) => r.value))
    expect(JSON.stringify(answers)).not.toMatch(/"l(?!7")\d+"/)
    expect((await findings.search({ stringId: 1 })).map((e) => e.languageId).sort()).toEqual([...languages].sort())
  })

  it('reads a log of the earlier layout (one document per string), and splits a string\'s document when one of its entries is written', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-11-01T00:00:00Z'))
    const findings = await log()
    const issues = [{ id: 9, hash: 'h', status: 'unresolved' as const, at: '2026-10-31T00:00:00.000Z' }]
    const de = { ...entry(5, { at: '2026-10-31T00:00:00.000Z' }), issues }
    const fr = entry(5, { languageId: 'fr', at: '2026-10-30T00:00:00.000Z' })
    await stores!.findings.set('s:5', { entries: [de, fr] })
    expect((await findings.search({ stringId: 5 })).map((e) => e.languageId)).toEqual(['de', 'fr'])
    expect(await findings.get({ domain: 'acme', projectId: 7, languageId: 'fr', stringId: 5 })).toEqual(fr)
    expect(await findings.sweep()).toMatchObject({ strings: 1, removed: 0 })
    // A new outcome in German keeps what the issue sender remembered in the old document.
    const saved = await findings.record(entry(5, { outcome: 'approved', output: 'passed', sentBack: false }))
    expect(saved).toMatchObject({ outcome: 'approved', issues })
    expect(await stores!.findings.get('s:5')).toBeUndefined()
    expect((await findings.search({ stringId: 5 })).map((e) => [e.languageId, e.outcome])).toEqual([['de', 'approved'], ['fr', 'translated']])
    const keys: string[] = []
    for await (const [k] of stores!.findings.iterator!(undefined) as AsyncIterable<[string, unknown]>) keys.push(String(k))
    expect(keys.filter((k) => /(^|:)e:5:/.test(k))).toHaveLength(2)
    expect(await findings.sweep()).toMatchObject({ strings: 1, removed: 0 })
  })

  it('between the two layouts, the entry reported later counts', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-11-01T00:00:00Z'))
    const findings = await log()
    const ref = (stringId: number, languageId = 'de') => ({ domain: 'acme', projectId: 7, languageId, stringId })
    // String 6: its own key older than the document (an instance of an earlier version wrote it
    // afterwards); string 7: the other way round.
    await findings.record(entry(6, { outcome: 'under-own-key' }))
    await findings.record(entry(7, { outcome: 'under-own-key' }))
    await stores!.findings.set('s:6', { entries: [entry(6, { outcome: 'in-document', at: '2026-11-02T00:00:00.000Z' })] })
    await stores!.findings.set('s:7', { entries: [entry(7, { outcome: 'in-document', at: '2026-10-01T00:00:00.000Z' })] })
    expect((await findings.get(ref(6)))?.outcome).toBe('in-document')
    expect((await findings.get(ref(7)))?.outcome).toBe('under-own-key')
    expect((await findings.search({ stringId: 6 })).map((e) => e.outcome)).toEqual(['in-document'])
    expect((await findings.search({ stringId: 7 })).map((e) => e.outcome)).toEqual(['under-own-key'])
    // Another language written splits each document: the German entry kept is the later one.
    await findings.recordMany([entry(6, { languageId: 'fr' }), entry(7, { languageId: 'fr' })])
    expect(await stores!.findings.get('s:6')).toBeUndefined()
    expect(await stores!.findings.get('s:7')).toBeUndefined()
    expect((await findings.get(ref(6)))?.outcome).toBe('in-document')
    expect((await findings.get(ref(7)))?.outcome).toBe('under-own-key')
    // The update of the issue sender sees the same entry.
    const seen: Array<string | undefined> = []
    await stores!.findings.set('s:8', { entries: [entry(8, { outcome: 'only-in-document' })] })
    await findings.update(ref(8), (e) => (seen.push(e?.outcome), e && { ...e, issues: [] }))
    expect(seen).toEqual(['only-in-document'])
    expect(await findings.get(ref(8))).toMatchObject({ outcome: 'only-in-document', issues: [] })
    expect(await stores!.findings.get('s:8')).toBeUndefined()
  })

  it('answers the reads of one turn with one read of the store, each its own entry, and a failed read fails each of them', async () => {
    const findings = await log()
    const ref = (stringId: number, languageId = 'de') => ({ domain: 'acme', projectId: 7, languageId, stringId })
    await findings.recordMany([entry(1), entry(1, { languageId: 'fr', outcome: 'approved' }), entry(2, { outcome: 'two' })])
    await stores!.findings.set('s:3', { entries: [entry(3, { outcome: 'in-document' })] })
    const read = vi.spyOn(stores!.findings, 'get')
    const got = await Promise.all([findings.get(ref(1)), findings.get(ref(1, 'fr')), findings.get(ref(2)), findings.get(ref(3)), findings.get(ref(4)), findings.get(ref(1))])
    expect(got.map((e) => e && [e.stringId, e.languageId, e.outcome])).toEqual([[1, 'de', 'translated'], [1, 'fr', 'approved'], [2, 'de', 'two'], [3, 'de', 'in-document'], undefined, [1, 'de', 'translated']])
    // One read, each key once.
    expect(read).toHaveBeenCalledTimes(1)
    const keys = read.mock.calls[0]![0] as unknown as string[]
    expect(keys).toHaveLength(new Set(keys).size)
    expect(keys).toHaveLength(5 + 4)
    // A read after a write sees it.
    await findings.record(entry(4, { outcome: 'four' }))
    expect((await findings.get(ref(4)))?.outcome).toBe('four')
    // More than one read's worth: several reads, every answer right.
    read.mockClear()
    const many = await Promise.all(Array.from({ length: 600 }, (_, i) => findings.get(ref(1 + (i % 4)))))
    expect(read).toHaveBeenCalledTimes(3)
    expect(many.map((e) => e?.stringId)).toEqual(Array.from({ length: 600 }, (_, i) => 1 + (i % 4)))
    read.mockRejectedValueOnce(new Error('store down'))
    const failed = await Promise.allSettled([findings.get(ref(1)), findings.get(ref(2))])
    expect(failed.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual(['store down', 'store down'])
    expect((await findings.get(ref(2)))?.outcome).toBe('two')
  })

  it('writes of one string in parallel lose nothing', async () => {
    const findings = await log()
    await Promise.all(['de', 'fr', 'it', 'es', 'pt'].map((languageId) => findings.record(entry(1, { languageId }))))
    expect(await findings.search({ stringId: 1 })).toHaveLength(5)
  })
})

describe('findings log on SQLite', () => {
  it('writes many outcomes together, in one statement, and reads them back', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const os = await import('node:os')
    const path = await import('node:path')
    const { findingsLogFor } = await import('../../src/worker.js')
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-findings-'))
    const sqlite = await createStores(`sqlite://${path.join(dir, 's.sqlite')}`)
    try {
      const findings = findingsLogFor({ findingsRetentionDays: 1, findingsMax: 10_000 }, sqlite)
      const started = performance.now()
      await Promise.all(Array.from({ length: 2000 }, (_, i) => findings.record(entry(i >> 1, { languageId: i % 2 ? 'de' : 'fr' }))))
      // One commit per batch of 500, not two per string (~4 ms each on a disk).
      expect(performance.now() - started).toBeLessThan(4000)
      expect((await findings.search({ stringId: 999 })).map((e) => e.languageId).sort()).toEqual(['de', 'fr'])
      // A string's entries are found by a range of keys: those of 1, 12 and 123 do not mix.
      const scan = vi.spyOn(sqlite, 'scan')
      for (const id of [1, 12, 123]) expect((await findings.search({ stringId: id })).map((e) => `${e.stringId}/${e.languageId}`).sort()).toEqual([`${id}/de`, `${id}/fr`])
      expect(scan).toHaveBeenCalledWith('findings', ['e:12:'], undefined)
      expect(await findings.search({ key: 'key.500' })).toHaveLength(2)
      // Written as Keyv writes them: read back through Keyv, with the time to live honoured.
      await sqlite.setMany('findings', [{ key: 'probe', value: { a: 1 } }, { key: 'gone', value: 2 }], 60_000)
      expect(await sqlite.findings.get('probe')).toEqual({ a: 1 })
      await sqlite.setMany('findings', [{ key: 'gone', value: 3 }], 1)
      await new Promise((r) => setTimeout(r, 5))
      expect(await sqlite.findings.get('gone')).toBeUndefined()
      await findings.record(entry(5000))
      expect(await findings.search({ stringId: 5000 })).toHaveLength(1)
    } finally {
      await sqlite.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
