// Duplicate and out-of-order deliveries of a string's revisions across worker restarts (SIGTERM,
// then a new process on the same store). A translator edits the source twice (revisions r2, r3,
// source and translation gaining a number each time, so an older source with the newer
// translation fails the numbers check); the service's deliveries of older revisions come again
// late (r1 after r2, r1 and r2 after r3), and the newest is delivered twice. What must hold: every
// string ends DONE on the port its newest revision deserves, at most one output per arrival, and no
// protocol mistake.
import { afterAll, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { freePort, killWorker, postFresh, spawnWorker, startAckProxy, tempDir, waitIdle, workerEnv, type AckProxy, type ChildWorker } from './harness.js'

let emu: Emulator
let proxy: AckProxy
let worker: ChildWorker | undefined
const data = tempDir('revisions-restart')
afterAll(async () => {
  await killWorker(worker)
  await proxy?.close()
  await emu?.stop()
  data.remove()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

it('older revisions delivered again after newer ones, across SIGTERM and restart: the newest revision\'s output, once per arrival', async () => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  emu = await startEmulator({ strings: 60, languages: ['de'], seed: 7, defectRate: 0, moduleKey: 'qa-gate', redirectUris: [`${baseUrl}/oauth/callback`], settings: { batchSize: 100, retries: 40, retryDelayMs: 250 } })
  const info = emu.info()
  const env = workerEnv({ baseUrl, dataDir: data.dir, emuUrl: emu.url, appSecret: info.appSecret, clientId: info.clientId, clientSecret: info.clientSecret, extra: { CONCURRENCY: '1', SHUTDOWN_TIMEOUT_MS: '300' } })
  worker = await spawnWorker(env, port)
  await connectThroughBrowser(worker.url, info.organization.domain)
  proxy = await startAckProxy(worker.url)
  emu.configure({ webhookUrl: `${proxy.url}/webhooks` })
  const { sample } = emu.org()
  const edited = sample.strings.filter((s) => s.type === 'text' && !/\d/.test(s.text) && !/\d/.test(s.translations.get('de')!.text)).slice(0, 10).map((s) => s.id)
  expect(edited).toHaveLength(10)
  const url = () => `${worker!.url}/webhooks`

  // r1 of every string, reported.
  const first = await emu.sendPending()
  expect(first.failedBatches).toBe(0)
  const r1 = proxy.lastAcked!
  await waitIdle(worker, 30_000)
  expect(emu.progress().done).toBe(60)

  // r2: delivered, then SIGTERM while its updates are slow; restarted; r1 and r2 come again.
  emu.configure({ faults: { latencyMs: [200, 400] } })
  emu.editSource({ stringIds: edited, append: ' 42' })
  const second = await emu.sendPending({ stringIds: edited })
  expect(second.failedBatches).toBe(0)
  const r2 = proxy.lastAcked!
  worker.proc.kill('SIGTERM')
  await worker.exited
  worker = await spawnWorker(env, port)
  for (const body of [r1, r2, r1]) expect((await postFresh(url(), body.body, body.headers)).status).toBe(200)
  await waitIdle(worker, 30_000)
  await sleep(300)
  for (const s of emu.statuses({ stringIds: edited })) expect(s, JSON.stringify(s)).toMatchObject({ status: 'DONE', output: sample.passOutput })
  expect(emu.mistakes(), `after r2: ${JSON.stringify(emu.mistakes().slice(0, 3))}`).toEqual([])

  // r3 while the worker runs: older revisions delivered again right behind it, then SIGTERM,
  // restart, and all three once more, the newest twice.
  emu.editSource({ stringIds: edited, append: ' 7' })
  const third = await emu.sendPending({ stringIds: edited })
  expect(third.failedBatches).toBe(0)
  const r3 = proxy.lastAcked!
  for (const body of [r2, r1]) expect((await postFresh(url(), body.body, body.headers)).status).toBe(200)
  worker.proc.kill('SIGTERM')
  await worker.exited
  worker = await spawnWorker(env, port)
  for (const body of [r3, r1, r2, r3]) expect((await postFresh(url(), body.body, body.headers)).status).toBe(200)
  await waitIdle(worker, 30_000)
  await sleep(500)
  await waitIdle(worker, 30_000)

  const summary = emu.summary()
  expect(summary.notDone, JSON.stringify(emu.statuses({}).filter((s) => s.status !== 'DONE').slice(0, 3))).toBe(0)
  for (const s of emu.statuses({ stringIds: edited })) expect(s, JSON.stringify(s)).toMatchObject({ status: 'DONE', output: sample.passOutput })
  expect(summary.wrongOutput, JSON.stringify(summary.examples.wrong.slice(0, 3))).toBe(0)
  expect(emu.statuses({}).filter((s) => s.answered > s.arrivals)).toEqual([])
  expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
}, 60_000)
