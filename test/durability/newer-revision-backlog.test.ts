// A translator edits a string's source (a new revision) while the worker still owes the service its
// older revision, acknowledged and waiting on disk: here the worker was killed with its journal
// larger than its window, so after the restart every string waits in the backlog. The service then
// sends the new revision; it is journaled behind the older one, which is read back first, checked
// with the service (NEED_PROCESS: it waits for the string) and run on the old source with the new
// translation, and its output landed; the new revision, read later, was absorbed (or its PATCH came
// second and changed nothing). The promise (docs/reliability.md) is the newest revision's output:
// the revisions past the first are noted as they go to disk, and the older copy is stale.
import { afterAll, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { freePort, killWorker, spawnWorker, startAckProxy, tempDir, waitIdle, workerEnv, type AckProxy, type ChildWorker } from './harness.js'

let emu: Emulator
let proxy: AckProxy
let worker: ChildWorker | undefined
const data = tempDir('newer-revision-backlog')
afterAll(async () => {
  await killWorker(worker)
  await proxy?.close()
  await emu?.stop()
  data.remove()
})

it('after a crash, a new revision of a string whose older one waits on disk ends with the new revision\'s output', async () => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  emu = await startEmulator({ strings: 400, languages: ['de'], seed: 3, defectRate: 0, moduleKey: 'qa-gate', redirectUris: [`${baseUrl}/oauth/callback`], settings: { batchSize: 50, parallel: 2, retries: 40, retryDelayMs: 250 } })
  const info = emu.info()
  const env = workerEnv({ baseUrl, dataDir: data.dir, emuUrl: emu.url, appSecret: info.appSecret, clientId: info.clientId, clientSecret: info.clientSecret, extra: { QUEUE_LIMIT: '40', CONCURRENCY: '1' } })
  worker = await spawnWorker(env, port)
  await connectThroughBrowser(worker.url, info.organization.domain)
  proxy = await startAckProxy(worker.url)
  emu.configure({ webhookUrl: `${proxy.url}/webhooks`, faults: { latencyMs: [20, 40] } })
  const { sample } = emu.org()
  // Plain strings without numbers, among the last delivered (at the tail of the backlog).
  const edited = sample.strings.filter((s) => s.type === 'text' && !/\d/.test(s.text) && !/\d/.test(s.translations.get('de')!.text)).slice(-10).map((s) => s.id)
  expect(edited).toHaveLength(10)
  const first = await emu.sendPending()
  expect(first.failedBatches).toBe(0)
  await killWorker(worker)
  // The source gains a number, and so does the translation: the new revision passes; the old
  // source with the new translation fails the numbers check.
  for (const id of edited) {
    const s = sample.byId.get(id)!
    s.revision += 1
    s.text += ' 42'
    const t = s.translations.get('de')!
    t.text += ' 42'
    t.translationId += 1_000_000
  }
  worker = await spawnWorker(env, port)
  // The edit is a new revision: the service sends those strings again, though their older
  // revision's delivery was confirmed (the emulator's sender does not repeat a confirmed arrival
  // by itself).
  const again = await emu.sendPending({ stringIds: edited, redeliver: true })
  expect(again.events).toBe(edited.length)
  expect(again.failedBatches).toBe(0)
  await waitIdle(worker, 120_000)
  const summary = emu.summary()
  expect(summary.notDone).toBe(0)
  expect(emu.statuses({ stringIds: edited }).map((s) => s.output)).toEqual(edited.map(() => sample.passOutput))
  expect(summary.wrongOutput, JSON.stringify(summary.examples.wrong.slice(0, 3))).toBe(0)
}, 120_000)
