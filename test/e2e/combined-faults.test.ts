// Scenarios that combine the platform's inconvenient behaviours (platform notes): one worker, a
// strict emulator, faults of one organization at a time (403 for a while, 429 with Retry-After,
// lost answers, 5XX), strings sent back and fixed while an earlier arrival's update is in flight or
// held, and a Resend of FAILED strings the worker may still hold an older copy of. What must hold
// every time: every string ends DONE on the port its current translation deserves, at most one
// output per arrival (no `second-output` / `patch-not-waiting` mistake), and one organization's
// trouble costs another nothing.
import { afterEach, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { loadPipelines } from '../durability/harness.js'
import { startTestWorker } from '../support/start-test-worker.js'

const SECRET = 'combined-faults-secret'
let emu: Emulator | undefined
let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined
const timers: NodeJS.Timeout[] = []

afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t)
  await worker?.stop().catch(() => undefined)
  await emu?.stop()
  worker = undefined
  emu = undefined
})

type Extra = { id: string; domain: string; strings: number; languages: string[]; seed: number }

async function setUp(o: { strings: number; languages: string[]; seed: number; organizations?: Extra[]; retries?: number }) {
  const e = await startEmulator({
    moduleKey: 'qa-gate', seed: o.seed, strings: o.strings, languages: o.languages, appSecret: SECRET, defectRate: 0.4,
    settings: { retries: o.retries ?? 3, retryDelayMs: 100 },
    organizations: (o.organizations ?? []).map((x) => ({ ...x, appSecret: SECRET, defectRate: 0.4 })),
  })
  emu = e
  const tokens = new Map<string, string>()
  for (const org of e.organizations()) tokens.set(org.domain, (await e.authorizeDirect({ organization: org.domain })).access_token)
  const w = await startTestWorker({
    pipelines: await loadPipelines(),
    config: { apiUrl: e.info().apiUrlTemplate, appSecrets: [SECRET] },
    tokens: new StaticTokenProvider(tokens),
    heldRecheckMs: 50,
    heldBaseDelayMs: 200,
  })
  worker = w
  e.configure({ webhookUrl: `${w.url}/webhooks` })
  return { emu: e, worker: w }
}

async function waitFor(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(emu?.organizations().map((o) => ({ [o.domain]: emu?.progress(o.domain) })))} mistakes=${JSON.stringify(emu?.mistakes().slice(0, 3))}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Every string of the organization DONE on the port its current translation deserves, one output per arrival. */
function assertFinished(e: Emulator, org: string): void {
  const summary = e.summary(org)
  expect(summary.notDone, `${org}: not done ${JSON.stringify(e.statuses({ organization: org }).filter((s) => s.status !== 'DONE').slice(0, 3))}`).toBe(0)
  expect(summary.wrongOutput, `${org}: wrong ${JSON.stringify(summary.examples.wrong.slice(0, 3))}`).toBe(0)
  const over = e.statuses({ organization: org }).filter((s) => s.answered > s.arrivals)
  expect(over.slice(0, 3), `${org}: outputs per arrival`).toEqual([])
}

it('three organizations: one forbidden for a while, one rate-limited with Retry-After, one healthy', async () => {
  const { emu, worker } = await setUp({
    strings: 1500, languages: ['de'], seed: 31,
    organizations: [
      { id: '300000', domain: 'globex', strings: 80, languages: ['fr'], seed: 32 },
      { id: '400000', domain: 'initech', strings: 80, languages: ['ja', 'ru'], seed: 33 },
    ],
  })
  emu.revoke('acme')
  emu.configureFaults({ rateLimitRate: 0.7, retryAfterSeconds: 1, latencyMs: [5, 20] }, 'globex')
  emu.configureFaults({ latencyMs: [5, 20] }, 'initech')
  // The forbidden organization's large batches first, then the others'.
  const report = await emu.sendPending({ batchSize: 250, organization: 'acme' })
  expect(report.delivered).toBe(report.batches)
  for (const org of ['globex', 'initech']) {
    const r = await emu.sendPending({ batchSize: 50, organization: org })
    expect(r.delivered).toBe(r.batches)
  }
  const started = Date.now()
  await waitFor('the healthy organization done', () => emu.progress('initech').done === 160, 15_000)
  const healthyMs = Date.now() - started
  expect(healthyMs).toBeLessThan(10_000)
  // Meanwhile the forbidden organization got nothing through, and lost nothing.
  expect(emu.progress('acme').done).toBe(0)
  // A reviewer sends finished strings of the rate-limited one back; the translator fixes them.
  await waitFor('some of globex done', () => emu.progress('globex').done >= 20, 20_000)
  const back = emu.sendBack({ organization: 'globex', stringIds: emu.statuses({ organization: 'globex', status: 'DONE' }).slice(0, 15).map((s) => s.stringId) })
  expect(back.length).toBeGreaterThan(0)
  await emu.sendPending({ organization: 'globex', batchSize: 50 })
  await new Promise((r) => setTimeout(r, 1500))
  emu.restore('acme')
  emu.configureFaults(null, 'globex')
  await waitFor('every string DONE', () => ['acme', 'globex', 'initech'].every((o) => emu.progress(o).done === emu.progress(o).total), 40_000)
  await worker.idle(30_000)
  await worker.reporter.flush()
  for (const org of ['acme', 'globex', 'initech']) assertFinished(emu, org)
  expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
}, 60_000)

