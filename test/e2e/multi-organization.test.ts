// The worker serving two organizations of the emulated service, each reached under its own
// domain (API_URL with {organization_domain}, path form on 127.0.0.1), each with its own token:
// every string of both ends DONE on its expected port, and the emulator saw no protocol mistake
// (no token used on the other organization's domain, no second output).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { loadPipelines } from '../durability/harness.js'
import { startTestWorker } from '../support/start-test-worker.js'

const SECRET = 'shared-app-secret'
let emu: Emulator
let worker: Awaited<ReturnType<typeof startTestWorker>>

beforeAll(async () => {
  emu = await startEmulator({
    strings: 150, languages: ['de', 'fr'], appSecret: SECRET, seed: 3, moduleKey: 'qa-gate',
    organizations: [{ id: '300000', domain: 'globex', appSecret: SECRET, strings: 120, languages: ['ja', 'ru'], seed: 4 }],
  })
  const tokens = new Map<string, string>()
  for (const org of emu.organizations()) tokens.set(org.domain, (await emu.authorizeDirect({ organization: org.domain })).access_token)
  worker = await startTestWorker({ pipelines: await loadPipelines(), config: { apiUrl: emu.info().apiUrlTemplate, appSecrets: [SECRET] }, tokens: new StaticTokenProvider(tokens) })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
})

afterAll(async () => {
  await worker?.stop()
  await emu?.stop()
})

describe('two organizations on one worker', () => {
  it('reports every string of each organization under its own domain, with its own token', async () => {
    const report = await emu.sendPending({ batchSize: 100 })
    expect(report.delivered).toBe(report.batches)
    await worker.idle(60_000)
    await worker.reporter.flush()
    for (const org of ['acme', 'globex']) {
      const summary = emu.summary(org)
      expect(summary.notDone, `${org}: ${JSON.stringify(summary.examples)}`).toBe(0)
      expect(summary.wrongOutput).toBe(0)
      expect(emu.patchRequests({ organization: org })).toBeGreaterThan(0)
    }
    expect(emu.mistakes()).toEqual([])
  })
})
