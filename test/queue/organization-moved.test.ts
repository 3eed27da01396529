// A string's domain is stamped when it arrives and kept with it while it waits; by the time it runs,
// its organization may have been connected under another domain, or its old domain by another
// organization. Held under the stamped domain, such strings waited for good for a token that never
// came, or were reported with the other organization's token (an audit's findings). They go under
// the domain their organization has now.
import { afterEach, describe, expect, it } from 'vitest'
import { Directory } from '../support/directory.js'
import type { Finding, Item } from '../../src/engine/types.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const API = 'https://{organization_domain}.api.test'
const TOKENS = ['token-old', 'token-new', 'token-acme', 'token-globex']

/**
 * `needsTranslation`: the pipeline asks the API for translations before it runs, so a held string
 * comes back undecided (it runs under its domain now); without, its decision is held after the run
 * and comes back decided (reported under its domain now).
 */
// With `sendBack`, odd strings are sent back with a finding (and an issue raised on each).
const sendsBack = (item: Item) => item.id % 2 === 1
async function start(directory: Directory, o: { needsTranslation: boolean; answer?: Parameters<typeof fakeServiceFetch>[0]; queueLimit?: number; sendBack?: boolean }) {
  const service = fakeServiceFetch(o.answer, { apiUrl: API, accessTokens: TOKENS })
  const pipelines = o.sendBack
    ? fakePipelines('test-step', (item) => (sendsBack(item) ? 'translated' : 'approved'), {
        needsTranslation: o.needsTranslation,
        issues: { outputs: ['translated'] },
        findings: (item): Finding[] => (sendsBack(item) ? [{ check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', code: 'placeholder.missing' }] : []),
      })
    : fakePipelines('test-step', () => 'approved', { needsTranslation: o.needsTranslation })
  const w = await startTestWorker({
    pipelines,
    issuesCatchUpAfterMs: 0,
    config: { apiUrl: API, ...(o.queueLimit ? { queueLimit: o.queueLimit } : {}) },
    fetch: service.fetch,
    tokens: directory,
    heldRecheckMs: 20,
    heldBaseDelayMs: 20,
  })
  running.push(w)
  ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 1
  return { w, service }
}

const send = (url: string, ids: number[], o: { domain: string; orgId?: string }) =>
  fetch(`${url}/webhooks`, signedRequest(JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, organizationId: o.orgId ?? '200000' })) }), SECRET, { domain: o.domain, orgId: o.orgId ?? '200000' }))

/** Each status PATCH as the domain it went to and the token it carried, per string. */
function reportsOf(service: ReturnType<typeof fakeServiceFetch>): string[] {
  return service.fake.requestsTo('status', 'PATCH')
    .filter((r) => r.status < 300)
    .flatMap((r) => (r.body as Array<{ path: string }>).map((op) => `${r.url.hostname.split('.')[0]} ${r.headers.get('authorization')} ${op.path.split('/')[1]}`))
}