it('a string sent back and fixed while its earlier update is in flight or held (lost answers, 5XX), several times in a row', async () => {
  const { emu, worker } = await setUp({ strings: 30, languages: ['de'], seed: 41 })
  const defective = emu.statuses({}).filter((s) => s.defect !== null).map((s) => s.stringId)
  expect(defective.length).toBeGreaterThan(5)
  for (let round = 0; round < 4; round++) {
    // Every update lands, its answer lost; then a burst of 5XX; strings DONE meanwhile are sent
    // back (the translator saves again), so each arrival's update is in flight or held when the next comes.
    emu.configureFaults({ nextLostAnswers: [502, 502, 504], nextStatuses: [500, 503, 500], latencyMs: [20, 80] })
    let sentBack = 0
    const timer = setInterval(() => {
      const done = emu.statuses({ status: 'DONE' }).map((s) => s.stringId)
      if (done.length) sentBack += emu.sendBack({ stringIds: done }).length
      void emu.sendPending({ batchSize: 40 })
    }, 30)
    timers.push(timer)
    await emu.sendPending({ batchSize: 40 })
    await waitFor(`round ${round}: strings sent back`, () => sentBack >= 30, 20_000)
    clearInterval(timer)
  }
  emu.configureFaults(null)
  emu.configure({ faults: { nextLostAnswers: [], nextStatuses: [], latencyMs: [0, 0] } })
  await emu.sendPending({ batchSize: 40 })
  await waitFor('every string DONE', () => emu.progress().done === 30, 30_000)
  await worker.idle(30_000)
  await worker.reporter.flush()
  await new Promise((r) => setTimeout(r, 500))
  await worker.idle(30_000)
  assertFinished(emu, 'acme')
  expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
}, 60_000)

it('a Resend of FAILED strings while the worker still holds an older copy of them', async () => {
  // The worker acknowledges the strings but may not report them (403: held); the service's view
  // of that arrival is a failed delivery (FAILED); a Resend brings them back while the worker
  // still holds its copy.
  const { emu, worker } = await setUp({ strings: 40, languages: ['de'], seed: 51, retries: 1 })
  // The worker holds every string (403), after acknowledging them.
  emu.revoke()
  const first = await emu.sendPending({ batchSize: 40 })
  expect(first.delivered).toBe(first.batches)
  await new Promise((r) => setTimeout(r, 300))
  // The same strings delivered again to an address that fails: they become FAILED at the service
  // (a second sender path, e.g. a re-delivery the platform gave up on).
  const failed = await emu.sendPending({ anyStatus: true, batchSize: 40, url: 'http://127.0.0.1:9/webhooks' })
  expect(failed.delivered).toBe(0)
  expect(emu.statuses({ status: 'FAILED' }).length).toBe(40)
  // The manager presses Resend: a new arrival, on an unchanged translation: the held decision
  // stands, and the Resend's delivery gets no second output.
  expect(emu.resend()).toBe(40)
  emu.restore()
  await emu.sendPending({ batchSize: 40 })
  await waitFor('every string DONE', () => emu.progress().done === 40, 30_000)
  await worker.idle(30_000)
  await worker.reporter.flush()
  await new Promise((r) => setTimeout(r, 500))
  assertFinished(emu, 'acme')
  expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
}, 60_000)

