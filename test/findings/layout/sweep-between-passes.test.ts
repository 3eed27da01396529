// A string reported again while the sweep runs (between its first pass, which picks the strings
// to trim, and the second, which finds their keys) keeps its fresh entry.
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
  key: `key.${stringId}`, pipeline: 'qa-gate', outcome: 'translated', output: 'failed', sentBack: true, findings: [], ...o,
})

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
