// Issue 8, crash test: the worker runs as its own process (`switchyard serve`, SQLite store) and
// is killed with SIGKILL three times at random moments while 5,000 (string, language) pairs flow
// through it. After each kill it is restarted on the same store; at the end every string is DONE
// on the expected port, and no string the worker acknowledged ever had to be sent again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { seededRandom } from '../support/seed.js'
import { PAIR, freePort, waitIdle, killWorker, sleep, spawnWorker, startAckProxy, tempDir, waitFor, workerEnv, type AckProxy, type ChildWorker } from './harness.js'

const STRINGS = 2500
const LANGUAGES = ['de', 'fr']
const KILLS = 3
// The kill moments come from the run's seed: a failure prints TEST_SEED and replays with it.
const random = seededRandom('crash kill moments')

let emu: Emulator
let proxy: AckProxy
let worker: ChildWorker | undefined
const data = tempDir('crash')

afterAll(async () => {
  await killWorker(worker)
  await proxy?.close()
  await emu?.stop()
  data.remove()
})

describe.sequential('crash: SIGKILL during a run loses nothing acknowledged', () => {
  let port: number
  let env: Record<string, string>

  beforeAll(async () => {
    port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    emu = await startEmulator({
      strings: STRINGS,
      languages: LANGUAGES,
      seed: 11,
      moduleKey: 'qa-gate',
      redirectUris: [`${baseUrl}/oauth/callback`],
      // The service retries an unanswered batch; enough tries to outlast a restart on a busy machine.
      settings: { batchSize: 50, parallel: 3, retries: 80, retryDelayMs: 250 },
    })
    const info = emu.info()
    env = workerEnv({ baseUrl, dataDir: data.dir, emuUrl: emu.url, appSecret: info.appSecret, clientId: info.clientId, clientSecret: info.clientSecret })
    worker = await spawnWorker(env, port)
    await connectThroughBrowser(worker.url, info.organization.domain)
    proxy = await startAckProxy(worker.url)
    emu.configure({ webhookUrl: `${proxy.url}/webhooks` })
  })

  it(`${STRINGS * LANGUAGES.length} pairs, ${KILLS} SIGKILLs and restarts: every string DONE, none acknowledged resent`, async () => {
    const total = STRINGS * LANGUAGES.length
    const sending = emu.sendPending()
    const kills: Array<{ acked: number; journal?: number; depth?: number }> = []
    for (let k = 0; k < KILLS; k++) {
      // A random moment while strings are still arriving: after a random share of them was acknowledged.
      const target = Math.floor(total * (0.15 + 0.25 * k + random() * 0.15))
      await waitFor(`${target} acknowledged strings`, () => proxy.acked.size >= target, 90_000, 20)
      await sleep(random() * 150)
      const h = await worker!.health().catch(() => undefined)
      worker!.proc.kill('SIGKILL')
      await worker!.exited
      kills.push({ acked: proxy.acked.size, journal: h?.journal, depth: h?.queue.depth })
      worker = await spawnWorker(env, port)
    }
    const first = await sending
    // Strings the worker never acknowledged may have become FAILED (every retry hit a dead worker)
    // or be left NEED_PROCESS; they are sent again, as a manager's Resend or the service's next
    // periodic batch would. Before each resend the worker must have finished all it acknowledged.
    const resent = new Set<string>()
    let rounds = 0
    for (;;) {
      await waitIdle(worker!)
      const pending = [...emu.statuses({ status: 'NEED_PROCESS' }), ...emu.statuses({ status: 'FAILED' })]
      if (pending.length === 0) break
      for (const s of pending) {
        const pair = PAIR(s.stringId, s.languageId)
        expect(proxy.acked.has(pair), `string ${pair} was acknowledged but is ${s.status} at the service`).toBe(false)
        resent.add(pair)
      }
      expect(++rounds, 'resend rounds').toBeLessThanOrEqual(5)
      emu.resend()
      await emu.sendPending()
    }

    const summary = emu.summary()
    console.log(`crash: kills at ${JSON.stringify(kills)}; first pass ${first.delivered}/${first.batches} batches delivered, ${first.attempts} POSTs, ${first.failedStrings.length} strings FAILED; ${resent.size} never-acknowledged strings resent in ${rounds} rounds; ${summary.patchOperations} status operations for ${total} pairs`)
    expect(kills).toHaveLength(KILLS)
    expect(summary.notDone, JSON.stringify(summary.examples)).toBe(0)
    expect(summary.wrongOutput, JSON.stringify(summary.examples.wrong.slice(0, 3))).toBe(0)
    expect(summary.conflicting).toBe(0)
    expect(proxy.acked.size).toBe(total)
    // Replayed strings are checked with the service first: none reported after it was DONE.
    expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
    // At least one kill hit the worker while it held acknowledged, unfinished work (what replay is for).
    expect(kills.some((k) => (k.journal ?? 0) > 0 || (k.depth ?? 0) > 0), JSON.stringify(kills)).toBe(true)
  }, 170_000)
})
