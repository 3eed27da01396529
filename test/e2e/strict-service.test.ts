// The worker against the strict, multi-organization emulator: the five failures of issue 15, one
// test each. They describe what the worker must do against the real service; each failed on the
// worker before the fix (see each test's comment, "Before the fix").
// Every test also asserts that the emulator saw no protocol mistake.
import { createHmac } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { loadPipelines } from '../durability/harness.js'
import { startTestWorker } from '../support/start-test-worker.js'

const run = it

const SECRET1 = 'secret-of-acme'
const SECRET2 = 'secret-of-globex'
const PATCH = 'PATCH /api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status'

let emu: Emulator | undefined
let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined

afterEach(async () => {
  await worker?.stop().catch(() => undefined)
  await emu?.stop()
  worker = undefined
  emu = undefined
})

/**
 * The emulator (acme, and globex when asked) and a real worker with the shipped pipelines,
 * reaching each organization under its own domain: API_URL = `${emu.url}/o/{organization_domain}`.
 */
async function setUp(o: { emulator: EmulatorOptions; appSecret: string }): Promise<{ emu: Emulator; worker: NonNullable<typeof worker> }> {
  emu = await startEmulator({ moduleKey: 'qa-gate', seed: 15, settings: { retries: 3, retryDelayMs: 100 }, ...o.emulator })
  const tokens = new Map<string, string>()
  for (const org of emu.organizations()) tokens.set(org.domain, (await emu.authorizeDirect({ organization: org.domain })).access_token)
  // APP_SECRET exactly as an operator writes it, parsed by the configuration loader.
  const { appSecrets } = loadConfig({ APP_SECRET: o.appSecret })
  worker = await startTestWorker({
    pipelines: await loadPipelines(),
    config: { apiUrl: emu.info().apiUrlTemplate, appSecrets },
    tokens: new StaticTokenProvider(tokens),
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
  return { emu, worker }
}

async function waitFor(what: string, done: () => boolean, timeoutMs: number, detail: () => unknown = () => emu?.progress()): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}; ${JSON.stringify(detail())}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const donePairs = (e: Emulator, languageId?: string, organization?: string) =>
  e.statuses({ status: 'DONE', ...(languageId ? { languageId } : {}), ...(organization ? { organization } : {}) }).length

describe('the worker against the strict service', () => {
  // Before the fix: the reporter takes 403 as permanent, bisects each group (hundreds of PATCHes) and marks
  // the strings finished; at the service they stay NEED_PROCESS for ever.
  run('a) a 2 s window of 403 on status updates: every string is reported after it, with few PATCHes per group', async () => {
    const { emu, worker } = await setUp({ emulator: { strings: 100, languages: ['de', 'fr', 'ru'] }, appSecret: SECRET1 })
    emu.configure({ appSecret: SECRET1 })
    emu.revoke(undefined, 2000)
    // One batch: one (step, language) group per language, so the bound below is per group.
    const report = await emu.sendPending({ batchSize: 300 })
    expect(report.delivered).toBe(report.batches)
    // The worker's back-off is capped near a minute: allow for one full wait after the window.
    await waitFor('every string DONE after the 403 window', () => emu.progress().done === 300, 80_000, () => ({
      progress: emu.progress(),
      refused403: Object.fromEntries(['de', 'fr', 'ru'].map((l) => [l, emu.patchRequests({ languageId: l, status: 403 })])),
      mistakes: emu.mistakes().length,
    }))
    const s = emu.summary()
    expect(s.notDone).toBe(0)
    expect(s.wrongOutput).toBe(0)
    // No bisection storm: a few requests per (step, language) group per attempt while refused.
    for (const languageId of ['de', 'fr', 'ru']) {
      expect(emu.patchRequests({ languageId, status: 403 }), `PATCHes refused with 403 in ${languageId}`).toBeLessThan(10)
    }
    // The emulator marks a string DONE before the worker has read the answer: wait for the worker.
    await worker.idle(10_000)
    expect(worker.stats().depth).toBe(0)
    expect(emu.mistakes()).toEqual([])
  }, 100_000)

  // The same failure through the other door: 401 that a refresh does not cure (the app was
  // disconnected for a while). The strings are held, not dropped, and reported afterwards. This
  // one passes on today's worker (held, rechecked every 10 s), so it is not guarded: a regression test.
  it('a) a 2 s window of 401 on every API call (a refresh does not help): every string is reported after it', async () => {
    const { emu } = await setUp({ emulator: { strings: 100, languages: ['de', 'fr', 'ru'] }, appSecret: SECRET1 })
    emu.configure({ appSecret: SECRET1 })
    emu.refuseTokens(undefined, 2000)
    const report = await emu.sendPending({ batchSize: 300 })
    expect(report.delivered).toBe(report.batches)
    await waitFor('every string DONE after the 401 window', () => emu.progress().done === 300, 80_000)
    expect(emu.summary().wrongOutput).toBe(0)
    expect(emu.patchRequests({ status: 401 })).toBeLessThan(30)
    expect(emu.mistakes()).toEqual([])
  }, 100_000)

  // Before the fix: 404 is taken as permanent and bisected: about 2N requests for each group.
  run('b) a language taken out of the step: its group dropped once, without bisection; the other languages DONE', async () => {
    const { emu, worker } = await setUp({ emulator: { strings: 100, languages: ['de', 'fr', 'ru'] }, appSecret: SECRET1 })
    emu.configure({ appSecret: SECRET1 })
    // Slow API answers keep the worker's first PATCH after the language has left the step.
    emu.configureFaults({ latencyMs: [300, 300] })
    // One batch: one (step, language) group per language.
    const report = await emu.sendPending({ batchSize: 300 })
    expect(report.delivered).toBe(report.batches)
    emu.removeLanguage('ru')
    await waitFor('de and fr DONE', () => donePairs(emu, 'de') === 100 && donePairs(emu, 'fr') === 100, 30_000)
    await worker.idle(30_000)
    await worker.reporter.flush()
    // The ru group met 404 on its first attempt and was dropped: a request or a few (if the
    // worker flushed the group in parts), never a bisection (today: about 2N).
    const refused = emu.patchRequests({ languageId: 'ru', status: 404 })
    expect(refused).toBeGreaterThan(0)
    expect(refused).toBeLessThanOrEqual(5)
    expect(emu.patchRequests({ languageId: 'ru' })).toBe(refused)
    expect(emu.statuses({ languageId: 'ru', status: 'NEED_PROCESS' })).toHaveLength(100)
    expect(emu.mistakes()).toEqual([])
  }, 60_000)

  // Before the fix: de-duplication remembers finished strings for ten minutes by source revision, so a
  // string that comes back with the same revision is swallowed and never processed again.
  run('c) a string sent back after it was DONE (same revision, changed translation) is processed again', async () => {
    const { emu, worker } = await setUp({ emulator: { strings: 60, languages: ['de'], defectRate: 0.5 }, appSecret: SECRET1 })
    emu.configure({ appSecret: SECRET1 })
    await emu.sendPending()
    await waitFor('first pass DONE', () => emu.progress().done === 60, 30_000)
    await worker.idle(30_000)
    const sentBackIds = emu.statuses({ output: 'translated' }).map((s) => s.stringId)
    expect(sentBackIds.length).toBeGreaterThan(10)
    // The reviewer sends the failed ones back; the translator fixes them; they reach the step again.
    expect(emu.sendBack({ stringIds: sentBackIds })).toHaveLength(sentBackIds.length)
    const again = await emu.sendPending()
    expect(again.events).toBe(sentBackIds.length)
    expect(again.delivered).toBe(again.batches)
    await waitFor('second arrivals answered', () => emu.progress().done === 60, 30_000, () => ({
      progress: emu.progress(),
      sentBack: sentBackIds.length,
      stillWaiting: emu.statuses({ status: 'NEED_PROCESS' }).length,
      patchesAfterSendBack: emu.statuses({ stringIds: sentBackIds }).reduce((n, v) => n + v.patches, 0) - sentBackIds.length,
    }))
    for (const view of emu.statuses({ stringIds: sentBackIds })) {
      expect(view).toMatchObject({ status: 'DONE', output: 'approved', arrivals: 2, answered: 2 })
    }
    expect(emu.summary().wrongOutput).toBe(0)
    expect(emu.mistakes()).toEqual([])
  }, 60_000)

  // Before the fix: one event that fails validation makes the whole batch 400; after the sender's retries
  // the 99 good strings are FAILED.
  run('d) a batch of 100 with one event lacking its string id: answered 2XX, the 99 good strings DONE', async () => {
    const { emu } = await setUp({ emulator: { strings: 100, languages: ['de'] }, appSecret: SECRET1 })
    emu.configure({ appSecret: SECRET1 })
    const bad = emu.sample.strings[37]!.id
    const report = await emu.sendPending({ batchSize: 100, malformedStringIds: [bad] })
    expect(report.batches).toBe(1)
    expect(report.non2xx).toEqual({})
    expect(report.failedStrings).toEqual([])
    expect(report.delivered).toBe(1)
    await waitFor('the 99 good strings DONE', () => emu.progress().done === 99, 30_000)
    expect(emu.status(bad, 'de')!.status).toBe('NEED_PROCESS')
    expect(emu.summary().wrongOutput).toBe(0)
    expect(emu.mistakes()).toEqual([])
  }, 60_000)

  // Before the fix: the organization is taken from the unsigned headers, so a replayed body is new work
  // under the forged name.
  run('e) a signed body replayed with another X-Service-Id / X-Service-Domain is refused with 401', async () => {
    // One plain secret for every organization: the signature holds, only the headers lie.
    const { emu, worker } = await setUp({
      emulator: { strings: 10, languages: ['de'], appSecret: SECRET1, organizations: [{ id: '300000', domain: 'globex', appSecret: SECRET1, strings: 10, languages: ['de'], projectId: 77, stepId: 8001 }] },
      appSecret: SECRET1,
    })
    const writerBody = await capturedBody(emu, 'acme')
    const replay = await emu.sendRaw({ body: writerBody, headers: { 'X-Service-Id': '300000', 'X-Service-Domain': 'globex' }, url: `${worker.url}/webhooks` })
    expect(replay.status).toBe(401)
    const health = await (await fetch(`${worker.url}/healthz`)).text()
    expect(health).not.toMatch(/globex/)
    // The same body with its own headers is accepted.
    const genuine = await emu.sendRaw({ body: writerBody, url: `${worker.url}/webhooks` })
    expect(genuine.status).toBeLessThan(300)
    expect(emu.mistakes()).toEqual([])
  }, 60_000)

  // Before the fix: APP_SECRET has no ORG_ID=SECRET form (every entry is one secret for everybody), so
  // nothing is accepted, and any configured secret would validate any organization.
  run("e) two organizations, each with its own secret: each one's batches are accepted only with its own secret", async () => {
    const { emu } = await setUp({
      emulator: { strings: 20, languages: ['de', 'fr'], appSecret: SECRET1, organizations: [{ id: '300000', domain: 'globex', appSecret: SECRET2, strings: 15, languages: ['ja'], projectId: 77, stepId: 8001 }] },
      appSecret: `200000=${SECRET1},300000=${SECRET2}`,
    })
    const report = await emu.sendPending()
    expect(report.non2xx).toEqual({})
    expect(report.delivered).toBe(report.batches)
    await waitFor('both organizations DONE', () => emu.progress('acme').done === 40 && emu.progress('globex').done === 15, 30_000)
    // globex's body signed with acme's secret (and acme's body with globex's): refused.
    const globexBody = await capturedBody(emu, 'globex')
    const crossSigned = await emu.sendRaw({ body: globexBody, organization: 'globex', headers: { 'X-Service-Signature': signWith(SECRET1, globexBody) } })
    expect(crossSigned.status).toBe(401)
    const acmeBody = await capturedBody(emu, 'acme')
    expect((await emu.sendRaw({ body: acmeBody, organization: 'acme', headers: { 'X-Service-Signature': signWith(SECRET2, acmeBody) } })).status).toBe(401)
    expect((await emu.sendRaw({ body: acmeBody, organization: 'acme' })).status).toBeLessThan(300)
    expect(emu.mistakes()).toEqual([])
  }, 60_000)
})

function signWith(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/** A real batch body of one organization as the emulator sends it (captured by a one-off receiver). */
async function capturedBody(e: Emulator, organization?: string): Promise<string> {
  let captured = ''
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      captured = Buffer.concat(chunks).toString('utf8')
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`
    await e.sendPending({ url, limit: 2, anyStatus: true, ...(organization ? { organization } : {}) })
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return captured
}
