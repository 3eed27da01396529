// A restart whose store fails while the journal is being replayed (the database not up yet, a
// connection cut): the replay is tried again until it goes through, so what the last run left is
// worked on, once, and nothing waits on disk until the next restart. A stop does not wait for a
// replay that keeps failing.
import { afterEach, describe, expect, it } from 'vitest'
import Keyv from 'keyv'
import type { Job } from '../../src/protocol/job.js'
import { Backlog } from '../../src/queue/backlog.js'
import { Dedupe } from '../../src/queue/dedupe.js'
import { Journal } from '../../src/queue/journal.js'
import { WorkQueue } from '../../src/queue/work-queue.js'
import { silentLogger } from '../../src/util/logger.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { createStores, type Stores } from '../../src/store/create-stores.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { tempDir } from '../durability/harness.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const A = { domain: 'a.example', orgId: 'A' }
const B = { domain: 'b.example', orgId: 'B' }
const batch = (from: number, n: number, organizationId: string) =>
  JSON.stringify({ events: Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: from + i, organizationId, stepId: 11 })) })
const reportedIds = (service: ReturnType<typeof fakeServiceFetch>, domain: string) =>
  service.patches.filter((p) => p.url.includes(domain)).flatMap((p) => p.ops.map((o) => `${p.languageId}|${o.path}`))

/** The journal's iterator fails after `after` rows on its first `times` scans, as a store whose connection is cut would. */
function failingScans(stores: Stores, times: number, after: number): { scans: () => number } {
  const journal = stores.journal as Keyv & { iterator: (ns?: string) => AsyncGenerator<[string, unknown]> }
  const original = journal.iterator.bind(journal)
  let scans = 0
  journal.iterator = async function* (ns?: string) {
    const fail = scans++ < times
    let n = 0
    for await (const row of original(ns)) {
      if (fail && n++ === after) throw new Error('connection terminated unexpectedly')
      yield row
    }
  }
  return { scans: () => scans }
}

/** A first run that could not report for A (no token): `strings` of A's strings left on disk, in batches of 200. */
async function leaveOnDisk(storeUrl: string, strings: number): Promise<void> {
  const first = await startTestWorker({ pipelines: fakePipelines(), fetch: fakeServiceFetch().fetch, tokens: new StaticTokenProvider(new Map()), config: { storeUrl, queueLimit: 1000 } })
  for (let i = 0; i < strings / 200; i++) expect((await fetch(`${first.url}/webhooks`, signedRequest(batch(i * 200, 200, A.orgId), SECRET, A))).status).toBe(200)
  await expect.poll(() => first.stats().depth, { timeout: 10_000 }).toBe(0)
  expect(first.stats().journal).toBe(strings)
  await first.stop()
  await first.stores.close()
}

/**
 * `strings` of A's strings left on disk by a first run, then `test` with the store opened again,
 * its journal's first `failures` scans cut after `after` entries; the data removed afterwards.
 */
async function afterFirstRun(strings: number, failures: number, after: number, test: (o: { storeUrl: string; stores: Stores; scans: () => number }) => Promise<void>): Promise<void> {
  const data = tempDir('replay-retry')
  const storeUrl = `sqlite://${data.dir}/state.sqlite`
  try {
    await leaveOnDisk(storeUrl, strings)
    const stores = await createStores(storeUrl)
    await test({ storeUrl, stores, scans: failingScans(stores, failures, after).scans })
  } finally {
    data.remove()
  }
}

