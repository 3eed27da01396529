// Issue 8, flood test: batches are offered far faster than a deliberately slow pipeline can work
// them (a fixture check sleeps a few ms per string) to a child-process worker with QUEUE_LIMIT
// 2,000. It answers 503 with Retry-After and journals nothing for those, its memory stays bounded,
// and everything it acknowledged ends DONE (the sender keeps retrying, honouring Retry-After).
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

describe.sequential('flood: back-pressure with a bounded queue', () => {
  beforeAll(async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    emu = await startEmulator({
      strings: STRINGS, languages: ['de', 'fr'], seed: 31, moduleKey: 'slow-gate', redirectUris: [`${baseUrl}/oauth/callback`],
      // Many batches in flight at once, and a sender patient enough to wait out a full queue.
      settings: { batchSize: 100, parallel: 12, retries: 200, retryDelayMs: 200, retryAfterCapMs: 3000 },
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

  it(`${STRINGS * 2} strings offered at once to a queue of ${QUEUE_LIMIT}: 503 + Retry-After, bounded memory, all DONE`, async () => {
    let maxRss = 0
    let maxDepth = 0
    const sampler = setInterval(() => {
      maxRss = Math.max(maxRss, worker!.rss() ?? 0)
      void worker!.health().then((h) => {
        maxDepth = Math.max(maxDepth, h.queue.depth)
      }, () => undefined)
    }, 100)
    try {
      const report = await emu.sendPending()
      await waitIdle(worker!, 90_000)
      const summary = emu.summary()
      const busy = proxy.statuses['503'] ?? 0
      console.log(`flood: ${report.batches} batches, ${report.attempts} POSTs, ${busy} answered 503 (Retry-After ${[...new Set(proxy.retryAfter)].join(',')} s); max queue depth ${maxDepth}/${QUEUE_LIMIT}; max RSS ${(maxRss / 2 ** 20).toFixed(0)} MB; ${report.durationMs} ms`)
      expect(report.failedStrings).toEqual([])
      expect(busy).toBeGreaterThan(0)
      expect(proxy.retryAfter.length).toBe(busy)
      for (const ra of proxy.retryAfter) expect(Number(ra)).toBeGreaterThanOrEqual(1)
      // Every 503 was a batch journaled nowhere: the depth never passed the limit (one batch of
      // slack: an empty queue always takes a batch, whatever its size).
      expect(maxDepth).toBeLessThanOrEqual(QUEUE_LIMIT)
      expect(maxRss).toBeGreaterThan(0)
      expect(maxRss).toBeLessThan(RSS_BOUND)
      expect(summary.notDone, JSON.stringify(summary.examples)).toBe(0)
      expect(summary.wrongOutput).toBe(0)
      expect(summary.conflicting).toBe(0)
      // The strict emulator saw no protocol mistake (second output, PATCH for a string not waiting, bad token).
      expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
      for (const s of emu.statuses()) expect(proxy.acked.has(PAIR(s.stringId, s.languageId))).toBe(true)
    } finally {
      clearInterval(sampler)
    }
  }, 150_000)
})
