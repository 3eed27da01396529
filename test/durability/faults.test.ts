// Issue 8, fault test: the whole worker (startServe: SQLite-free memory store, real OAuth tokens
// through the browser flow) against an emulated service that answers 20% of API calls with 500,
// 10% with 429 + Retry-After, adds random latency and lets access tokens die after 2 seconds.
// Every string still ends DONE on its expected port, never more than 20 API requests of the
// organization are in flight at once, and no string is reported with two different outputs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { startServe, type Running } from '../../src/cli/serve.js'
import { loadConfig } from '../../src/config/load-config.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { silentLogger } from '../../src/util/logger.js'
import { freePort, tempDir } from './harness.js'

let emu: Emulator
let running: Running | undefined
let refreshesBefore = 0
const data = tempDir('faults')

afterAll(async () => {
  await running?.stop().catch(() => undefined)
  await emu?.stop()
  data.remove()
})

describe.sequential('faults: 500s, 429s, latency and expiring tokens', () => {
  beforeAll(async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    emu = await startEmulator({ strings: 1100, languages: ['de', 'fr'], seed: 23, moduleKey: 'qa-gate', redirectUris: [`${baseUrl}/oauth/callback`], settings: { batchSize: 25, parallel: 6, retries: 20 } })
    const info = emu.info()
    const config = loadConfig({}, {
      port, host: '127.0.0.1', baseUrl,
      appSecrets: [info.appSecret], clientId: info.clientId, clientSecret: info.clientSecret, authUrl: emu.url, apiUrl: emu.url,
      dataDir: data.dir, storeUrl: 'memory://', reconcileIntervalMs: 0, reportLingerMs: 50,
      // Many small pipeline runs at once, so translation fetches and PATCHes crowd the API limit.
      concurrency: 32,
      // 30% of answers fail: 12 attempts make a request that fails every time (0.3^12) vanishingly rare.
      apiMaxAttempts: 12,
    })
    running = await startServe(config, silentLogger())
    await connectThroughBrowser(baseUrl, info.organization.domain)
    emu.configure({
      webhookUrl: `${running.worker.url}/webhooks`,
      faults: { errorRate: 0.2, rateLimitRate: 0.1, retryAfterSeconds: 1, latencyMs: [5, 80], tokenTtlSeconds: 2 },
    })
    emu.resetCounters()
    refreshesBefore = emu.oauth.stats.refreshes
    // The token from the browser flow was issued before the 2 s lifetime was set, and a fast run can
    // end inside its first 2 s: it dies now, so the run meets at least one expired token whatever
    // the machine's speed (CI once finished with no refresh at all).
    emu.oauth.expireAccessTokens()
  })

  it('2,200 strings end DONE on the expected port; at most 20 requests in flight; no conflicting reports', async () => {
    const report = await emu.sendPending()
    expect(report.failedStrings).toEqual([])
    await running!.worker.idle(120_000)
    await running!.worker.reporter.flush()
    const summary = emu.summary()
    const inFlight = emu.maxInFlight()
    const counts = emu.requestCounts()
    const metrics = await running!.worker.metrics.registry.getSingleMetricAsString('switchyard_api_retries_total')
    const stats = running!.worker.stats()
    console.log(`faults: ${report.batches} batches; max in flight ${JSON.stringify(inFlight)}; stats ${JSON.stringify(stats)}; retries ${metrics.split('\n').filter((l) => !l.startsWith('#')).join(', ')}; requests ${JSON.stringify(counts).slice(0, 600)}`)
    expect(summary.notDone, JSON.stringify(summary.examples)).toBe(0)
    expect(summary.wrongOutput, JSON.stringify(summary.examples.wrong.slice(0, 3))).toBe(0)
    expect(summary.conflicting, JSON.stringify(summary.examples.conflicting.slice(0, 3))).toBe(0)
    // The strict emulator saw no protocol mistake (second output, PATCH for a string not waiting, bad token).
    expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
    expect(stats.parked).toBe(0)
    for (const [org, max] of Object.entries(inFlight)) expect(max, `requests in flight for ${org}`).toBeLessThanOrEqual(20)
    // The faults were really met: retries for 5xx and 429 happened.
    expect(metrics).toMatch(/reason="5xx"\} [1-9]/)
    expect(metrics).toMatch(/reason="429"\} [1-9]/)
    // Access tokens died every 2 s during a run of many seconds: the worker must have refreshed them
    // (before expiry or after a 401), or no string would be DONE; a run that never met an expiry
    // would prove nothing about refresh.
    const refreshes = emu.oauth.stats.refreshes - refreshesBefore
    console.log(`faults: ${refreshes} token refreshes`)
    expect(refreshes).toBeGreaterThanOrEqual(1)
  }, 150_000)
})
