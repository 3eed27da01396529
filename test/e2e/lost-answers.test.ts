// The service carried out a status update and the answer was lost (a gateway's 502 while the
// service went on: emulator fault `nextLostAnswers`). Whatever the worker does next, a string gets
// at most one output per arrival, and never the output of an earlier arrival.
import { afterEach, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { loadPipelines } from '../durability/harness.js'
import { startTestWorker } from '../support/start-test-worker.js'

const SECRET = 'lost-answers-secret'
let emu: Emulator | undefined
let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined

afterEach(async () => {
  await worker?.stop().catch(() => undefined)
  await emu?.stop()
  worker = undefined
  emu = undefined
})

async function setUp(strings: number): Promise<{ emu: Emulator; worker: NonNullable<typeof worker> }> {
  emu = await startEmulator({ moduleKey: 'qa-gate', seed: 21, strings, languages: ['de'], appSecret: SECRET, defectRate: 0.5, settings: { retries: 3, retryDelayMs: 100 } })
  const token = (await emu.authorizeDirect()).access_token
  worker = await startTestWorker({
    pipelines: await loadPipelines(),
    config: { apiUrl: emu.info().apiUrlTemplate, appSecrets: [SECRET] },
    tokens: new StaticTokenProvider(new Map([[emu.info().organization.domain, token]])),
    heldRecheckMs: 50,
    heldBaseDelayMs: 50,
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
  return { emu, worker }
}

async function waitFor(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(emu?.progress())}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

it('a status update carried out but answered 502: no second output for the same arrival', async () => {
  const { emu, worker } = await setUp(40)
  emu.configureFaults({ nextLostAnswers: [502] })
  const report = await emu.sendPending({ batchSize: 100 })
  expect(report.delivered).toBe(report.batches)
  await waitFor('every string DONE', () => emu.progress().done === 40, 30_000)
  await worker.idle(30_000)
  await worker.reporter.flush()
  await new Promise((r) => setTimeout(r, 500))
  await worker.idle(30_000)
  expect(emu.summary().wrongOutput).toBe(0)
  expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
}, 60_000)

it('a lost answer, then the string sent back with a fixed translation: the new arrival is decided on the new translation', async () => {
  const { emu, worker } = await setUp(40)
  const defective = emu.statuses({}).filter((s) => s.defect !== null).map((s) => s.stringId)
  expect(defective.length).toBeGreaterThan(5)
  // Every PATCH of the first pass lands and its answer is lost; a reviewer sends the failed strings
  // back (the translator fixes them) before the worker tries again.
  emu.configureFaults({ nextLostAnswers: [502, 502, 502, 502] })
  let sentBack = 0
  const timer = setInterval(() => {
    const done = emu.statuses({ stringIds: defective, status: 'DONE' }).map((s) => s.stringId)
    if (done.length) sentBack += emu.sendBack({ stringIds: done }).length
  }, 5)
  try {
    await emu.sendPending({ batchSize: 100 })
    await waitFor('the defective strings sent back', () => sentBack >= defective.length, 30_000)
  } finally {
    clearInterval(timer)
  }
  emu.configureFaults({ nextLostAnswers: [] })
  await emu.sendPending({ batchSize: 100 })
  await waitFor('every string DONE', () => emu.progress().done === 40, 30_000)
  await worker.idle(30_000)
  await worker.reporter.flush()
  await worker.idle(30_000)
  // After the fix every sent-back string deserves the passing port.
  for (const v of emu.statuses({ stringIds: defective })) {
    expect(v, JSON.stringify(v)).toMatchObject({ status: 'DONE', output: emu.sample.passOutput })
  }
  expect(emu.summary().wrongOutput).toBe(0)
}, 60_000)
