// Between the two layouts, what the issue sender remembered on one copy (issues, the `unsure` mark)
// is kept when the later-reported copy has none: in a rolling upgrade an instance of the earlier
// version, which cannot see the split entries, writes the string's document anew with a later
// outcome and no issues (it read none).
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
