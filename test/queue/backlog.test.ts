// Issue 16: the backlog on disk. Fairness between two organizations (a huge backlog of one never
// starves the small batches of another), and a restart with a backlog (it is indexed, not loaded:
// start-up is quick, the window stays bounded, and everything is reported).
import { afterEach, describe, expect, it } from 'vitest'
import Keyv from 'keyv'
import type { Job } from '../../src/protocol/job.js'
import { Backlog, reserveOf } from '../../src/queue/backlog.js'
import { Dedupe, type StringRef } from '../../src/queue/dedupe.js'
import { Journal } from '../../src/queue/journal.js'
import { WorkQueue } from '../../src/queue/work-queue.js'
import { silentLogger } from '../../src/util/logger.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { createStores } from '../../src/store/create-stores.js'
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
const batch = (from: number, n: number, organizationId: string, stepId = 11) =>
  JSON.stringify({ events: Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: from + i, organizationId, stepId })) })
const reportedOf = (service: ReturnType<typeof fakeServiceFetch>, domain: string) => service.patches.filter((p) => p.url.includes(domain)).reduce((n, p) => n + p.ops.length, 0)

/** A backlog over an in-memory journal and a window of 100 that only fills (nothing runs). */
async function pausedBacklog(downstream?: () => number) {
  const journal = new Journal(new Keyv())
  const queue = new WorkQueue({ concurrency: 1, limit: 100, process: () => new Promise(() => undefined), onError: () => undefined })
  queue.pause()
  const backlog = new Backlog({ journal, queue, dedupe: new Dedupe(60_000), log: silentLogger(), isHeld: () => false, report: () => undefined, maxBytes: 2 ** 30, organizationShare: 0.5, ...(downstream ? { downstream } : {}) })
  await backlog.replay()
  return { journal, queue, backlog }
}

/** `n` jobs of one organization, as the backlog writes them to disk. */
const diskJobs = (n: number, organizationId: string): Job[] => Array.from({ length: n }, (_, i) => ({
  key: `${organizationId}|${i}`, organizationId, domain: organizationId.toLowerCase(), moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1,
  string: { key: 'k', context: '', maxLength: 0, text: 't', isPlural: false, fileType: 'json', filePath: '/a', labelIds: [] },
  sourceLanguage: { id: 'en' }, targetLanguage: { id: 'de' }, batchId: '', attempts: 0,
}))

/** A worker with a window of 200 strings, whose every pipeline run takes 60 ms, and the fake service it reports to. */
async function slowWorker() {
  const service = fakeServiceFetch()
  const tokens = new StaticTokenProvider(new Map([['*', 'token']]))
  const w = await startTestWorker({ pipelines: fakePipelines('test-step', () => 'approved', { delayMs: 60 }), fetch: service.fetch, tokens, config: { queueLimit: 200, concurrency: 2, apiUrl: 'http://{organization_domain}.api.test' } })
  running.push(w)
  return { service, w }
}

