// Findings through a running worker: issues go out only after their string's status was accepted,
// behind status updates in the organization's budget; a service that refuses comments changes no
// status; the findings log and the metrics see every reported string.
import { afterEach, describe, expect, it } from 'vitest'
import type { Finding, Item } from '../../src/engine/types.js'
import { ApiClient } from '../../src/platform/api-client.js'
import { COMMENT_PRIORITY } from '../../src/findings/issue-sender.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { silentLogger } from '../../src/util/logger.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const send = (url: string, ids: number[], revision = 1) =>
  fetch(`${url}/webhooks`, signedRequest(JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, revision, text: `Hello {name} ${stringId}` })) }), SECRET))

// Odd strings fail with a missing placeholder; even ones pass. `fixed` makes every string pass.
const state = { fixed: false }
const broken = (item: Item) => !state.fixed && item.id % 2 === 1
const pipelines = () => fakePipelines('test-step', (item) => (broken(item) ? 'translated' : 'approved'), {
  issues: { outputs: ['translated'] },
  findings: (item): Finding[] => (broken(item) ? [{ check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', code: 'placeholder.missing', span: { start: 6, end: 12, in: 'source' } }] : []),
})

describe('findings through the worker', () => {
  it('raises one issue per string sent back, after its status; resolves it when the string passes', async () => {
    state.fixed = false
    const service = fakeServiceFetch()
    const w = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch })
    running.push(w)
    await send(w.url, [1, 2, 3, 4])
    await w.idle()
    await w.findingsIdle()
    expect(service.comments.map((c) => [c.stringId, c.issueStatus])).toEqual([[1, 'unresolved'], [3, 'unresolved']])
    expect(service.comments[0]!.text).toContain('in the source: “{name}”')
    // Every comment request came after the status PATCH of its strings.
    const firstPatch = service.log.indexOf('PATCH status')
    expect(service.log.findIndex((l) => l.endsWith('comments'))).toBeGreaterThan(firstPatch)
    // One look-up and one issue per string sent back; the strings that passed cost nothing.
    expect(service.log.filter((l) => l.endsWith('comments')).sort()).toEqual(['GET comments', 'GET comments', 'POST comments', 'POST comments'])
    expect(w.issues.counts.stale).toBe(0)

    // The findings log answers "why".
    const why = await w.findings.search({ stringId: 1 })
    expect(why).toEqual([expect.objectContaining({ languageId: 'de', outcome: 'translated', sentBack: true, findings: [expect.objectContaining({ check: 'placeholders', code: 'placeholder.missing', quote: '{name}' })] })])
    expect(await w.metrics.registry.metrics()).toMatch(/switchyard_findings_total\{check="placeholders",severity="error"\} 2/)

    // Sent back again unchanged: no second issue. Then fixed: resolved.
    await send(w.url, [1, 3], 2)
    await w.idle()
    await w.findingsIdle()
    expect(service.comments).toHaveLength(2)
    state.fixed = true
    await send(w.url, [1, 3], 3)
    await w.idle()
    await w.findingsIdle()
    expect(service.comments.map((c) => c.issueStatus)).toEqual(['resolved', 'resolved'])
    expect((await w.findings.search({ key: 'key.1' }))[0]).toMatchObject({ outcome: 'approved', sentBack: false, findings: [] })
  })

  it.each([500, 403])('a service that refuses comments (%s) changes no status', async (status) => {
    state.fixed = false
    const refusing = fakeServiceFetch(({ url }) => (url.includes('/comments') ? { status, body: { error: { code: status, message: 'no comments' } } } : undefined))
    const w = await startTestWorker({ pipelines: pipelines(), fetch: refusing.fetch })
    running.push(w)
    ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 1
    await send(w.url, Array.from({ length: 20 }, (_, i) => i + 1))
    await w.idle()
    await w.findingsIdle()
    const ops = refusing.patches.flatMap((p) => p.ops)
    expect(ops).toHaveLength(20)
    expect(ops.filter((o) => o.value === 'translated')).toHaveLength(10)
    expect(w.stats()).toMatchObject({ journal: 0, parked: 0, held: 0 })
    expect(w.held.count()).toBe(0)
    // A 403 pauses the project's raising: counted as refused (the requests it still made are
    // bounded in issue-sender.test.ts), anything else as failed.
    const outcome = status === 403 ? 'refused' : 'failed'
    expect(w.issues.counts[outcome]).toBe(10)
    expect(await w.metrics.registry.metrics()).toMatch(new RegExp(`switchyard_issues_total\\{outcome="${outcome}"\\} 10`))
    // The findings log still has them.
    expect(await w.findings.search({ stringId: 1 })).toHaveLength(1)
  })

  it('issues that could not be raised are raised by the findings log\'s sweep once comments work again; not while the organization is held', async () => {
    state.fixed = false
    let down = true
    const service = fakeServiceFetch(({ url }) => (down && url.includes('/comments') ? { status: 500, body: { error: { code: 500, message: 'down' } } } : undefined))
    const w = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch, issuesCatchUpAfterMs: 0 })
    running.push(w)
    ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 1
    await send(w.url, [1, 2, 3, 4])
    await w.idle()
    await w.findingsIdle()
    expect(w.issues.counts.failed).toBe(2)
    expect(service.comments).toEqual([])
    down = false
    // Held (disconnected): nothing is asked of the service for it. (Strings 2 and 4 passed clean:
    // no entry.)
    w.held.hold('acme', 1, 'test')
    expect(await w.sweepFindings()).toMatchObject({ strings: 2, caughtUp: 0 })
    w.held.clear()
    expect(await w.sweepFindings()).toMatchObject({ strings: 2, caughtUp: 2 })
    await w.findingsIdle()
    expect(service.comments.map((c) => [c.stringId, c.issueStatus]).sort()).toEqual([[1, 'unresolved'], [3, 'unresolved']])
    expect(service.comments[0]!.text).toContain('sent this string back')
    // Owed nothing now.
    expect(await w.sweepFindings()).toMatchObject({ caughtUp: 0 })
  })

  it('after a restart, the first sweep raises what the last run could not', async () => {
    state.fixed = false
    let down = true
    const service = fakeServiceFetch(({ url }) => (down && url.includes('/comments') ? { status: 503, body: { error: { code: 503, message: 'down' } } } : undefined))
    const first = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch })
    ;(first.api as unknown as { baseDelayMs: number }).baseDelayMs = 1
    await send(first.url, [1, 2, 3])
    await first.idle()
    await first.findingsIdle()
    await first.stop()
    expect(service.comments).toEqual([])
    down = false
    // The same store; the first sweep comes soon after start without being asked.
    const second = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch, stores: first.stores, issuesCatchUpAfterMs: 0, firstFindingsSweepMs: 20 })
    running.push(second)
    await expect.poll(() => service.comments.length, { timeout: 5000 }).toBe(2)
    await second.findingsIdle()
    expect(service.comments.map((c) => c.stringId).sort()).toEqual([1, 3])
  })

  it('sweeps again after the first, every interval', async () => {
    state.fixed = false
    let down = true
    const service = fakeServiceFetch(({ url }) => (down && url.includes('/comments') ? { status: 503, body: { error: { code: 503, message: 'down' } } } : undefined))
    const w = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch, issuesCatchUpAfterMs: 0, firstFindingsSweepMs: 10, findingsSweepMs: 100 })
    running.push(w)
    ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 1
    await send(w.url, [1, 2, 3])
    await w.idle()
    // Down through the first sweeps; up for a later one, which raises each issue once.
    await new Promise((r) => setTimeout(r, 300))
    expect(service.comments).toEqual([])
    down = false
    await expect.poll(() => service.comments.length, { timeout: 5000 }).toBe(2)
    await new Promise((r) => setTimeout(r, 300))
    expect(service.comments.map((c) => c.stringId).sort()).toEqual([1, 3])
  })

  it('no issue for a string whose status was refused', async () => {
    state.fixed = false
    const service = fakeServiceFetch(({ method, body }) => {
      if (method === 'PATCH' && Array.isArray(body) && body.some((o: { path: string; value: string }) => o.path === '/1/output' && o.value === 'translated')) return { status: 400, body: { error: 'no' } }
      return undefined
    })
    const w = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch })
    running.push(w)
    await send(w.url, [1, 3])
    await w.idle()
    await w.findingsIdle()
    expect(service.comments.map((c) => c.stringId)).toEqual([3])
  })
})

