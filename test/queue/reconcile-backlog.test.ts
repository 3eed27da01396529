// Reconciliation counts strings the service waits for that this worker holds no job for. Strings
// acknowledged and waiting on disk (past QUEUE_LIMIT, in the backlog) are held all the same, though
// the de-duplication's memory knows only the window: the sweep waits for a moment when none waits
// on disk (held organizations' aside), as it waits for Redis with QUEUE=bullmq, rather than count
// every one of them as an orphan (and log a warning that says they were lost).
import { afterAll, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { fakePipelines } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

let emu: Emulator | undefined
let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined
afterAll(async () => {
  await worker?.stop()
  await emu?.stop()
})

it('counts no string waiting in the backlog on disk as an orphan, and sweeps once none waits', async () => {
  emu = await startEmulator({ strings: 120, languages: ['de'], appSecret: SECRET, seed: 5, moduleKey: 'test-step' })
  const token = await emu.authorizeDirect()
  worker = await startTestWorker({
    // A slow pipeline and a window of 10: most strings wait on disk.
    pipelines: fakePipelines('test-step', () => 'approved', { delayMs: 500 }),
    config: { apiUrl: emu.url, queueLimit: 10, concurrency: 1 },
    tokens: new StaticTokenProvider(new Map([[emu.info().organization.domain, token.access_token]])),
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
  // 20 strings the service waits for are never delivered: orphans, once the sweep runs.
  const sent = await emu.sendPending({ batchSize: 50, stringIds: emu.sample.strings.slice(20).map((s) => s.id) })
  expect(sent.delivered).toBe(sent.batches)
  // A group has started running (the step is known); the rest waits on disk.
  await expect.poll(() => worker!.backlog!.waiting(), { timeout: 5000 }).toBeGreaterThan(60)
  const skipped = await worker.reconcile()
  expect(skipped).toMatchObject({ orphans: 0, checked: 0 })
  expect(skipped.queuedElsewhere).toBeGreaterThan(60)
  // The strings that never reached the worker are found once none waits on disk.
  await worker.idle(60_000)
  const swept = await worker.reconcile()
  expect(swept).toEqual({ orphans: 20, checked: 20 })
}, 90_000)
