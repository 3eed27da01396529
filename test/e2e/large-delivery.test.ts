// A batch larger than BODY_MEMORY_LIMIT from the emulated service (its full events, signed as it
// signs them), into a worker on its defaults: taken with one POST, through a file in DATA_DIR and
// in slices (large-body.ts), and every string DONE with no protocol mistake. Before, a batch over
// 10 MiB got 413 on every try and its strings ended FAILED.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { loadPipelines } from '../durability/harness.js'
import { startTestWorker } from '../support/start-test-worker.js'

const SECRET = 'secret-of-acme'
let emu: Emulator | undefined
let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-large-delivery-'))

afterEach(async () => {
  await worker?.stop().catch(() => undefined)
  await emu?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

it('takes a 20 MB batch of the service in one POST and reports every string', async () => {
  emu = await startEmulator({ moduleKey: 'qa-gate', seed: 16, strings: 3_600, languages: ['de', 'fr'], settings: { retries: 3, retryDelayMs: 100 } })
  emu.configure({ appSecret: SECRET })
  const token = (await emu.authorizeDirect()).access_token
  worker = await startTestWorker({
    pipelines: await loadPipelines(),
    config: { apiUrl: emu.info().apiUrlTemplate, appSecrets: [SECRET], dataDir, queueLimit: 100_000 },
    tokens: new StaticTokenProvider(new Map([[emu.organizations()[0]!.domain, token]])),
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
  const report = await emu.sendPending({ batchSize: 7_200 })
  expect(report).toMatchObject({ batches: 1, attempts: 1, delivered: 1, failedStrings: [] })
  // It went through the disk (the directory is made for the first large body), and left nothing.
  expect(existsSync(path.join(dataDir, 'incoming'))).toBe(true)
  expect(readdirSync(path.join(dataDir, 'incoming'))).toEqual([])
  await worker.idle(60_000)
  const summary = emu.summary()
  expect(summary.notDone, JSON.stringify(summary.examples)).toBe(0)
  expect(summary.wrongOutput).toBe(0)
  expect(emu.mistakes()).toEqual([])
}, 90_000)
