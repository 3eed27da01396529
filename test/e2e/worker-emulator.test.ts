// The real worker (engine, shipped qa-gate pipeline, queue, journal, reporter) against the
// emulated service on loopback: every string ends DONE on the port its translation deserves.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT, loadConfig } from '../../src/config/load-config.js'
import { PipelineHost } from '../../src/engine/pipeline-host.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { createStores } from '../../src/store/create-stores.js'
import { silentLogger } from '../../src/util/logger.js'
import { startWorker, type Worker } from '../../src/worker.js'

let emu: Emulator
let worker: Worker
const SECRET = 'e2e-app-secret'

beforeAll(async () => {
  emu = await startEmulator({ strings: 1100, languages: ['de', 'fr'], appSecret: SECRET, seed: 7, moduleKey: 'qa-gate' })
  const token = await emu.authorizeDirect()
  const info = emu.info()
  const config = loadConfig({}, { port: 0, host: '127.0.0.1', appSecrets: [SECRET], apiUrl: emu.url, storeUrl: 'memory://', reconcileIntervalMs: 0 })
  const log = silentLogger()
  const host = new PipelineHost({ dir: path.join(PACKAGE_ROOT, 'pipelines') }, { log, cacheFor: () => ({ get: async () => undefined, set: async () => {} }), env: {}, metrics: { add() {} } })
  const loaded = await host.load()
  expect(loaded.errors).toEqual([])
  worker = await startWorker({
    config, log, stores: await createStores('memory://'), pipelines: host,
    tokens: new StaticTokenProvider(new Map([[info.organization.domain, token.access_token]])),
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
})

afterAll(async () => {
  await worker?.stop()
  await emu?.stop()
})

describe('end to end on the emulator', () => {
  it('routes 2,200 strings in 22 batches over 2 languages to the expected ports, with at most one PATCH per 100 strings', async () => {
    const report = await emu.sendPending({ batchSize: 100, parallel: 4 })
    expect(report.batches).toBeGreaterThanOrEqual(20)
    expect(report.delivered).toBe(report.batches)
    expect(report.failedStrings).toEqual([])
    await worker.idle(60_000)
    const summary = emu.summary()
    expect(summary.notDone, JSON.stringify(summary.examples)).toBe(0)
    expect(summary.wrongOutput, JSON.stringify(summary.examples.wrong.slice(0, 5))).toBe(0)
    expect(summary.conflicting).toBe(0)
    expect(Object.keys(summary.languages)).toEqual(['de', 'fr'])
    for (const lang of Object.values(summary.languages)) {
      expect(lang.byStatus.DONE).toBe(1100)
      // Both ports are used: the sample has correct and broken translations.
      expect(lang.byOutput.approved).toBeGreaterThan(500)
      expect(lang.byOutput.translated).toBeGreaterThan(100)
    }
    const patches = emu.requestCount('PATCH /api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status')
    expect(patches).toBeGreaterThan(0)
    expect(patches).toBeLessThanOrEqual(2200 / 100)
    // The strict emulator saw no protocol mistake: no second output, no PATCH for a string not waiting.
    expect(emu.mistakes()).toEqual([])
  })
})
