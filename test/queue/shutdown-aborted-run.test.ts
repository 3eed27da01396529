// A stop whose deadline passes while a pipeline run is under way, with the checks on the main
// thread (PIPELINE_THREADS=0, as here): the shutdown's signal reaches the strings' checks, and
// ai-proofread's request to the model fails on it. The engine turns that failure into on-error
// (`park` in pipelines/ai-proofread.yaml), that is "": sent, it parked every string of the run as
// TODO at the service, where only a manager's Resend brings it back. Such a run reports nothing:
// its strings stay in the journal, and the next start reports them (docs/reliability.md, Graceful
// shutdown).
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { startEmulator } from '../../src/emulator/index.js'
import { PipelineHost } from '../../src/engine/pipeline-host.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { silentLogger } from '../../src/util/logger.js'
import { startTestWorker } from '../support/start-test-worker.js'

const SECRET = 'stop-secret'
const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  while (stops.length) await stops.shift()!()
})

it('a run the shutdown deadline stops parks nothing at the service; the next start reports it', async () => {
  const emu = await startEmulator({ strings: 6, languages: ['de'], appSecret: SECRET, seed: 3, moduleKey: 'ai-proofread', defectRate: 0 })
  stops.push(() => emu.stop())
  // The model answers after 4 s: the stop's deadline passes while the request is under way.
  emu.openai!.setFaults({ latencyMs: 4000 })
  const host = new PipelineHost({ dir: path.join(PACKAGE_ROOT, 'pipelines') }, {
    log: silentLogger(),
    cacheFor: () => ({ get: async () => undefined, set: async () => {} }),
    env: { OPENAI_BASE_URL: `${emu.url}/v1`, OPENAI_API_KEY: 'test-key' },
    metrics: { add() {} },
  })
  expect((await host.load()).ok).toBe(true)
  stops.push(() => host.close())
  const tokens = new StaticTokenProvider(new Map([['*', (await emu.authorizeDirect()).access_token]]))
  const config = { apiUrl: emu.url, appSecrets: [SECRET] }
  const first = await startTestWorker({ pipelines: host, config, tokens })
  emu.configure({ webhookUrl: `${first.url}/webhooks` })
  await emu.sendPending()
  await expect.poll(() => emu.openai!.stats().inFlight, { timeout: 5000 }).toBeGreaterThan(0)
  await first.stop({ deadlineMs: 200 })
  await new Promise((r) => setTimeout(r, 500))
  // Before: all six TODO with "".
  expect(emu.summary().languages.de!.byStatus).toEqual({ NEED_PROCESS: 6 })
  expect(first.stats().journal).toBe(6)

  emu.openai!.setFaults({})
  const second = await startTestWorker({ pipelines: host, config, tokens, stores: first.stores })
  stops.unshift(() => second.stop())
  await expect.poll(() => emu.summary().notDone, { timeout: 15_000, interval: 100 }).toBe(0)
  expect(emu.summary().wrongOutput).toBe(0)
  expect(emu.mistakes()).toEqual([])
}, 30_000)