describe('strings of an organization whose domain changed while they waited', () => {
  it('held under a domain the organization has left: let go once it is connected under another, and reported there', async () => {
    const directory = new Directory()
    directory.connect('200000', 'old')
    directory.tokens.delete('old') // disconnected: its strings are held under "old"
    const { w, service } = await start(directory, { needsTranslation: true })
    expect((await send(w.url, [1, 2, 3], { domain: 'old' })).status).toBe(200)
    await expect.poll(() => w.held.count('old'), { timeout: 5000 }).toBe(3)
    // Connected again, under a new domain ("old" never gets a token again).
    directory.connect('200000', 'new')
    await expect.poll(() => reportsOf(service).length, { timeout: 5000 }).toBe(3)
    expect(reportsOf(service).sort()).toEqual(['new Bearer token-new 1', 'new Bearer token-new 2', 'new Bearer token-new 3'])
    // They ran under the new domain: their translations were asked of it, never of "old" with a token.
    expect(service.fake.requestsTo('translations').map((r) => r.url.hostname.split('.')[0])).not.toContain('old')
    await w.idle()
    expect(w.stats()).toMatchObject({ journal: 0, held: 0, backlog: 0 })
  })

  it('a backlog larger than the window, stamped with the old domain, waits once its first strings are held under the new one (not read back through whole)', async () => {
    const directory = new Directory()
    const { w, service } = await start(directory, { needsTranslation: true, queueLimit: 8 })
    const ids = Array.from({ length: 80 }, (_, i) => i + 1)
    for (let i = 0; i < ids.length; i += 20) expect((await send(w.url, ids.slice(i, i + 20), { domain: 'globex' })).status).toBe(200)
    await expect.poll(() => w.held.count('globex'), { timeout: 5000 }).toBeGreaterThan(0)
    const holds = async () => (await w.metrics.registry.getSingleMetric('switchyard_jobs_total')!.get()).values.filter((v) => v.labels.outcome === 'held').reduce((n, v) => n + v.value, 0)
    const heldBefore = await holds()
    directory.connect('300000', 'globex')
    await expect.poll(() => w.held.count('200000'), { timeout: 5000 }).toBeGreaterThan(0)
    await new Promise((r) => setTimeout(r, 500))
    // The window's worth went under the organization's id and was held there; the rest waits on disk.
    expect(await holds() - heldBefore).toBeLessThanOrEqual(2 * 8)
    expect(reportsOf(service)).toEqual([])
    directory.connect('200000', 'acme')
    await expect.poll(() => reportsOf(service).length, { timeout: 10_000 }).toBe(80)
    expect(new Set(reportsOf(service).map((r) => r.split(' ')[0]))).toEqual(new Set(['acme']))
  })

  it('not connected when they arrived, under a domain another organization connects since: never reported with its token; reported once their own organization connects', async () => {
    const directory = new Directory()
    const { w, service } = await start(directory, { needsTranslation: true })
    // 200000 names "globex" in its unsigned header while nobody has connected it.
    expect((await send(w.url, [1, 2], { domain: 'globex' })).status).toBe(200)
    await expect.poll(() => w.held.count('globex'), { timeout: 5000 }).toBe(2)
    // 300000 connects "globex": its token is not 200000's.
    directory.connect('300000', 'globex')
    await expect.poll(() => w.held.count('200000'), { timeout: 5000 }).toBe(2)
    expect(reportsOf(service)).toEqual([])
    // Held there, they wait: not read back from the disk and held again over and over.
    const holds = async () => (await w.metrics.registry.getSingleMetric('switchyard_jobs_total')!.get()).values.filter((v) => v.labels.outcome === 'held').reduce((n, v) => n + v.value, 0)
    const before = await holds()
    await new Promise((r) => setTimeout(r, 300))
    expect(await holds()).toBe(before)
    directory.connect('200000', 'acme')
    await expect.poll(() => reportsOf(service).length, { timeout: 5000 }).toBe(2)
    expect(reportsOf(service).sort()).toEqual(['acme Bearer token-acme 1', 'acme Bearer token-acme 2'])
  })

  it('a decision held after its run (the old domain refused it) is reported under the new domain, not refused again for good', async () => {
    const directory = new Directory()
    directory.connect('200000', 'old')
    // "old" refuses every status update (the installation there is gone).
    const { w, service } = await start(directory, { needsTranslation: false, answer: ({ method, url }) => (method === 'PATCH' && new URL(url).hostname.startsWith('old.') ? { status: 403, body: { error: { code: 403, message: 'forbidden' } } } : undefined) })
    expect((await send(w.url, [1, 2], { domain: 'old' })).status).toBe(200)
    await expect.poll(() => w.held.list().find((h) => h.domain === 'old')?.cause, { timeout: 5000 }).toBe('forbidden')
    const refusedBefore = service.fake.requestsTo('status', 'PATCH').length
    expect(refusedBefore).toBeGreaterThan(0)
    directory.connect('200000', 'new')
    await expect.poll(() => reportsOf(service).length, { timeout: 5000 }).toBe(2)
    expect(reportsOf(service).sort()).toEqual(['new Bearer token-new 1', 'new Bearer token-new 2'])
    // The pipeline ran once per string: the held decisions went as decided.
    expect(w.stats()).toMatchObject({ held: 0 })
  })

  it('strings of two organizations that arrived under one domain part when one of them connects: each runs under its own', async () => {
    const directory = new Directory()
    const { w, service } = await start(directory, { needsTranslation: true })
    // Neither connected; both name "shared" in their unsigned header, same project and step.
    expect((await send(w.url, [1, 2, 3], { domain: 'shared' })).status).toBe(200)
    expect((await send(w.url, [101, 102, 103], { domain: 'shared', orgId: '300000' })).status).toBe(200)
    await expect.poll(() => w.held.count('shared'), { timeout: 5000 }).toBe(6)
    directory.connect('200000', 'acme')
    await expect.poll(() => reportsOf(service).length, { timeout: 5000 }).toBe(3)
    await new Promise((r) => setTimeout(r, 300))
    expect(reportsOf(service).sort()).toEqual(['acme Bearer token-acme 1', 'acme Bearer token-acme 2', 'acme Bearer token-acme 3'])
    // Only 200000's strings were asked of acme's API; 300000's still wait under "shared".
    const asked = service.fake.requestsTo('translations').filter((r) => r.url.hostname.startsWith('acme.')).flatMap((r) => (r.url.searchParams.get('stringIds') ?? '').split(','))
    expect(asked.every((id) => ['1', '2', '3'].includes(id))).toBe(true)
    expect(w.held.count('shared')).toBe(3)
  })

  it("the issues' catch-up leaves an entry written under a domain its organization has left (its requests would go there)", async () => {
    const directory = new Directory()
    directory.connect('200000', 'old')
    let commentsDown = true
    const { w, service } = await start(directory, { needsTranslation: false, sendBack: true, answer: ({ url }) => (commentsDown && url.includes('/comments') ? { status: 500, body: { error: { code: 500, message: 'down' } } } : undefined) })
    expect((await send(w.url, [1, 2], { domain: 'old' })).status).toBe(200)
    await w.idle()
    await w.findingsIdle()
    expect(w.issues.counts.failed).toBe(1)
    commentsDown = false
    // Another organization connects "old"; 200000 is connected under "new" now.
    directory.connect('200000', 'new')
    directory.connect('300000', 'old')
    expect(await w.sweepFindings()).toMatchObject({ caughtUp: 0 })
    await w.findingsIdle()
    expect(service.comments).toEqual([])
  })
})
