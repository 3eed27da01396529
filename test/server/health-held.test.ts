// What operators see of an organization refused across its tries (in-process backlog): /healthz
// `held` and `heldOrganizations`, the held metrics and the operator page's list keep it listed
// throughout, since its first hold, with every string it has waiting on disk (not only those
// held again since the last try), until a status update for it goes through.
import { afterEach, describe, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const batch = (ids: number[], languageId = 'de') => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, languageId })) })
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)

describe('/healthz and the held list across tries', () => {
  it('keeps a refused organization listed, since its first hold, with all its waiting strings, until a report goes through', async () => {
    let forbidden = true
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && forbidden ? { status: 403, body: { error: { message: 'may not update statuses' } } } : undefined))
    // A window of 20: a try takes a slice of the 300 strings, the rest wait on disk.
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, heldRecheckMs: 10, heldBaseDelayMs: 100, config: { queueLimit: 20 } })
    running.push(w)
    for (const languageId of ['de', 'fr', 'ja']) expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(1, 100), languageId), SECRET))).status).toBe(200)
    const health = async () => (await (await fetch(`${w.url}/healthz`)).json()) as { held: number; heldOrganizations: number }
    await expect.poll(health, { timeout: 5000 }).toMatchObject({ held: 300, heldOrganizations: 1 })
    const since = w.held.list()[0]!.since

    // Through at least two more tries (each refused again gets a new time to try), look often.
    const tries = new Set<number | undefined>()
    const samples: Array<{ health: { held: number; heldOrganizations: number }; listed: number; since: number[]; trying: boolean }> = []
    const deadline = Date.now() + 10_000
    while ([...tries].filter((t) => t !== undefined).length < 3 && Date.now() < deadline) {
      const list = w.held.list()
      list.forEach((h) => tries.add(h.nextTryAt))
      samples.push({ health: await health(), listed: list.length, since: list.map((h) => h.since), trying: list.some((h) => h.nextTryAt === undefined) })
      await new Promise((r) => setTimeout(r, 2))
    }
    expect([...tries].filter((t) => t !== undefined).length).toBeGreaterThanOrEqual(3)
    for (const s of samples) {
      expect(s.listed).toBe(1)
      expect(s.since).toEqual([since])
      expect(s.health.heldOrganizations).toBe(1)
      // On disk: all but a slice being tried or written back (a window's worth, 20, at a time).
      expect(s.health.held).toBeGreaterThanOrEqual(300 - 2 * 20)
    }
    // Held again after the tries: every string it has waiting, not the slice held again.
    await expect.poll(health, { timeout: 5000 }).toMatchObject({ held: 300, heldOrganizations: 1 })
    expect(w.held.list()).toEqual([expect.objectContaining({ domain: 'acme', cause: 'forbidden', since, strings: 300 })])
    await expect.poll(() => w.metrics.registry.metrics(), { timeout: 5000 }).toMatch(/switchyard_held_jobs\{cause="forbidden"\} 300\n/)
    expect(await w.metrics.registry.metrics()).toMatch(/switchyard_held_organizations\{cause="forbidden"\} 1\n/)
    expect(service.patches).toHaveLength(0)

    // The refusal ends: every string reported, the organization no longer listed.
    forbidden = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 10_000 }).toBe(300)
    await w.idle()
    expect(w.held.list()).toEqual([])
    expect(await health()).toMatchObject({ held: 0, heldOrganizations: 0 })

    // Refused again later: a new hold, with a new since.
    forbidden = true
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([1000]), SECRET))).status).toBe(200)
    await expect.poll(() => w.held.list().length, { timeout: 5000 }).toBe(1)
    expect(w.held.list()[0]!.since).toBeGreaterThan(since)
  }, 30_000)
})
