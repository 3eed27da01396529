// Issues 8 and 16, a burst during an API outage: batches are offered far faster than a deliberately
// slow pipeline can work them (a fixture check sleeps a few ms per string) to a child-process
// worker with QUEUE_LIMIT 2,000, while the API answers 500 to everything for the first seconds.
// The senders are the service's: 3 retries, 1 s apart, Retry-After ignored. No 503 (the backlog
// waits on disk; the queue is only the window), memory stays bounded, the window never passes
// QUEUE_LIMIT, and everything ends DONE.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { FIXTURES, PAIR, freePort, killWorker, spawnWorker, startAckProxy, tempDir, waitIdle, workerEnv, type AckProxy, type ChildWorker } from './harness.js'

const STRINGS = 3000
const QUEUE_LIMIT = 2000
const RSS_BOUND = 300 * 1024 * 1024

let emu: Emulator
let proxy: AckProxy
let worker: ChildWorker | undefined
const data = tempDir('flood')

afterAll(async () => {
  await killWorker(worker)
  await proxy?.close()
  await emu?.stop()
  data.remove()
})

describe.sequential('burst during an outage: a backlog on disk, no 503', () => {
  beforeAll(async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    emu = await startEmulator({
      strings: STRINGS, languages: ['de', 'fr'], seed: 31, moduleKey: 'slow-gate', redirectUris: [`${baseUrl}/oauth/callback`],
      // Many batches in flight at once, from a sender as impatient as the service's.
      settings: { batchSize: 100, parallel: 12, retries: 3, retryDelayMs: 1000, retryAfterCapMs: 1000 },
    })
    const info = emu.info()
    worker = await spawnWorker(workerEnv({
      baseUrl, dataDir: data.dir, emuUrl: emu.url, appSecret: info.appSecret, clientId: info.clientId, clientSecret: info.clientSecret,
      extra: { PIPELINES_DIR: path.join(FIXTURES, 'pipelines'), PLUGINS_DIR: path.join(FIXTURES, 'plugins'), QUEUE_LIMIT: String(QUEUE_LIMIT), SLEEPY_MS_PER_STRING: '3', CONCURRENCY: '2' },
    }), port)
    await connectThroughBrowser(worker.url, info.organization.domain)
    proxy = await startAckProxy(worker.url)
    emu.configure({ webhookUrl: `${proxy.url}/webhooks` })
  })

  it(`${STRINGS * 2} strings offered at once to a window of ${QUEUE_LIMIT} during an API outage: no 503, bounded memory, all DONE`, async () => {
    let maxRss = 0
    let maxDepth = 0
    let maxWaiting = 0
    const sampler = setInterval(() => {
      maxRss = Math.max(maxRss, worker!.rss() ?? 0)
      void worker!.health().then((h) => {
        maxDepth = Math.max(maxDepth, h.queue.depth)
        maxWaiting = Math.max(maxWaiting, (h as unknown as { backlog?: { waiting: number } }).backlog?.waiting ?? 0)
      }, () => undefined)
    }, 100)
    // The outage: every API answer is a 500 for the first 3 s of the burst.
    emu.configure({ faults: { errorRate: 1 } })
    const outage = setTimeout(() => emu.configure({ faults: { errorRate: 0 } }), 3000)
    try {
      const report = await emu.sendPending()
      await waitIdle(worker!, 120_000)
      const summary = emu.summary()
      const busy = proxy.statuses['503'] ?? 0
      console.log(`burst: ${report.batches} batches, ${report.attempts} POSTs, ${busy} answered 503; max window ${maxDepth}/${QUEUE_LIMIT}; max waiting on disk ${maxWaiting}; max RSS ${(maxRss / 2 ** 20).toFixed(0)} MB; ${report.durationMs} ms`)
      expect(busy).toBe(0)
      expect(report.failedStrings).toEqual([])
      expect(report.attempts).toBe(report.batches)
      // The window never passed the limit; the rest waited on disk.
      expect(maxDepth).toBeLessThanOrEqual(QUEUE_LIMIT)
      expect(maxWaiting).toBeGreaterThan(0)
      expect(maxRss).toBeGreaterThan(0)
      expect(maxRss).toBeLessThan(RSS_BOUND)
      expect(summary.notDone, JSON.stringify(summary.examples)).toBe(0)
      expect(summary.wrongOutput).toBe(0)
      expect(summary.conflicting).toBe(0)
      // The strict emulator saw no protocol mistake (second output, PATCH for a string not waiting, bad token).
      expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
      for (const s of emu.statuses()) expect(proxy.acked.has(PAIR(s.stringId, s.languageId))).toBe(true)
    } finally {
      clearTimeout(outage)
      emu.configure({ faults: { errorRate: 0 } })
      clearInterval(sampler)
    }
  }, 150_000)
})
