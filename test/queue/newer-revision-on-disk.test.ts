// A string fixed at the service (a new source revision) while its older revision waits on disk,
// in the backlog of an organization with more strings than the window holds: both copies are
// journaled straight to disk (never seen by the de-duplication until read back), the older one
// first. Before, the older copy was read back, checked with the service (it waits for the string:
// status is per string, not per revision), run on its old source and reported; the newer one then
// ran and was reported too, after it. Now the revisions past the first that go to disk are noted,
// and an older copy read back before its newer one is stale: each string is reported once, on its
// newest revision. (After a crash, the same through the journal's parts:
// test/durability/newer-revision-backlog.test.ts.)
import { afterEach, expect, it } from 'vitest'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { createStores } from '../../src/store/create-stores.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const batch = (ids: number[], revision = 1) => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, languageId: 'de', revision, text: `Text ${stringId} r${revision}` })) })
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)
// The first revision's source fails, the second's passes: what is reported tells which ran.
const pipelines = () => fakePipelines('test-step', (item) => (item.source.endsWith(' r2') ? 'approved' : 'translated'))
/** Each string's reported outputs, in order. */
const outputsOf = (service: ReturnType<typeof fakeServiceFetch>, of: number[]) => {
  const ops = service.patches.flatMap((p) => p.ops as Array<{ path: string; value: string }>)
  return of.map((id) => ops.filter((o) => o.path === `/${id}/output`).map((o) => o.value))
}

it('an older revision waiting on disk behind a newer one is not run or reported: each string once, on its newest revision', async () => {
  const service = fakeServiceFetch()
  const w = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch, config: { queueLimit: 10, concurrency: 1, reportLingerMs: 400 } })
  running.push(w)
  // The window fills with the first ten; the rest of the organization's strings go to disk.
  expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(1, 10)), SECRET))).status).toBe(200)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(11, 10)), SECRET))).status).toBe(200)
  // The same strings fixed at the service: their second revision, journaled behind the first.
  expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(11, 10), 2), SECRET))).status).toBe(200)
  expect(w.stats().backlog).toBe(20)
  await w.idle()
  expect(outputsOf(service, ids(1, 10))).toEqual(ids(1, 10).map(() => ['translated']))
  expect(outputsOf(service, ids(11, 10))).toEqual(ids(11, 10).map(() => ['approved']))
  expect(w.stats()).toMatchObject({ journal: 0, backlog: 0 })
})

it('after a restart, an older revision left on disk behind a newer one is stale: the replay notes what the journal\'s parts hold', async () => {
  const stores = await createStores('memory://')
  // A first run that cannot report (no token: its organization is held): both revisions stay on disk.
  const first = await startTestWorker({ pipelines: pipelines(), fetch: fakeServiceFetch().fetch, stores, tokens: new StaticTokenProvider(new Map()) })
  running.push(first)
  expect((await fetch(`${first.url}/webhooks`, signedRequest(batch(ids(1, 10)), SECRET))).status).toBe(200)
  await expect.poll(() => first.stats().backlog, { timeout: 5000 }).toBe(10)
  expect((await fetch(`${first.url}/webhooks`, signedRequest(batch(ids(1, 10), 2), SECRET))).status).toBe(200)
  await expect.poll(() => first.stats().backlog, { timeout: 5000 }).toBe(20)
  await running.pop()!.stop()
  const service = fakeServiceFetch()
  // A window of ten: the older revision's strings run before the newer ones are read back.
  const second = await startTestWorker({ pipelines: pipelines(), fetch: service.fetch, stores, config: { queueLimit: 10, concurrency: 1 } })
  running.push(second)
  await second.replayed
  await second.idle()
  expect(outputsOf(service, ids(1, 10))).toEqual(ids(1, 10).map(() => ['approved']))
  expect(second.stats()).toMatchObject({ journal: 0, backlog: 0 })
})