it('a Resend of FAILED strings the translator fixed meanwhile, while the worker holds its decision on the old translation', async () => {
  const { emu, worker } = await setUp({ strings: 40, languages: ['de'], seed: 52, retries: 1 })
  const defective = emu.statuses({}).filter((s) => s.defect !== null).map((s) => s.stringId)
  expect(defective.length).toBeGreaterThan(5)
  // The worker acknowledges the strings and decides them, but may not report them (403): held.
  emu.revoke()
  const first = await emu.sendPending({ batchSize: 40 })
  expect(first.delivered).toBe(first.batches)
  await waitFor('the decisions held', () => emu.patchRequests({ status: 403 }) > 0, 10_000)
  // The service's view of that delivery is a failure (a repeat it gave up on): FAILED.
  const failed = await emu.sendPending({ anyStatus: true, batchSize: 40, url: 'http://127.0.0.1:9/webhooks' })
  expect(failed.delivered).toBe(0)
  expect(emu.statuses({ status: 'FAILED' }).length).toBe(40)
  // The translator fixes the defective ones; the manager presses Resend: new arrivals, on the
  // fixed translations (platform notes: each arrival is new work, on the translation as it is now).
  expect(emu.editTranslations({ stringIds: defective }).length).toBe(defective.length)
  expect(emu.resend()).toBe(40)
  await emu.sendPending({ batchSize: 40 })
  emu.restore()
  await waitFor('every string DONE', () => emu.progress().done === 40, 30_000)
  await worker.idle(30_000)
  await worker.reporter.flush()
  await new Promise((r) => setTimeout(r, 500))
  for (const v of emu.statuses({ stringIds: defective })) expect(v, JSON.stringify(v)).toMatchObject({ status: 'DONE', output: emu.sample.passOutput })
  assertFinished(emu, 'acme')
  expect(emu.mistakes(), JSON.stringify(emu.mistakes().slice(0, 3))).toEqual([])
}, 60_000)

it('sent back again and again, fixed and broken in turn, while each earlier update is in flight with its answer lost', async () => {
  const { emu, worker } = await setUp({ strings: 30, languages: ['de'], seed: 43 })
  const defective = emu.statuses({}).filter((s) => s.defect !== null).map((s) => s.stringId)
  expect(defective.length).toBeGreaterThan(5)
  for (let round = 0; round < 4; round++) {
    // The PATCH of every update lands slowly and its answer is lost: the string is DONE at the
    // service while the worker has not heard; the reviewer sends it back with the translation
    // fixed (even rounds) or broken again (odd rounds) before the worker's recheck.
    emu.configure({ faults: { lostAnswerRate: 1, latencyMs: [30, 120] } })
    const breakAgain = round % 2 === 1
    const seen = new Set<number>()
    const timer = setInterval(() => {
      const done = emu.statuses({ stringIds: defective, status: 'DONE' }).map((s) => s.stringId).filter((id) => !seen.has(id))
      for (const m of emu.sendBack({ stringIds: done, breakAgain })) seen.add(m.stringId)
    }, 5)
    timers.push(timer)
    await emu.sendPending({ batchSize: 40 })
    await waitFor(`round ${round}: the defective strings sent back`, () => seen.size === defective.length, 20_000)
    clearInterval(timer)
    emu.configure({ faults: { lostAnswerRate: 0, latencyMs: [0, 0] } })
    await emu.sendPending({ batchSize: 40 })
    await waitFor(`round ${round}: every string DONE`, () => emu.progress().done === 30, 30_000)
    await worker.idle(30_000)
    await worker.reporter.flush()
    await worker.idle(30_000)
    const wrong = emu.statuses({ wrong: true })
    expect(wrong.slice(0, 3), `round ${round}`).toEqual([])
    expect(emu.mistakes(), `round ${round}: ${JSON.stringify(emu.mistakes().slice(0, 3))}`).toEqual([])
    // The round's translations decide: fixed (passing) after even rounds, broken again after odd ones.
    const expected = breakAgain ? emu.sample.failOutput : emu.sample.passOutput
    for (const v of emu.statuses({ stringIds: defective })) expect(v, JSON.stringify(v)).toMatchObject({ status: 'DONE', output: expected })
  }
  expect(emu.patchRequests({ status: 502 })).toBeGreaterThan(0)
  assertFinished(emu, 'acme')
}, 60_000)
