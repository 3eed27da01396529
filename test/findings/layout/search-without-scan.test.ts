// On Redis (no `scan`), a search by key reads the findings namespace once, whatever the number of
// string ids the key names.
import { randomBytes } from 'node:crypto'
import { afterAll, expect, it } from 'vitest'
import { FindingsLog, type FindingsEntry } from '../../../src/findings/findings-log.js'
import { createStores, STORE_NAMES, type Stores } from '../../../src/store/create-stores.js'
import { describeWithService } from '../../support/services.js'

const DAY = 86_400_000
const entry = (stringId: number, o: Partial<FindingsEntry> = {}): Omit<FindingsEntry, 'issues'> => ({
  domain: 'acme', projectId: 7, languageId: 'de', stringId, at: new Date().toISOString(), organizationId: '1', stepId: 11,
  key: 'shared.key', pipeline: 'qa-gate', outcome: 'translated', output: 'failed', sentBack: true, findings: [], ...o,
})

await describeWithService('redis', 'findings search by key on Redis', (url) => {
  let stores: Stores
  afterAll(async () => {
    if (stores) for (const name of STORE_NAMES) await stores[name].clear()
    await stores?.close()
  })
  it('reads the namespace at most once for one search, whatever the number of string ids the key names', async () => {
    stores = await createStores(url, { prefix: `r1${randomBytes(4).toString('hex')}-` })
    expect(stores.scan).toBeUndefined()
    const findings = new FindingsLog(stores.findings, { retentionMs: DAY, maxStrings: 1000, lingerMs: 0, setMany: (e, t) => stores.setMany('findings', e, t) })
    await findings.recordMany(Array.from({ length: 20 }, (_, i) => entry(i + 1)))
    // Unrelated strings: what each full read goes through.
    await findings.recordMany(Array.from({ length: 300 }, (_, i) => entry(1000 + i, { key: `other.${i}` })))
    const iterate = stores.findings.iterator!.bind(stores.findings)
    let reads = 0
    stores.findings.iterator = ((...args: unknown[]) => (reads++, (iterate as (...a: unknown[]) => AsyncGenerator)(...args))) as typeof stores.findings.iterator
    expect(await findings.search({ key: 'shared.key' })).toHaveLength(20)
    expect(reads).toBeLessThanOrEqual(1)
  })
})
