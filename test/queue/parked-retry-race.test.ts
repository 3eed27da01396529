// The periodic retry of parked strings journals them again, puts the copies in their
// organization's line and takes them out of the parked set, one removal at a time (a page is up to
// 2,000 strings). Before, the copies joined the line before those removals: a refill meanwhile
// (any string of the worker finishing kicks one) read a copy, ran it, and its refusal parked it
// again under the same key, which the retry's removal then deleted. The string was then nowhere,
// neither in a batch entry (done as it was parked) nor in the parked set, and the service waited
// for it for good.
import { afterEach, expect, it } from 'vitest'
import { createStores } from '../../src/store/create-stores.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

const batch = (ids: number[]) => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, languageId: 'de' })) })

it('a string parked again while the retry is still taking the others out of the parked set is not lost', async () => {
  let refuse = true
  const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && refuse ? { status: 422, body: { error: 'locked' } } : undefined))
  const stores = await createStores('memory://')
  const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores, config: { apiMaxAttempts: 1, parkedRetryMs: 500, reportLingerMs: 0 } })
  cleanups.push(() => w.stop())
  expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([1, 2, 3, 4, 5, 6]), SECRET))).status).toBe(200)
  await expect.poll(() => w.stats().parked, { timeout: 5000 }).toBe(6)
  // Taking a string out of the parked set is slow (a busy disk, or a page of 2,000 of them); other
  // work meanwhile finishes and kicks the backlog.
  let removals = 0
  const del = stores.journal.delete.bind(stores.journal)
  stores.journal.delete = (async (key: string | string[]) => {
    if (typeof key === 'string' && key.startsWith('p:')) {
      removals++
      if (removals === 1) void fetch(`${w.url}/webhooks`, signedRequest(batch([100]), SECRET))
      await new Promise((r) => setTimeout(r, 150))
    }
    return del(key as string)
  }) as typeof stores.journal.delete
  await expect.poll(() => removals, { timeout: 5000 }).toBeGreaterThanOrEqual(6)
  await new Promise((r) => setTimeout(r, 1500))
  refuse = false
  await expect.poll(() => new Set(service.patches.flatMap((p) => p.ops.map((o) => o.path))), { timeout: 10_000 }).toEqual(new Set([1, 2, 3, 4, 5, 6, 100].map((id) => `/${id}/output`)))
  await w.idle()
  expect(w.stats()).toMatchObject({ parked: 0, journal: 0 })
})
