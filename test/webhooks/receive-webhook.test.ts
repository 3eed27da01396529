import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { errorOf, recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { webhookWorkers } from '../support/webhook-workers.js'
import { decodeThreadFile } from '../../src/webhooks/decode-pool.js'

const threadModuleBuilt = decodeThreadFile() !== undefined
const workers = webhookWorkers()
const { running } = workers

async function worker(config = {}) {
  const { w, service, send } = await workers.worker(config)
  return { w, service, post: send }
}

const batch = (n: number, from = 1) => JSON.stringify({ events: Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: from + i })) })

describe('POST /webhooks', () => {
  it('accepts a signed batch, queues every string and reports it', async () => {
    const { w, service, post } = await worker()
    const res = await post(signedRequest(batch(3), SECRET))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ accepted: 3, duplicates: 0 })
    await w.idle()
    expect(service.patches).toHaveLength(1)
    expect(service.patches[0]!.ops.map((o) => o.path).sort()).toEqual(['/1/output', '/2/output', '/3/output'])
    expect(service.patches[0]!.url).toContain('/api/v2/projects/7/workflow-steps/11/languages/de/status')
  })

  it('refuses a missing signature or module key with 400, nothing queued', async () => {
    const { w, post } = await worker()
    const req = signedRequest(batch(1), SECRET)
    const noSig = { ...req, headers: { ...req.headers, 'X-Service-Signature': '' } }
    expect((await post(noSig)).status).toBe(400)
    const noKey = { ...req, headers: { ...req.headers, 'X-Module-Key': '' } }
    const res = await post(noKey)
    expect(res.status).toBe(400)
    expect((await errorOf(res)).message).toMatch(/Module-Key/)
    expect(w.stats().journal).toBe(0)
  })

  it('refuses a bad signature with 401 and parses nothing', async () => {
    const { w, post } = await worker()
    const req = signedRequest('{not json at all', 'another-secret')
    const res = await post(req)
    expect(res.status).toBe(401)
    expect((await errorOf(res)).code).toBe('bad_signature')
    expect(w.stats().journal).toBe(0)
  })

  it('refuses everything with 401 when no APP_SECRET is configured', async () => {
    const { post } = await worker({ appSecrets: [] })
    expect((await post(signedRequest(batch(1), SECRET))).status).toBe(401)
  })

  it('answers 400 with a reason to malformed JSON and to a batch that fails the schema', async () => {
    const { post } = await worker()
    const bad = await post(signedRequest('{"events": [', SECRET))
    expect(bad.status).toBe(400)
    expect((await errorOf(bad)).message).toMatch(/not valid JSON/)
    const noEvents = await post(signedRequest('{"items": []}', SECRET))
    expect(noEvents.status).toBe(400)
    expect((await errorOf(noEvents)).message).toMatch(/events/)
    const notArray = await post(signedRequest('{"events": {}}', SECRET))
    expect(notArray.status).toBe(400)
    expect((await errorOf(notArray)).message).toMatch(/events/)
  })

  it('takes the good events of a batch with a bad one, parks the bad one with "" when it names its string, and logs it with its index', async () => {
    const { w, service, post } = await worker()
    const noProject = recalculationEvent({ stringId: 7 }) as { stringStatus: { translation: Record<string, unknown> } }
    delete noProject.stringStatus.translation.project
    const noText = recalculationEvent({ stringId: 8 }) as { stringStatus: { translation: Record<string, unknown> } }
    delete noText.stringStatus.translation.text
    const noId = recalculationEvent({ stringId: 9 }) as { stringStatus: { translation: Record<string, unknown> } }
    delete noId.stringStatus.translation.id
    const withExtras = { ...recalculationEvent({ stringId: 2 }), addedLater: { nested: true } }
    const events = [recalculationEvent({ stringId: 1 }), noProject, noText, noId, 42, withExtras]
    const res = await post(signedRequest(JSON.stringify({ events, alsoNew: 1 }), SECRET))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ accepted: 3, invalid: 4 })
    await w.idle()
    const ops = service.patches.flatMap((p) => p.ops).sort((a, b) => a.path.localeCompare(b.path))
    // 1 and 2 ran their pipeline; 8 (no text) is parked with ""; 7 (no project) and 9 (no id) can't be addressed.
    expect(ops).toEqual([
      { op: 'replace', path: '/1/output', value: 'approved' },
      { op: 'replace', path: '/2/output', value: 'approved' },
      { op: 'replace', path: '/8/output', value: '' },
    ])
    const metrics = await w.metrics.registry.metrics()
    expect(metrics).toMatch(/switchyard_webhook_invalid_events_total\{result="parked"\} 1/)
    expect(metrics).toMatch(/switchyard_webhook_invalid_events_total\{result="logged"\} 3/)
    expect(w.stats().journal).toBe(0)
  })

  it('answers 413 to a body over the limit', async () => {
    const { post } = await worker({ bodyLimit: 2048 })
    const res = await post(signedRequest(batch(20), SECRET))
    expect(res.status).toBe(413)
  })

  it('takes a signed batch larger than BODY_MEMORY_LIMIT through a file in DATA_DIR, and reports every string', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-incoming-'))
    try {
      const { w, service, post } = await worker({ bodyMemoryLimit: 64 * 1024, dataDir, queueLimit: 100_000 })
      const text = batch(2_500)
      expect(Buffer.byteLength(text)).toBeGreaterThan(4 * 1024 * 1024) // three slices at least
      const res = await post(signedRequest(text, SECRET))
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ accepted: 2_500, duplicates: 0 })
      expect(readdirSync(path.join(dataDir, 'incoming'))).toEqual([])
      await w.idle()
      const reported = service.patches.flatMap((p) => p.ops.map((o) => Number(o.path.split('/')[1])))
      expect(reported.sort((a, b) => a - b)).toEqual(Array.from({ length: 2_500 }, (_, i) => i + 1))
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('answers 404 to a delivery for a module key that is not ours, and keeps strings of a step with no pipeline parked here', async () => {
    const { w, service, post } = await worker()
    expect((await post(signedRequest(batch(1), SECRET, { moduleKey: 'nobody' }))).status).toBe(404)
    const other = JSON.stringify({ events: [recalculationEvent({ stringId: 1, moduleKey: 'not-ours' }), recalculationEvent({ stringId: 2 })] })
    const res = await post(signedRequest(other, SECRET))
    expect(res.status).toBe(200)
    await w.idle()
    expect(service.patches.flatMap((p) => p.ops.map((o) => o.path))).toEqual(['/2/output'])
    // Parked in the journal, tried again on the next start (when a pipeline may declare the key).
    expect(w.stats().parked).toBe(1)
  })

  it('acknowledges and counts an event type nobody handles', async () => {
    const { w, post } = await worker()
    const res = await post(signedRequest(JSON.stringify({ events: [{ event: 'project.built', project: { id: 1 } }] }), SECRET))
    expect(res.status).toBe(200)
    const metrics = await (await fetch(`${w.url}/metrics`)).text()
    expect(metrics).toMatch(/switchyard_webhook_events_total\{event="project.built"\} 1/)
  })

  it('absorbs duplicates within and across deliveries', async () => {
    const { w, service, post } = await worker()
    const body = JSON.stringify({ events: [recalculationEvent({ stringId: 1 }), recalculationEvent({ stringId: 1 })] })
    expect(await (await post(signedRequest(body, SECRET))).json()).toMatchObject({ accepted: 1, duplicates: 1 })
    await w.idle()
    // Finished: the same string again is checked with the service, which no longer waits for it.
    expect(await (await post(signedRequest(body, SECRET))).json()).toMatchObject({ accepted: 1, duplicates: 1 })
    await w.idle()
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(1)
    expect(await w.metrics.registry.metrics()).toMatch(/switchyard_status_rechecks_total\{status="DONE"\} 1/)
  })

  it('a full window is no reason for a 503: the batch waits on disk and is read back in turn', async () => {
    const service = fakeServiceFetch()
    const w = await startTestWorker({ pipelines: fakePipelines('test-step', () => 'approved', { delayMs: 100 }), fetch: service.fetch, config: { queueLimit: 5 } })
    running.push(w)
    let maxDepth = 0
    const sampler = setInterval(() => (maxDepth = Math.max(maxDepth, w.queue.depth)), 5)
    try {
      expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(5), SECRET))).status).toBe(200)
      const res = await fetch(`${w.url}/webhooks`, signedRequest(batch(12, 100), SECRET))
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ accepted: 12 })
      await w.idle()
    } finally {
      clearInterval(sampler)
    }
    expect(maxDepth).toBeLessThanOrEqual(5)
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(17)
    expect(w.stats()).toMatchObject({ journal: 0, backlog: 0 })
  })

  it("answers 503 with Retry-After only when the disk budget, or the organization's share of it, is full, and says what to do", async () => {
    const service = fakeServiceFetch(undefined, { accessTokens: ['token-b'] })
    const { StaticTokenProvider } = await import('../../src/platform/token-provider.js')
    // Organization A can't be reported for: its strings pile up on disk. 1 MB budget, 50% each.
    const tokens = new StaticTokenProvider(new Map([['b.example', 'token-b']]))
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, tokens, config: { backlogMaxMb: 1, backlogOrganizationShare: 50 } })
    running.push(w)
    const big = (from: number, organizationId = 'A') => JSON.stringify({ events: Array.from({ length: 20 }, (_, i) => recalculationEvent({ stringId: from + i, text: 'x'.repeat(10_000), organizationId })) })
    const a = { domain: 'a.example', orgId: 'A' }
    const statuses: number[] = []
    let refused: Response | undefined
    for (let i = 0; i < 4 && !refused; i++) {
      const res = await fetch(`${w.url}/webhooks`, signedRequest(big(i * 100), SECRET, a))
      statuses.push(res.status)
      if (res.status === 503) refused = res
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200])
    expect(refused?.status).toBe(503)
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await errorOf(refused!)).message).toMatch(/share of the backlog on disk is full.*raise BACKLOG_MAX_MB/)
    // Another organization still has the other half.
    const b = { domain: 'b.example', orgId: 'B' }
    expect((await fetch(`${w.url}/webhooks`, signedRequest(big(1000, 'B'), SECRET, b))).status).toBe(200)
    await w.idle()
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(20)
  })

  it('accepts the platform header prefix when configured', async () => {
    const { post } = await worker({ headerPrefix: 'X-Crowdin-' })
    expect((await post(signedRequest(batch(1), SECRET, { prefix: 'X-Crowdin-' }))).status).toBe(200)
    expect((await post(signedRequest(batch(1, 5), SECRET))).status).toBe(400)
  })
})

