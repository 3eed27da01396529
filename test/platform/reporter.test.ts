import { afterEach, describe, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const batch = (ids: number[], languageId = 'de', organizationId?: string) => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, languageId, organizationId })) })

describe('reporting outputs', () => {
  it('coalesces many batches into few PATCHes of at most 500', async () => {
    const service = fakeServiceFetch()
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, config: { reportLingerMs: 100 } })
    running.push(w)
    await Promise.all(Array.from({ length: 12 }, (_, b) => fetch(`${w.url}/webhooks`, signedRequest(batch(Array.from({ length: 100 }, (_, i) => b * 100 + i + 1)), SECRET))))
    await w.idle()
    const ops = service.patches.flatMap((p) => p.ops)
    expect(ops).toHaveLength(1200)
    expect(Math.max(...service.patches.map((p) => p.ops.length))).toBeLessThanOrEqual(500)
    expect(service.patches.length).toBeLessThanOrEqual(6)
  })

  it('splits a PATCH refused with 400 so that the other strings still go through', async () => {
    const service = fakeServiceFetch(({ method, body }) => {
      if (method === 'PATCH' && (body as Array<{ path: string }>).some((o) => o.path === '/13/output')) return { status: 400, body: { error: 'port not declared' } }
      return undefined
    })
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch })
    running.push(w)
    await fetch(`${w.url}/webhooks`, signedRequest(batch(Array.from({ length: 40 }, (_, i) => i + 1)), SECRET))
    await w.idle()
    const reported = service.patches.flatMap((p) => p.ops.map((o) => o.path))
    expect(reported).toHaveLength(39)
    expect(reported).not.toContain('/13/output')
    const metrics = await w.metrics.registry.metrics()
    expect(metrics).toMatch(/switchyard_jobs_total\{outcome="rejected",port="approved"\} 1/)
    expect(w.stats().journal).toBe(0)
  })

  it('honours 429 Retry-After and retries 500s, then succeeds', async () => {
    let calls = 0
    const times: number[] = []
    const service = fakeServiceFetch(({ method }) => {
      if (method !== 'PATCH') return undefined
      calls++
      times.push(Date.now())
      if (calls === 1) return { status: 429, headers: { 'retry-after': '1' } }
      if (calls === 2) return { status: 500 }
      return undefined
    })
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch })
    running.push(w)
    ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 10
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2]), SECRET))
    await w.idle()
    expect(calls).toBe(3)
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950)
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(2)
  })

  it('holds strings whose PATCH keeps failing (the API down: 503), and reports them by itself once it answers again, with no restart', async () => {
    let fail = false
    let refused = 0
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && fail ? (refused++, { status: 503 }) : undefined))
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, config: { apiMaxAttempts: 2 }, heldBaseDelayMs: 50 })
    running.push(w)
    ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 5
    // The API answered a moment ago: an outage that begins now is still an outage.
    await fetch(`${w.url}/webhooks`, signedRequest(batch([9]), SECRET))
    await w.idle()
    fail = true
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2, 3]), SECRET))
    await expect.poll(() => w.stats().held).toBe(3)
    expect(w.stats().parked).toBe(0)
    // The gauges are read once a second.
    await expect.poll(() => w.metrics.registry.metrics(), { timeout: 3000 }).toMatch(/switchyard_held_jobs\{cause="unavailable"\} 3/)
    // Still down through a few tries (each a PATCH, refused): still held, none parked or lost.
    const refusedBefore = refused
    await expect.poll(() => refused, { timeout: 5000 }).toBeGreaterThan(refusedBefore)
    expect(w.stats()).toMatchObject({ held: 3, parked: 0 })
    fail = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort(), { timeout: 10_000 }).toEqual(['/1/output', '/2/output', '/3/output', '/9/output'])
    await w.idle()
    expect(w.stats()).toMatchObject({ held: 0, parked: 0, journal: 0 })
  })

  it('parks strings whose PATCH is refused with no rule of its own (422), durably, and takes them back on restart', async () => {
    let fail = true
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && fail ? { status: 422 } : undefined))
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, config: { apiMaxAttempts: 2 } })
    ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 5
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2, 3]), SECRET))
    await w.idle()
    expect(w.stats().parked).toBe(3)
    expect(await w.metrics.registry.metrics()).toMatch(/switchyard_jobs_total\{outcome="parked",port="approved"\} 3/)
    await w.stop()
    fail = false
    const again = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores: w.stores })
    running.push(again)
    await again.idle()
    expect(service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort()).toEqual(['/1/output', '/2/output', '/3/output'])
    // No batch or parked entry is left (only the record of when a process was last alive, and which).
    const keys: string[] = []
    for await (const [key] of again.stores.journal.iterator!(undefined) as AsyncIterable<[string, unknown]>) keys.push(String(key))
    expect(keys.filter((k) => !/(^|:)alive(-by)?$/.test(k))).toEqual([])
  })

  it('holds the strings of an organization without a usable token instead of failing them', async () => {
    const service = fakeServiceFetch()
    const { StaticTokenProvider } = await import('../../src/platform/token-provider.js')
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, tokens: new StaticTokenProvider(new Map()) })
    running.push(w)
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2]), SECRET))).status).toBe(200)
    await new Promise((r) => setTimeout(r, 200))
    // Journaled, but out of the queue's count: QUEUE_LIMIT is shared with other organizations.
    expect(w.stats()).toMatchObject({ held: 2, journal: 2, depth: 0 })
    expect(service.patches).toHaveLength(0)
  })

  it('an organization that cannot be reported for keeps its strings on disk, its deliveries are still taken, and others go through', async () => {
    const service = fakeServiceFetch(undefined, { accessTokens: ['token-b'] })
    const { StaticTokenProvider } = await import('../../src/platform/token-provider.js')
    const tokens = new StaticTokenProvider(new Map([['b.example', 'token-b']]))
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, tokens, config: { queueLimit: 4 } })
    running.push(w)
    const a = { domain: 'a.example', orgId: 'A' }
    const b = { domain: 'b.example', orgId: 'B' }
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2, 3], 'de', 'A'), SECRET, a))).status).toBe(200)
    await expect.poll(() => w.stats().held).toBe(3)
    // No 503: the held organization's strings wait on disk, not in the window.
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([4, 5], 'de', 'A'), SECRET, a))).status).toBe(200)
    // The other organization's strings, more than the window leaves after A's, go through.
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([11, 12, 13, 14], 'de', 'B'), SECRET, b))).status).toBe(200)
    await w.idle()
    expect(service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort()).toEqual(['/11/output', '/12/output', '/13/output', '/14/output'])
    expect(w.stats()).toMatchObject({ journal: 5, depth: 0, backlog: 5 })
    expect(w.backlog!.list()).toMatchObject([{ domain: 'a.example', strings: 5, waiting: 5 }])
  })

  it('resumes held strings once their organization has a token again, and counts them again', async () => {
    const service = fakeServiceFetch(undefined, { accessTokens: ['token-a'] })
    const { StaticTokenProvider } = await import('../../src/platform/token-provider.js')
    const map = new Map<string, string>()
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, tokens: new StaticTokenProvider(map), config: { queueLimit: 4 }, heldRecheckMs: 50 })
    running.push(w)
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2, 3], 'de', 'A'), SECRET, { domain: 'a.example', orgId: 'A' }))).status).toBe(200)
    await expect.poll(() => w.stats().held).toBe(3)
    map.set('a.example', 'token-a')
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 3000 }).toBe(3)
    await w.idle()
    expect(w.stats()).toMatchObject({ held: 0, journal: 0, depth: 0 })
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([4, 5, 6, 7], 'de', 'A'), SECRET, { domain: 'a.example', orgId: 'A' }))).status).toBe(200)
    await w.idle()
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(7)
  })

  it('holds an organization refused with 403, tries again with back-off, and reports every string once the refusal ends', async () => {
    let forbidden = true
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && forbidden ? { status: 403, body: { error: { message: 'may not update statuses' } } } : undefined))
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, heldRecheckMs: 10, heldBaseDelayMs: 100 })
    running.push(w)
    for (const languageId of ['de', 'fr', 'ja']) {
      expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(Array.from({ length: 100 }, (_, i) => i + 1), languageId), SECRET))).status).toBe(200)
    }
    await expect.poll(() => w.stats().held, { timeout: 5000 }).toBe(300)
    expect(service.patches).toHaveLength(0)
    expect(w.held.list()).toEqual([expect.objectContaining({ domain: 'acme', cause: 'forbidden', strings: 300 })])
    await new Promise((r) => setTimeout(r, 400))
    forbidden = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 10_000 }).toBe(300)
    await w.idle()
    expect(w.stats()).toMatchObject({ held: 0, journal: 0, depth: 0 })
  })

  it('drops the strings of a language taken out of the step (404) once, without bisecting, and reports the others', async () => {
    let requests404 = 0
    const service = fakeServiceFetch(({ method, url }) => {
      if (method === 'PATCH' && url.includes('/languages/fr/')) return (requests404++, { status: 404, body: { error: { message: 'Language fr is not among the languages of the step' } } })
      return undefined
    })
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch })
    running.push(w)
    for (const languageId of ['de', 'fr']) {
      expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(Array.from({ length: 200 }, (_, i) => i + 1), languageId), SECRET))).status).toBe(200)
    }
    await w.idle()
    expect(requests404).toBeLessThanOrEqual(2)
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(200)
    expect(await w.metrics.registry.metrics()).toMatch(/switchyard_jobs_total\{outcome="dropped",port="approved"\} 200/)
    expect(w.stats().journal).toBe(0)
  })
})