describe('the journal replay after a restart', () => {
  it('is tried again when the store fails part way: every string left on disk is reported once, and webhooks are taken meanwhile', async () => {
    // Two scans fail after two entries each; the third goes through.
    await afterFirstRun(1000, 2, 2, async ({ storeUrl, stores, scans }) => {
      const service = fakeServiceFetch()
      const second = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores, replayRetryMs: 300, config: { storeUrl, queueLimit: 1000, apiUrl: 'http://{organization_domain}.api.test' } })
      running.push({ stop: async () => (await second.stop(), await stores.close()) })
      // While the replay waits to be tried again, another organization's batch is acknowledged.
      await expect.poll(() => scans(), { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(1)
      expect((await fetch(`${second.url}/webhooks`, signedRequest(batch(5000, 50, B.orgId), SECRET, B))).status).toBe(200)
      await second.replayed
      expect(scans()).toBe(3)
      await second.idle(30_000)
      const ofA = reportedIds(service, A.domain)
      expect(ofA.length).toBe(1000)
      expect(new Set(ofA).size).toBe(1000)
      expect(reportedIds(service, B.domain).length).toBe(50)
      expect(second.stats()).toMatchObject({ journal: 0, backlog: 0, depth: 0 })
    })
  }, 60_000)

  it('journals parked strings again once, when taking them out of the parked set failed part way', async () => {
    const store = new Keyv()
    const parkedJobs: Job[] = Array.from({ length: 3 }, (_, i) => ({
      key: `A|1|2|de|${i}|1`, organizationId: 'A', domain: 'a', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1,
      string: { key: 'k', context: '', maxLength: 0, text: 't', isPlural: false, fileType: 'json', filePath: '/a', labelIds: [] },
      sourceLanguage: { id: 'en' }, targetLanguage: { id: 'de' }, batchId: '', attempts: 3,
    }) as Job)
    const before = new Journal(store)
    for (const job of parkedJobs) await before.park(job, 'the API kept failing')
    // The restart: the second string's removal from the parked set fails once.
    const journal = new Journal(store)
    const del = store.delete.bind(store)
    let deletes = 0
    store.delete = (async (key: string) => {
      if (++deletes === 2) throw new Error('connection terminated unexpectedly')
      return del(key)
    }) as typeof store.delete
    const queue = new WorkQueue({ concurrency: 1, limit: 100, process: () => new Promise(() => undefined), onError: () => undefined })
    queue.pause()
    const backlog = new Backlog({ journal, queue, dedupe: new Dedupe(60_000), log: silentLogger(), isHeld: () => false, report: () => undefined, maxBytes: 2 ** 30, organizationShare: 1 })
    await expect(backlog.replay()).rejects.toThrow('connection terminated')
    expect(await backlog.replay()).toMatchObject({ strings: 3, parked: 3 })
    // Three strings owed, once each: in the books, against the organization's share, and waiting.
    expect(journal.size).toBe(3)
    expect(journal.used('A').strings).toBe(3)
    expect(queue.depth + backlog.waiting()).toBe(3)
    const left = await new Journal(store).load()
    expect(left.parked).toEqual([])
    expect(left.batches.flatMap((b) => b.jobs.map((j) => j.key)).sort()).toEqual(parkedJobs.map((j) => j.key))
  })

  it('that keeps failing does not hold up a stop', async () => {
    await afterFirstRun(200, Number.POSITIVE_INFINITY, 0, async ({ storeUrl, stores, scans }) => {
      const second = await startTestWorker({ pipelines: fakePipelines(), fetch: fakeServiceFetch().fetch, stores, replayRetryMs: 20_000, config: { storeUrl, shutdownTimeoutMs: 20_000 } })
      await expect.poll(() => scans(), { timeout: 5_000, interval: 10 }).toBe(1)
      // Nor idle(): it gives up at its deadline, saying why.
      await expect(second.idle(300)).rejects.toThrow(/replay has not gone through/)
      const began = Date.now()
      await second.stop()
      await stores.close()
      expect(Date.now() - began).toBeLessThan(5_000)
      expect(scans()).toBe(1)
      // Nothing was lost: the next start finds the strings on disk.
      const again = await createStores(storeUrl)
      const service = fakeServiceFetch()
      const third = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores: again, config: { storeUrl, apiUrl: 'http://{organization_domain}.api.test' } })
      running.push({ stop: async () => (await third.stop(), await again.close()) })
      await third.idle(30_000)
      expect(reportedIds(service, A.domain).length).toBe(200)
    })
  }, 60_000)
})
