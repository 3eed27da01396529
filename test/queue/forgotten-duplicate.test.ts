// A duplicate delivery of a string already DONE, arriving after the de-duplication memory forgot it
// (DEDUPE_TTL_MS, or DEDUPE_MAX finished strings), is checked with the service (platform notes, "A
// string comes back": tell the two apart by asking the service), not run and PATCHed again: the
// filter of strings finished long ago says it may have finished here.
import { afterEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const body = JSON.stringify({ events: [recalculationEvent({ stringId: 5, revision: 1, text: 'Text' })] })

it('a repeat of a DONE string after the memory forgot it is checked with the service, not run and PATCHed again', async () => {
  const service = fakeServiceFetch()
  const pipelines = fakePipelines('test-step', () => 'approved')
  const w = await startTestWorker({ pipelines, fetch: service.fetch, config: { dedupeTtlMs: 100 } })
  running.push(w)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))).status).toBe(200)
  await w.idle(10_000)
  expect(service.fake.statusOf(7, 11, 'de', 5)?.status).toBe('DONE')
  expect(service.patches).toHaveLength(1)
  await new Promise((r) => setTimeout(r, 300)) // past DEDUPE_TTL_MS: the worker's memory forgot it
  // The service delivers the same batch again (a retry of a delivery whose 2XX it did not see).
  expect((await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))).status).toBe(200)
  await w.idle(10_000)
  expect(pipelines.runs).toBe(1)
  expect(service.patches).toHaveLength(1)
  expect(service.fake.requestsTo('status', 'GET').length).toBeGreaterThanOrEqual(1)
})
