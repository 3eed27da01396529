// The findings log across its two layouts and during a sweep: what the issue sender remembered on
// one copy of an entry is kept; the sweep answers each entry once, as get() has it; a string
// reported again while the sweep runs keeps its fresh entry.
import { afterEach, expect, it, vi } from 'vitest'
import { FindingsLog, type FindingsEntry } from '../../../src/findings/findings-log.js'
import { createStores, type Stores } from '../../../src/store/create-stores.js'

const DAY = 86_400_000
let stores: Stores | undefined
afterEach(async () => {
  vi.useRealTimers()
  await stores?.close()
  stores = undefined
})

const entry = (stringId: number, o: Partial<FindingsEntry> = {}): Omit<FindingsEntry, 'issues'> => ({
  domain: 'acme', projectId: 7, languageId: 'de', stringId, at: new Date().toISOString(), organizationId: '1', stepId: 11,
  key: `key.${stringId}`, pipeline: 'qa-gate', outcome: 'translated', output: 'failed', sentBack: true, hash: 'h1', findings: [], ...o,
})

// Between the two layouts, what the issue sender remembered on one copy (issues, the `unsure` mark)
// is kept when the later-reported copy has none: in a rolling upgrade an instance of the earlier
// version, which cannot see the split entries, writes the string's document anew with a later
// outcome and no issues (it read none).
const ref = { domain: 'acme', projectId: 7, languageId: 'de', stringId: 5 }
const issues = [{ id: 88, hash: 'h1', status: 'unresolved' as const, at: '2026-11-01T00:00:01.000Z' }]

it('issues and the unsure mark remembered under an entry\'s own key survive a later outcome found in a document of the earlier layout', async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(new Date('2026-11-01T00:00:00Z'))
  stores = await createStores('memory://')
  const findings = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 1000, lingerMs: 0 })
  // This version: sent back, an issue raised, a later POST's answer lost (unsure).
  await findings.record(entry(5))
  await findings.update(ref, (e) => e && { ...e, issues, unsure: '2026-11-01T00:00:02.000Z#ab' })
  // An instance of the earlier version reports the string passed: it reads `s:5` (absent, the
  // string was split), so it writes a document with its entry alone, knowing no issue.
  vi.setSystemTime(new Date('2026-11-01T01:00:00Z'))
  await stores.findings.set('s:5', { entries: [entry(5, { at: new Date().toISOString(), outcome: 'approved', output: 'passed', sentBack: false, hash: undefined })] }, 30 * DAY)
  // The issue sender's pass reads get(): it must still know issue 88 (to resolve it) and the mark (to look up).
  const seen = await findings.get(ref)
  expect(seen).toMatchObject({ outcome: 'approved' })
  expect(seen?.issues).toEqual(issues)
  expect(seen?.unsure).toBe('2026-11-01T00:00:02.000Z#ab')
})

it('a new outcome written by this version over such a pair keeps the issues too', async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(new Date('2026-11-01T00:00:00Z'))
  stores = await createStores('memory://')
  const findings = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 1000, lingerMs: 0 })
  await findings.record(entry(5))
  await findings.update(ref, (e) => e && { ...e, issues })
  vi.setSystemTime(new Date('2026-11-01T01:00:00Z'))
  await stores.findings.set('s:5', { entries: [entry(5, { at: new Date().toISOString(), outcome: 'approved', output: 'passed', sentBack: false, hash: undefined })] }, 30 * DAY)
  vi.setSystemTime(new Date('2026-11-01T02:00:00Z'))
  const saved = await findings.record(entry(5, { at: new Date().toISOString(), outcome: 'translated', hash: 'h2' }))
  expect(saved.issues).toEqual(issues)
})

// With a string in both layouts, the sweep answers each entry once to the catch-up, as get() has it
// (not the superseded copy as well).
it('the sweep picks each entry once, in the version get() answers', async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(new Date('2026-11-01T00:00:00Z'))
  stores = await createStores('memory://')
  const findings = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 1000, lingerMs: 0 })
  await findings.record(entry(5))
  // An instance of the earlier version writes a later outcome of the same string and language.
  vi.setSystemTime(new Date('2026-11-01T01:00:00Z'))
  await stores.findings.set('s:5', { entries: [entry(5, { at: new Date().toISOString(), hash: 'h2' })] }, 30 * DAY)
  const ref = { domain: 'acme', projectId: 7, languageId: 'de', stringId: 5 }
  expect((await findings.get(ref))?.hash).toBe('h2')
  const { owed } = await findings.sweep(() => true)
  expect(owed.map((e) => e.hash)).toEqual(['h2'])
})

// A string reported again while the sweep runs (between its first pass, which picks the strings
// to trim, and the second, which finds their keys) keeps its fresh entry.
it('a string reported while the sweep runs is not trimmed with its fresh entry', async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  stores = await createStores('memory://')
  const findings = new FindingsLog(stores.findings, { retentionMs: 30 * DAY, maxStrings: 2, lingerMs: 0 })
  for (let id = 1; id <= 3; id++) {
    vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, id)))
    await findings.record(entry(id))
  }
  // The sweep's second read of the log starts after string 1 (the oldest when the first read
  // ended) was reported again: it is now the newest string.
  const iterate = stores.findings.iterator!.bind(stores.findings)
  let reads = 0
  stores.findings.iterator = ((...args: unknown[]) => {
    reads++
    if (reads !== 2) return (iterate as (...a: unknown[]) => AsyncGenerator)(...args)
    return (async function* () {
      vi.setSystemTime(new Date(Date.UTC(2026, 10, 1, 0, 10)))
      await findings.record(entry(1, { languageId: 'fr', outcome: 'fresh' }))
      yield* (iterate as (...a: unknown[]) => AsyncGenerator)(...args)
    })()
  }) as typeof stores.findings.iterator
  await findings.sweep()
  await findings.flush()
  // The fresh outcome (and whatever the issue sender writes on it next) is gone.
  expect((await findings.search({ stringId: 1 })).map((e) => e.outcome)).toContain('fresh')
})
