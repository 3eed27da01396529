// With a string in both layouts, the sweep answers each entry once to the catch-up, as get() has it
// (not the superseded copy as well).
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
