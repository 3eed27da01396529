// Parked strings (a refusal of their status update with no rule of its own) are tried again by
// themselves every PARKED_RETRY_MS while the worker runs, each checked with the service first:
// before, only a restart retried them, and a refusal that lasted a moment (a conflict, a lock)
// left the service waiting for them until someone restarted the worker.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createStores, type Stores } from '../../src/store/create-stores.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

const batch = (ids: number[]) => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, languageId: 'de' })) })

async function journalKeys(stores: Stores): Promise<string[]> {
  const keys: string[] = []
  for await (const [key] of stores.journal.iterator!(undefined) as AsyncIterable<[string, unknown]>) keys.push(String(key))
  // Only the record of when a process was last alive, and which, is not a batch or a parked entry.
  return keys.filter((k) => !/(^|:)alive(-by)?$/.test(k))
}

async function storesFor(kind: 'memory' | 'sqlite'): Promise<Stores> {
  if (kind === 'memory') return createStores('memory://')
  const dir = mkdtempSync(path.join(tmpdir(), 'parked-retry-'))
  const stores = await createStores(`sqlite://${path.join(dir, 'store.sqlite')}`)
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return stores
}

describe.each(['memory', 'sqlite'] as const)('parked strings tried again while the worker runs (%s store)', (kind) => {
  it('reports them once the refusal is over, with no restart, and leaves nothing in the journal', async () => {
    let refuse = true
    let refusals = 0
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && refuse ? (refusals++, { status: 422, body: { error: 'locked' } }) : undefined))
    const stores = await storesFor(kind)
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores, config: { apiMaxAttempts: 2, parkedRetryMs: 300 } })
    cleanups.push(() => w.stop())
    ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 5
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2, 3]), SECRET))
    await expect.poll(() => w.stats().parked, { timeout: 5000 }).toBe(3)
    // Still refused: each retry parks them again, none is lost or doubled.
    const first = refusals
    await expect.poll(() => refusals, { timeout: 5000 }).toBeGreaterThan(first + 1)
    await expect.poll(() => w.stats().parked, { timeout: 5000 }).toBe(3)
    expect(service.patches).toHaveLength(0)
    refuse = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort(), { timeout: 5000 }).toEqual(['/1/output', '/2/output', '/3/output'])
    await w.idle()
    expect(w.stats()).toMatchObject({ parked: 0, journal: 0, held: 0 })
    expect(await journalKeys(stores)).toEqual([])
  })

  it('asks the service first: a parked string it no longer waits for is not run or reported again', async () => {
    let refuse = true
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && refuse ? { status: 409 } : undefined))
    const stores = await storesFor(kind)
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores, config: { apiMaxAttempts: 1, parkedRetryMs: 400 } })
    cleanups.push(() => w.stop())
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2]), SECRET))
    await expect.poll(() => w.stats().parked, { timeout: 5000 }).toBe(2)
    // Meanwhile a person finished string 1 at the service.
    service.fake.setStatuses(7, [{ stringId: 1, languageId: 'de', stepId: 11, status: 'DONE', output: 'approved' }])
    refuse = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops.map((o) => o.path)), { timeout: 5000 }).toEqual(['/2/output'])
    await w.idle()
    expect(w.stats()).toMatchObject({ parked: 0, journal: 0 })
    expect(await journalKeys(stores)).toEqual([])
  })
})