describe('backlog', () => {
  it("serves organizations in turn: B's small batch is DONE long before A's backlog of thousands drains", async () => {
    const { service, w } = await slowWorker()
    const A_STRINGS = 6000
    for (let i = 0; i < A_STRINGS / 500; i++) {
      // Two steps, so A alone has several groups in the window.
      expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(i * 500, 500, 'A', 11 + (i % 2)), SECRET, A))).status).toBe(200)
    }
    expect(w.stats().backlog).toBeGreaterThan(A_STRINGS / 2)
    const sentB = Date.now()
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(1, 5, 'B'), SECRET, B))).status).toBe(200)
    await expect.poll(() => reportedOf(service, 'b.example'), { timeout: 10_000, interval: 20 }).toBe(5)
    const tookB = Date.now() - sentB
    const aDoneThen = reportedOf(service, 'a.example')
    console.log(`fairness: B's 5 strings reported ${tookB} ms after they were sent, while A had ${aDoneThen} of ${A_STRINGS} reported`)
    expect(aDoneThen).toBeLessThan(A_STRINGS / 2)
    await w.idle(60_000)
    expect(reportedOf(service, 'a.example')).toBe(A_STRINGS)
  }, 90_000)

  it("serves an organization's steps in turn: its small batch of another step is DONE long before the first step's backlog drains", async () => {
    const { service, w } = await slowWorker()
    const STEP_11 = 6000
    for (let i = 0; i < STEP_11 / 500; i++) expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(i * 500, 500, 'A', 11), SECRET, A))).status).toBe(200)
    expect(w.stats().backlog).toBeGreaterThan(STEP_11 / 2)
    const sent = Date.now()
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(100_000, 5, 'A', 12), SECRET, A))).status).toBe(200)
    const reportedOfStep = (stepId: number) => service.patches.filter((p) => p.stepId === stepId).reduce((n, p) => n + p.ops.length, 0)
    await expect.poll(() => reportedOfStep(12), { timeout: 10_000, interval: 20 }).toBe(5)
    const took = Date.now() - sent
    const step11Then = reportedOfStep(11)
    console.log(`fairness between steps: step 12's 5 strings reported ${took} ms after they were sent, while step 11 had ${step11Then} of ${STEP_11} reported`)
    expect(step11Then).toBeLessThan(STEP_11 / 2)
    await w.idle(60_000)
    expect(reportedOfStep(11)).toBe(STEP_11)
  }, 90_000)

  it('restarts with a backlog: indexed without loading it, the window stays bounded, every string reported', async () => {
    const data = tempDir('backlog-restart')
    const storeUrl = `sqlite://${data.dir}/state.sqlite`
    const STRINGS = 20_000
    try {
      // First run: the organization can't be reported for (no token), so everything waits on disk.
      const service = fakeServiceFetch()
      const first = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, tokens: new StaticTokenProvider(new Map()), config: { storeUrl, queueLimit: 1000 } })
      for (let i = 0; i < STRINGS / 1000; i++) expect((await fetch(`${first.url}/webhooks`, signedRequest(batch(i * 1000, 1000, 'A'), SECRET, A))).status).toBe(200)
      await expect.poll(() => first.stats().depth, { timeout: 10_000 }).toBe(0)
      expect(first.stats().journal).toBe(STRINGS)
      await first.stop()
      await first.stores.close()

      // Second run: connected. Replay indexes the journal; the window fills 1,000 at a time.
      global.gc?.()
      const heapBefore = process.memoryUsage().heapUsed
      const stores = await createStores(storeUrl)
      const started = Date.now()
      const second = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores, tokens: new StaticTokenProvider(new Map([['*', 'token']])), config: { storeUrl, queueLimit: 1000 } })
      running.push({ stop: async () => (await second.stop(), await stores.close()) })
      await second.replayed
      const replayMs = Date.now() - started
      const heapAfterReplay = process.memoryUsage().heapUsed
      let maxDepth = 0
      const sampler = setInterval(() => (maxDepth = Math.max(maxDepth, second.queue.depth)), 5)
      try {
        await second.idle(120_000)
      } finally {
        clearInterval(sampler)
      }
      console.log(`restart: ${STRINGS} strings indexed in ${replayMs} ms; heap +${((heapAfterReplay - heapBefore) / 2 ** 20).toFixed(1)} MB after replay; max window ${maxDepth}`)
      expect(replayMs).toBeLessThan(10_000)
      expect(maxDepth).toBeLessThanOrEqual(1000)
      // The replay keeps ids and counts, not jobs: far less than the ~1 kB a job takes in memory.
      expect(heapAfterReplay - heapBefore).toBeLessThan(STRINGS * 1024 * 0.5)
      expect(service.patches.reduce((n, p) => n + p.ops.length, 0)).toBe(STRINGS)
      expect(second.stats()).toMatchObject({ journal: 0, backlog: 0, depth: 0 })
    } finally {
      data.remove()
    }
  }, 180_000)
})

