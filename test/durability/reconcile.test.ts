// Issue 8, reconciliation test: strings waiting at the service (NEED_PROCESS) that the worker holds
// no job for (a batch lost before it reached the worker) are found by the sweep and counted in
// /metrics as switchyard_reconcile_orphans_total; strings the worker holds are not orphans.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { loadPipelines } from './harness.js'

let emu: Emulator
let worker: Awaited<ReturnType<typeof startTestWorker>>

beforeAll(async () => {
  emu = await startEmulator({ strings: 600, languages: ['de', 'fr'], appSecret: SECRET, seed: 9, moduleKey: 'qa-gate' })
  const token = await emu.authorizeDirect()
  worker = await startTestWorker({
    pipelines: await loadPipelines(),
    config: { apiUrl: emu.url },
    tokens: new StaticTokenProvider(new Map([[emu.info().organization.domain, token.access_token]])),
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
})

afterAll(async () => {
  await worker?.stop()
  await emu?.stop()
})

const orphansMetric = async () => {
  const text = await (await fetch(`${worker.url}/metrics`)).text()
  const m = /^switchyard_reconcile_orphans_total (\d+)/m.exec(text)
  return m ? Number(m[1]) : NaN
}

describe('reconciliation sweep', () => {
  it('finds the NEED_PROCESS strings the worker holds no job for and counts them in /metrics', async () => {
    const ids = emu.sample.strings.map((s) => s.id)
    // The first 200 strings reach the worker; the other 400 (x 2 languages) are "lost" on the way.
    const delivered = await emu.sendPending({ stringIds: ids.slice(0, 200) })
    expect(delivered.delivered).toBe(delivered.batches)
    await worker.idle(60_000)
    await worker.reporter.flush()
    expect(await orphansMetric()).toBe(0)

    const first = await worker.reconcile()
    expect(first.orphans).toBe(800)
    expect(first.checked).toBe(800)
    expect(await orphansMetric()).toBe(800)

    // 50 more strings reach the worker and are still being worked (the API is slow now): those
    // are not orphans, the 350 others still are.
    emu.configure({ faults: { latencyMs: [300, 300] } })
    const more = await emu.sendPending({ stringIds: ids.slice(200, 250) })
    expect(more.delivered).toBe(more.batches)
    expect(worker.stats().depth).toBe(100)
    const during = await worker.reconcile()
    // The sweep pages through NEED_PROCESS by offset while the worker reports: a string reported
    // between two pages shifts the next page, so a few of the 100 being worked may go unseen.
    expect(during.orphans).toBe(700)
    expect(during.checked).toBeGreaterThanOrEqual(790)
    expect(during.checked).toBeLessThanOrEqual(800)
    expect(await orphansMetric()).toBe(1500)
    emu.configure({ faults: { latencyMs: [0, 0] } })

    // Once the service resends them, nothing is orphaned any more.
    await emu.sendPending()
    await worker.idle(60_000)
    await worker.reporter.flush()
    expect(emu.summary().notDone).toBe(0)
    const second = await worker.reconcile()
    expect(second).toEqual({ orphans: 0, checked: 0 })
    expect(await orphansMetric()).toBe(1500)
  })
})
