// A string whose source changed while an older copy of it was on its way (a translator's fix of the
// source gives a new revision): the service must end with the newest revision's output, and every
// copy must be accounted for. Here the older copy was already decided and waiting to be sent (its
// PATCH lingers to be coalesced) when the newer one was decided: before, the reporter kept the newer
// decision but never finished the older copy, which held its place in the queue for good.
import { afterEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const delivery = (revision: number, text: string) => JSON.stringify({ events: [recalculationEvent({ stringId: 5, revision, text })] })

it('an older copy decided before a newer revision, and not yet sent, is superseded: one update, the newer output, nothing left open', async () => {
  const service = fakeServiceFetch()
  const pipelines = fakePipelines('test-step', (item) => (item.source === 'Old text' ? 'translated' : 'approved'))
  const w = await startTestWorker({ pipelines, fetch: service.fetch, config: { reportLingerMs: 1500 } })
  running.push(w)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(1, 'Old text'), SECRET))).status).toBe(200)
  await expect.poll(() => pipelines.runs, { timeout: 5000, interval: 10 }).toBe(1) // decided, lingering
  expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(2, 'New text'), SECRET))).status).toBe(200)
  await w.idle(10_000)
  expect(service.patches.flatMap((p) => p.ops)).toEqual([{ op: 'replace', path: '/5/output', value: 'approved' }])
  expect(w.stats()).toMatchObject({ depth: 0, journal: 0 })
  const jobs = await w.metrics.registry.getSingleMetricAsString('switchyard_jobs_total')
  expect(jobs).toMatch(/outcome="superseded",port="translated"} 1/)
})
