// Issue 8, duplicate test: the service delivers every batch three times (the three copies
// interleaved, as retries of batches whose 2XX got lost would be) and once more after the strings
// were done. De-duplication by (organization, project, step, language, string, revision) means
// each string is run and reported exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { loadPipelines } from './harness.js'

let emu: Emulator
let worker: Awaited<ReturnType<typeof startTestWorker>>

beforeAll(async () => {
  emu = await startEmulator({ strings: 1000, languages: ['de', 'fr'], appSecret: SECRET, seed: 5, moduleKey: 'qa-gate', settings: { batchSize: 50, retries: 5 } })
  const token = await emu.authorizeDirect()
  worker = await startTestWorker({
    pipelines: await loadPipelines(),
    // The default de-duplication window (10 minutes) is far longer than this test.
    config: { apiUrl: emu.url, reportLingerMs: 100 },
    tokens: new StaticTokenProvider(new Map([[emu.info().organization.domain, token.access_token]])),
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
})

afterAll(async () => {
  await worker?.stop()
  await emu?.stop()
})

describe('duplicates: every batch delivered three times', () => {
  it('2,000 strings, 3 deliveries each: every string DONE with exactly one status operation', async () => {
    const reports = await Promise.all([1, 2, 3].map(() => emu.sendPending({ anyStatus: true, parallel: 3 })))
    for (const r of reports) expect(r.delivered).toBe(r.batches)
    await worker.idle(60_000)
    await worker.reporter.flush()
    // A fourth copy after everything was reported: absorbed by the recently-done window.
    const late = await emu.sendPending({ anyStatus: true })
    expect(late.delivered).toBe(late.batches)
    await worker.idle(60_000)
    await worker.reporter.flush()

    const summary = emu.summary()
    const statuses = emu.statuses()
    const patchCounts = new Map<number, number>()
    for (const s of statuses) patchCounts.set(s.patches, (patchCounts.get(s.patches) ?? 0) + 1)
    const events = reports.reduce((n, r) => n + r.events, 0) + late.events
    console.log(`duplicates: ${events} events for ${statuses.length} pairs; status operations per pair ${JSON.stringify(Object.fromEntries(patchCounts))}; ${summary.patchOperations} operations in total`)
    expect(events).toBe(4 * 2000)
    expect(summary.notDone).toBe(0)
    expect(summary.wrongOutput).toBe(0)
    expect(summary.conflicting).toBe(0)
    // The strict emulator saw no protocol mistake (second output, PATCH for a string not waiting, bad token).
    expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
    expect(statuses.filter((s) => s.patches !== 1).slice(0, 5)).toEqual([])
    expect(summary.patchOperations).toBe(2000)
    const jobs = await worker.metrics.registry.getSingleMetricAsString('switchyard_jobs_total')
    expect(jobs).toMatch(/outcome="reported"/)
  })
})