// Large bodies go to the ingest threads (INGEST_THREADS); the answers must not change.
describe('POST /webhooks through the ingest threads', () => {
  it('accepts, journals and reports a large batch decoded in a thread', async () => {
    const { w, service, post } = await worker({ ingestThreads: 2 })
    const body = batch(300)
    expect(body.length).toBeGreaterThan(64 * 1024)
    const res = await post(signedRequest(body, SECRET))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ accepted: 300, duplicates: 0 })
    const again = await post(signedRequest(batch(300), SECRET))
    // Absorbed while queued, or checked with the service once finished: never reported twice.
    const answer = (await again.json()) as { accepted: number; duplicates: number }
    expect(answer.accepted + answer.duplicates).toBe(300)
    await w.idle()
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(300)
    // A small one stays on the main thread; /metrics tells the operator which way each went.
    expect((await post(signedRequest(batch(1, 301), SECRET))).status).toBe(200)
    const metrics = await (await fetch(`${w.url}/metrics`)).text()
    const decoded = (where: string) => Number(new RegExp(`^switchyard_webhook_decodes_total\\{where="${where}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0)
    // Without the build's thread module (Stryker's sandbox without dist/), all three are inline.
    expect([decoded('thread'), decoded('inline')]).toEqual(threadModuleBuilt ? [2, 1] : [0, 3])
  })

  it('refuses large bad bodies with the same statuses and reasons as small ones', async () => {
    const { w, post } = await worker({ ingestThreads: 2 })
    const big = batch(300)
    expect((await post(signedRequest(big, 'another-secret'))).status).toBe(401)
    const malformed = await post(signedRequest(big.slice(0, -2), SECRET))
    expect(malformed.status).toBe(400)
    expect((await errorOf(malformed)).code).toBe('malformed_json')
    const event = recalculationEvent({ stringId: 1000 }) as { stringStatus: { translation: Record<string, unknown> } }
    delete event.stringStatus.translation.project
    const withBad = JSON.stringify({ events: [...(JSON.parse(big) as { events: unknown[] }).events, event] })
    const unknown = await post(signedRequest(big, SECRET, { moduleKey: 'nobody' }))
    expect(unknown.status).toBe(404)
    const otherOrganization = await post(signedRequest(big, SECRET, { orgId: '31337' }))
    expect(otherOrganization.status).toBe(401)
    expect((await errorOf(otherOrganization)).code).toBe('organization_mismatch')
    expect(w.stats().journal).toBe(0)
    // One bad event among 300 costs nothing to the others.
    const invalid = await post(signedRequest(withBad, SECRET))
    expect(invalid.status).toBe(200)
    expect(await invalid.json()).toMatchObject({ accepted: 300, invalid: 1 })
    await w.idle()
  })
})