describe('comment requests yield to status requests', () => {
  it('waiting for a slot of the organization, a status request goes before a comment queued earlier', async () => {
    const order: string[] = []
    let release!: () => void
    const gate = new Promise<void>((r) => { release = r })
    const fetchImpl = (async (url: string) => {
      const what = String(url).includes('/comments') ? 'comment' : String(url).includes('blocker') ? 'blocker' : 'status'
      order.push(what)
      if (what === 'blocker') await gate
      return new Response(JSON.stringify({ data: { id: 1 } }), { status: what === 'comment' ? 201 : 200 })
    }) as unknown as typeof fetch
    const api = new ApiClient({ config: { apiUrl: 'http://service.test', apiMaxInFlight: 1, apiMaxAttempts: 1, apiTimeoutMs: 5000 }, tokens: new StaticTokenProvider(new Map([['*', 't']])), log: silentLogger(), fetch: fetchImpl })
    const blocker = api.request('acme', 'GET', '/blocker', 'x')
    await new Promise((r) => setTimeout(r, 10))
    const comment = api.createComment('acme', 7, { stringId: 1, targetLanguageId: 'de', text: 't', type: 'issue', issueType: 'translation_mistake' }, { priority: COMMENT_PRIORITY })
    await new Promise((r) => setTimeout(r, 10))
    const status = api.patchStatuses('acme', 7, 11, 'de', [{ op: 'replace', path: '/1/output', value: 'approved' }])
    await new Promise((r) => setTimeout(r, 10))
    release()
    await Promise.all([blocker, comment, status])
    expect(order).toEqual(['blocker', 'status', 'comment'])
  })

  it('comments use at most COMMENTS_MAX_IN_FLIGHT of the organization\'s slots', async () => {
    state.fixed = false
    let inFlight = 0
    let most = 0
    const service = fakeServiceFetch()
    const slow = (async (input: string | URL, init?: RequestInit) => {
      const comment = String(input).includes('/comments')
      if (comment) { inFlight++; most = Math.max(most, inFlight); await new Promise((r) => setTimeout(r, 15)) }
      try {
        return await service.fetch(input, init)
      } finally {
        if (comment) inFlight--
      }
    }) as typeof fetch
    const w = await startTestWorker({ pipelines: pipelines(), fetch: slow, config: { commentsMaxInFlight: 2 } })
    running.push(w)
    await send(w.url, Array.from({ length: 40 }, (_, i) => i + 1))
    await w.idle()
    await w.findingsIdle()
    expect(service.comments).toHaveLength(20)
    expect(most).toBe(2)
  })
})