describe('the retry of parked strings, when the store fails', () => {
  it('loses none: a retry whose journal write fails leaves them parked, and the next one reports them, once each', async () => {
    let refuse = true
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && refuse ? { status: 422 } : undefined))
    const stores = await createStores('memory://')
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores, config: { apiMaxAttempts: 1, parkedRetryMs: 300 } })
    cleanups.push(() => w.stop())
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2, 3]), SECRET))
    await expect.poll(() => w.stats().parked, { timeout: 5000 }).toBe(3)
    // The next writes of a batch entry fail (the strings journaled again by the retry), and the
    // removal of a parked entry after that once.
    let failWrites = 2
    let failDeletes = 1
    const set = stores.journal.set.bind(stores.journal)
    const del = stores.journal.delete.bind(stores.journal)
    stores.journal.set = (async (key: string, ...rest: unknown[]) => {
      if (key.startsWith('b:') && failWrites > 0) {
        failWrites--
        throw new Error('store unavailable')
      }
      return (set as (...a: unknown[]) => Promise<boolean>)(key, ...rest)
    }) as typeof stores.journal.set
    stores.journal.delete = (async (key: string | string[]) => {
      if (typeof key === 'string' && key.startsWith('p:') && failWrites === 0 && failDeletes > 0) {
        failDeletes--
        throw new Error('store unavailable')
      }
      return del(key as string)
    }) as typeof stores.journal.delete
    refuse = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort(), { timeout: 8000 }).toEqual(['/1/output', '/2/output', '/3/output'])
    await w.idle()
    expect(failWrites).toBe(0)
    expect(failDeletes).toBe(0)
    expect(w.stats()).toMatchObject({ parked: 0, journal: 0 })
    expect(await journalKeys(stores)).toEqual([])
  })
})

describe('the retry of parked strings, when taking one out of the parked set fails', () => {
  // The copies join the line all the same; one of them run and refused again is parked again under
  // the same key. The next retry must take that entry for a new parking (journaled again), not for
  // the one it copied before (only removed): removed, the string was nowhere.
  it('a copy parked again before the next retry is retried, not removed', async () => {
    const refused = new Map<string, number>()
    let refuse = true
    const service = fakeServiceFetch(({ method, body }) => {
      if (method !== 'PATCH' || !refuse || !(body as Array<{ path: string }>).some((op) => op.path === '/1/output')) return undefined
      for (const op of body as Array<{ path: string }>) refused.set(op.path, (refused.get(op.path) ?? 0) + 1)
      return { status: 422 }
    })
    const stores = await createStores('memory://')
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores, config: { apiMaxAttempts: 1, parkedRetryMs: 300 } })
    cleanups.push(() => w.stop())
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1]), SECRET))
    await expect.poll(() => w.stats().parked, { timeout: 5000 }).toBe(1)
    let failDeletes = 1
    const del = stores.journal.delete.bind(stores.journal)
    stores.journal.delete = (async (key: string | string[]) => {
      if (typeof key === 'string' && key.startsWith('p:') && failDeletes > 0) {
        failDeletes--
        // Another string finishing meanwhile kicks the backlog: the copy runs at once.
        void fetch(`${w.url}/webhooks`, signedRequest(batch([2]), SECRET))
        throw new Error('store unavailable')
      }
      return del(key as string)
    }) as typeof stores.journal.delete
    // The retry whose removal fails, its copy refused again, and a retry or two after it.
    await expect.poll(() => refused.get('/1/output') ?? 0, { timeout: 8000 }).toBeGreaterThanOrEqual(4)
    refuse = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort(), { timeout: 8000 }).toEqual(['/1/output', '/2/output'])
    await w.idle()
    expect(failDeletes).toBe(0)
    expect(await journalKeys(stores)).toEqual([])
  })
})

describe('the retry of parked strings, turned off', () => {
  it('PARKED_RETRY_MS=0 leaves them parked until the next start', async () => {
    let refuse = true
    let refusals = 0
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && refuse ? (refusals++, { status: 422 }) : undefined))
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, config: { apiMaxAttempts: 1, parkedRetryMs: 0 } })
    cleanups.push(() => w.stop())
    await fetch(`${w.url}/webhooks`, signedRequest(batch([1]), SECRET))
    await expect.poll(() => w.stats().parked, { timeout: 5000 }).toBe(1)
    refuse = false
    const before = refusals
    await new Promise((r) => setTimeout(r, 600))
    expect(refusals).toBe(before)
    expect(service.patches).toHaveLength(0)
    expect(w.stats().parked).toBe(1)
  })
})
