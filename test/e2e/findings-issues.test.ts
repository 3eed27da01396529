// Findings reach people, against the strict emulator: every string qa-gate sends back carries
// exactly one open issue naming its findings; once the fixed string passes, none stays open; an
// emulator that refuses comments changes no status; the findings log answers "why" for any string.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import type { Summary } from '../../src/emulator/status-store.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { createFindingsRouter } from '../../src/server/findings-routes.js'
import { findingsLogFor } from '../../src/worker.js'
import { loadPipelines } from '../durability/harness.js'
import { startTestWorker } from '../support/start-test-worker.js'
import { createStores } from '../../src/store/create-stores.js'
import { loadConfig } from '../../src/config/load-config.js'

const SECRET = 'findings-app-secret'

async function setUp(refuse?: number) {
  const emu = await startEmulator({ strings: 120, languages: ['de', 'fr'], appSecret: SECRET, seed: 11, moduleKey: 'qa-gate' })
  if (refuse) emu.refuseComments(refuse)
  const token = (await emu.authorizeDirect()).access_token
  const stores = await createStores('memory://')
  const findings = findingsLogFor(loadConfig({}, {}), stores)
  const config = { apiUrl: emu.info().apiUrlTemplate, appSecrets: [SECRET] }
  const worker = await startTestWorker({
    pipelines: await loadPipelines(), config, stores, findings,
    tokens: new StaticTokenProvider(new Map([[emu.info().organization.domain, token]])),
    routers: [createFindingsRouter({ config: loadConfig({}, {}), findings })],
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
  return { emu, worker }
}

async function runAll(emu: Emulator, worker: Awaited<ReturnType<typeof startTestWorker>>, o: { findings?: boolean } = {}) {
  const report = await emu.sendPending({ batchSize: 60 })
  expect(report.delivered).toBe(report.batches)
  await worker.idle(60_000)
  await worker.reporter.flush()
  // With comments refused, issue requests back off and retry for a while; statuses don't wait.
  if (o.findings !== false) await worker.findingsIdle()
}

const outcomes = (s: Summary) => Object.fromEntries(Object.entries(s.languages).map(([l, v]) => [l, v.byOutput]))

describe('issues at the service for strings sent back', () => {
  let emu: Emulator
  let worker: Awaited<ReturnType<typeof startTestWorker>>
  let firstPass: Summary
  beforeAll(async () => {
    ;({ emu, worker } = await setUp())
    await runAll(emu, worker)
    firstPass = emu.summary()
  })
  afterAll(async () => {
    await worker?.stop()
    await emu?.stop()
  })

  it('raises exactly one open issue on each string sent back, naming its findings, and none on approved ones', async () => {
    expect(firstPass.notDone).toBe(0)
    expect(firstPass.wrongOutput).toBe(0)
    const sentBack = emu.statuses({ status: 'DONE', output: 'translated' })
    expect(sentBack.length).toBeGreaterThan(10)
    for (const s of sentBack) {
      const open = emu.openIssues(s.stringId, s.languageId)
      expect(open, `string ${s.stringId} (${s.languageId})`).toHaveLength(1)
      expect(open[0]!.issueType).toMatch(/^(translation_mistake|source_mistake)$/)
      const [entry] = (await (await fetch(`${worker.url}/findings?stringId=${s.stringId}&languageId=${s.languageId}`)).json() as { data: Array<{ findings: Array<{ check: string; severity: string; message: string }> }> }).data
      const errors = entry!.findings.filter((f) => f.severity === 'error')
      expect(errors.length).toBeGreaterThan(0)
      // The issue names the findings: each error's message is in it.
      for (const f of errors.slice(0, 20)) expect(open[0]!.text).toContain(f.message)
    }
    for (const s of emu.statuses({ status: 'DONE', output: 'approved' }).slice(0, 40)) expect(emu.openIssues(s.stringId, s.languageId)).toHaveLength(0)
    expect(emu.mistakes()).toEqual([])
  })

  it('answers "why" for every string of the run with something to explain, as JSON and on the page; a clean pass makes no entry', async () => {
    const why = async (stringId: number) => ((await (await fetch(`${worker.url}/findings?stringId=${stringId}`)).json()) as { data: Array<{ languageId: string; outcome: string; findings: unknown[] }> }).data
    let explained = 0
    let clean = 0
    for (const s of emu.statuses({ status: 'DONE' })) {
      const entry = (await why(s.stringId)).find((d) => d.languageId === s.languageId)
      // Sent back: always an entry. Passed: an entry only with a finding (a warning, say).
      if (s.output !== 'approved') expect(entry, `string ${s.stringId} (${s.languageId})`).toMatchObject({ outcome: s.output, findings: expect.arrayContaining([expect.anything()]) })
      if (entry) {
        explained++
        expect(entry.outcome).toBe(s.output)
        expect(entry.findings.length).toBeGreaterThan(0)
      } else clean++
    }
    expect(explained).toBeGreaterThan(0)
    expect(clean).toBeGreaterThan(0)
    const sentBack = emu.statuses({ status: 'DONE', output: 'translated' })[0]!
    const page = await fetch(`${worker.url}/findings?stringId=${sentBack.stringId}`, { headers: { accept: 'text/html' } })
    expect(page.headers.get('content-type')).toMatch(/html/)
    expect(await page.text()).toContain(String(sentBack.stringId))
  })

  it('resolves the issues once the fixed strings pass, and raises no second one for the same findings', async () => {
    const sentBack = emu.statuses({ status: 'DONE', output: 'translated' })
    // Half of the plain ones come back unchanged (same findings): no second issue. The rest come
    // back fixed. (Not plural strings: sendBack's text becomes every plural form, which would fill
    // the emptied plural form of a plurals defect.)
    const plain = sentBack.filter((s) => !emu.sample.byId.get(s.stringId)!.hasPlurals)
    const same = plain.slice(0, Math.ceil(plain.length / 2))
    const fixed = sentBack.filter((s) => !same.includes(s))
    for (const s of same) emu.sendBack({ stringIds: [s.stringId], languageId: s.languageId, text: emu.sample.byId.get(s.stringId)!.translations.get(s.languageId)!.text })
    for (const s of fixed) emu.sendBack({ stringIds: [s.stringId], languageId: s.languageId })
    const before = emu.comments({ type: 'issue' }).length
    await runAll(emu, worker)
    expect(emu.summary().notDone).toBe(0)
    for (const s of same) expect(emu.openIssues(s.stringId, s.languageId)).toHaveLength(1)
    for (const s of fixed) {
      expect(emu.status(s.stringId, s.languageId)!.output).toBe('approved')
      expect(emu.openIssues(s.stringId, s.languageId), `string ${s.stringId} (${s.languageId})`).toHaveLength(0)
    }
    expect(emu.comments({ type: 'issue' }).length).toBe(before)
    expect(emu.mistakes()).toEqual([])
  })

  for (const status of [500, 403]) {
    it(`changes no status when the service refuses comments (${status})`, async () => {
      const other = await setUp(status)
      try {
        await runAll(other.emu, other.worker, { findings: false })
        const s = other.emu.summary()
        expect(s.notDone).toBe(0)
        expect(s.wrongOutput).toBe(0)
        expect(outcomes(s)).toEqual(outcomes(firstPass))
        expect(other.emu.comments({ type: 'issue' })).toEqual([])
        expect(other.emu.mistakes()).toEqual([])
        if (status === 403) {
          // A 403 pauses raising in the project: the requests in flight when it came, not one per
          // string sent back (dozens here).
          await other.worker.findingsIdle()
          const refused = other.emu.requestCount('GET /api/v2/projects/:projectId/comments', 403) + other.emu.requestCount('POST /api/v2/projects/:projectId/comments', 403)
          expect(refused).toBeGreaterThan(0)
          expect(refused).toBeLessThanOrEqual(loadConfig({}, {}).commentsMaxInFlight)
          const sentBack = Object.values(s.languages).flatMap((l) => Object.entries(l.byOutput)).filter(([output]) => output !== 'approved').reduce((n, [, count]) => n + count, 0)
          expect(sentBack).toBeGreaterThan(10)
        }
      } finally {
        await other.worker.stop()
        await other.emu.stop()
      }
    })
  }
})