describe('the window', () => {
  it("refilling leaves a tenth free: another organization's small batch goes straight in while one's backlog keeps the rest full", async () => {
    const { journal, queue, backlog } = await pausedBacklog()
    // A: 1,000 strings left on disk; the window fills to its limit less the reserve.
    const a = diskJobs(1000, 'A')
    backlog.spill('A', 'a', await journal.append(journal.newBatchId(), a), a.length)
    await backlog.refill()
    expect(reserveOf(100)).toBe(10)
    expect(queue.depth).toBe(90)
    expect(backlog.direct('A', 'a', 5)).toBe(false)
    // B has nothing on disk: a small batch fits in the reserve, a larger one waits on disk.
    expect(backlog.direct('B', 'b', 5)).toBe(true)
    expect(backlog.direct('B', 'b', 11)).toBe(false)
    backlog.close()
  })

  it("a copy read back while its revision's status update is under way waits behind it: its room taken, not run, not done", async () => {
    const journal = new Journal(new Keyv())
    const queue = new WorkQueue({ concurrency: 1, limit: 100, process: () => new Promise(() => undefined), onError: () => undefined })
    queue.pause()
    const released: StringRef[] = []
    const dedupe = new Dedupe(60_000, Date.now, 100_000, undefined, (r) => released.push(r))
    const backlog = new Backlog({ journal, queue, dedupe, log: silentLogger(), isHeld: () => false, report: () => undefined, maxBytes: 2 ** 30, organizationShare: 0.5 })
    await backlog.replay()
    // The copy in the window: its update went out.
    const [running] = diskJobs(1, 'A')
    dedupe.arrive(running!, 1)
    dedupe.sending(running!, 1)
    const again = diskJobs(1, 'A')
    backlog.spill('A', 'a', await journal.append(journal.newBatchId(), again), again.length)
    await backlog.refill()
    expect(queue.depth).toBe(1)
    expect(queue.waiting).toBe(0)
    expect(journal.size).toBe(1)
    // The copy ends: the one read back goes (the worker queues it, checked with the service).
    dedupe.finish(running!, 1)
    expect(released).toHaveLength(1)
    expect(released[0]).toMatchObject({ stringId: 0, revision: 1 })
    backlog.close()
  })

  it('strings being read back from disk still count as waiting until they are in the window', async () => {
    const { journal, queue, backlog } = await pausedBacklog()
    const a = diskJobs(50, 'A')
    backlog.spill('A', 'a', await journal.append(journal.newBatchId(), a), a.length)
    // Hold the read: an idle check (queue empty and nothing waiting) must not pass meanwhile.
    let release!: () => void
    const gate = new Promise<void>((r) => { release = r })
    const readPart = journal.readPart.bind(journal)
    journal.readPart = async (...args) => { await gate; return readPart(...args) }
    const refilled = backlog.refill()
    await new Promise((r) => setTimeout(r, 20))
    expect(queue.depth).toBe(0)
    expect(backlog.waiting()).toBe(50)
    expect(backlog.waiting('a')).toBe(50)
    expect(backlog.waiting('b')).toBe(0)
    release()
    await refilled
    expect(queue.depth).toBe(50)
    expect(backlog.waiting()).toBe(0)
    backlog.close()
  })

  it('strings reported but with their findings not yet logged count against the window', async () => {
    let behind = 60
    const { journal, queue, backlog } = await pausedBacklog(() => behind)
    const a = diskJobs(1000, 'A')
    backlog.spill('A', 'a', await journal.append(journal.newBatchId(), a), a.length)
    await backlog.refill()
    // 100 less the reserve (10) less the 60 still in the findings stage.
    expect(queue.depth).toBe(30)
    expect(backlog.direct('B', 'b', 5)).toBe(true)
    behind = 100
    expect(backlog.direct('B', 'b', 5)).toBe(false)
    // The findings log catches up: the backlog looks again by itself.
    behind = 0
    await expect.poll(() => queue.depth, { timeout: 2000, interval: 20 }).toBe(90)
    backlog.close()
  })
})
