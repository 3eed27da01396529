// The activity log (the operator page's recent events other than strings) is a convenience: a
// store that cannot read or write it must not turn a delivery whose strings are journaled into a
// 500 (the service would spend one of its few retries on it), nor stop the events' handlers.
import { afterEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { createStores } from '../../src/store/create-stores.js'
import { ACTIVITY_KEY } from '../../src/worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

it('answers 200 for a delivery with other events when the activity log cannot be written, and its strings are reported', async () => {
  for (const broken of ['get', 'set'] as const) {
    const stores = await createStores('memory://')
    ;(stores.activity as unknown as Record<string, unknown>)[broken] = async () => {
      throw new Error('the store is read-only')
    }
    const service = fakeServiceFetch()
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, stores })
    running.push(w)
    const body = JSON.stringify({ events: [{ event: 'project.translated', projectId: 7 }, recalculationEvent({ stringId: 1 })] })
    const res = await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))
    expect(res.status, broken).toBe(200)
    expect(await res.json()).toMatchObject({ accepted: 1, events: 1 })
    await w.idle()
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(1)
  }
})

// Rule: two deliveries at once each have their other events listed: the list is read, extended
// and written back one delivery at a time, not both from the same read; neither answer waits
// for the list.
it('lists the other events of deliveries that arrive together', async () => {
  const stores = await createStores('memory://')
  const get = stores.activity.get.bind(stores.activity)
  // Reads are slow, so that without an order both deliveries read the empty list.
  ;(stores.activity as unknown as { get: typeof get }).get = (async (key: string) => {
    const value = await get(key)
    await new Promise((resolve) => setTimeout(resolve, 50))
    return value
  }) as typeof get
  const w = await startTestWorker({ pipelines: fakePipelines(), fetch: fakeServiceFetch().fetch, stores })
  running.push(w)
  const answers = await Promise.all(
    ['project.translated', 'project.approved'].map((event) => fetch(`${w.url}/webhooks`, signedRequest(JSON.stringify({ events: [{ event, projectId: 7 }] }), SECRET))),
  )
  expect(answers.map((r) => r.status)).toEqual([200, 200])
  // The answer does not wait for the operator's list; the list gets both within a few reads.
  const listed = async () => ((((await get(ACTIVITY_KEY)) ?? []) as Array<{ event: string }>).map((e) => e.event).sort())
  await expect.poll(listed, { timeout: 3000, interval: 50 }).toEqual(['project.approved', 'project.translated'])
})

// Rule: a slow or hung store holds one write of the list and a bounded list of entries waiting,
// not one write per delivery: the deliveries that came meanwhile go in one write once it answers.
it('keeps one write of the list at a time, the deliveries meanwhile in the next one', async () => {
  const stores = await createStores('memory://')
  const activity = stores.activity as unknown as { get: (k: string) => Promise<unknown>; set: (k: string, v: unknown) => Promise<boolean> }
  const get = activity.get.bind(activity)
  const set = activity.set.bind(activity)
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  let sets = 0
  activity.get = async (key) => { await held; return get(key) }
  activity.set = async (key, value) => { sets++; return set(key, value) }
  const w = await startTestWorker({ pipelines: fakePipelines(), fetch: fakeServiceFetch().fetch, stores })
  running.push(w)
  for (const projectId of [1, 2, 3, 4, 5]) {
    const res = await fetch(`${w.url}/webhooks`, signedRequest(JSON.stringify({ events: [{ event: 'project.translated', projectId }] }), SECRET))
    expect(res.status).toBe(200)
  }
  release()
  const listed = async () => (((await get(ACTIVITY_KEY)) ?? []) as unknown[]).length
  await expect.poll(listed, { timeout: 3000, interval: 20 }).toBe(5)
  expect(sets).toBe(2)
})
