// A string whose source changed while an older copy of it was on its way (a translator's fix of the
// source gives a new revision): the service must end with the newest revision's output, and every
// copy must be accounted for. Here the older copy was already decided and waiting to be sent (its
// PATCH lingers to be coalesced) when the newer one was decided: before, the reporter kept the newer
// decision but never finished the older copy, which held its place in the queue for good.
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { BullmqJournal } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import { describeWithService, flushRedis } from '../support/services.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const DB = 14 // a Redis database of its own (7 and 10-13 are other files')

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

// With QUEUE=bullmq, an older copy whose reads fail (it waits in its slot, or out a back-off in
// BullMQ's delayed set) while the newer revision arrives and is reported: it must not be reported
// after it. Each copy is a BullMQ job of its own (the revision in its id), and the de-duplication
// memory of one process does not see the others' arrivals: Redis keeps the newest revision of an
// edited string, asked once a run is over; a copy back from the delayed set is also checked with
// the service first. Before, the older copy was PATCHed last and its output stayed.
await describeWithService('redis', 'QUEUE=bullmq: a newer revision while an older copy waits', (REDIS) => {
  const url = `${REDIS}/${DB}`
  const flush = () => flushRedis(url)
  beforeEach(flush)
  afterAll(flush)

  it('Redis keeps the newest revision of an edited string, only upwards; strings never edited cost nothing', async () => {
    const journal = new BullmqJournal({ redisUrl: url, name: 'revisions', concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, log: silentLogger() })
    running.push({ stop: () => journal.close() })
    const job = (stringId: number, revision: number): Job => ({
      key: `acme|1|2|de|${stringId}|${revision}`, organizationId: 'acme', domain: 'acme', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId, revision,
      string: { key: 'k', context: '', maxLength: 0, text: 't', isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
      sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0,
    })
    await journal.append('b1', [job(1, 3), job(2, 1)])
    await journal.append('b2', [job(1, 2)]) // an older copy delivered late
    const [r1, r2, r3, s1] = [job(1, 1), job(1, 2), job(1, 3), job(2, 1)]
    const newer = await journal.newerArrived([r1, r2, r3, s1])
    expect([...newer]).toEqual([r1, r2])
    const client = (journal as unknown as { queueClient: { hgetall(k: string): Promise<Record<string, string>> }; queue: { toKey(k: string): string } })
    expect(await client.queueClient.hgetall(client.queue.toKey('revisions'))).toEqual({ 'acme|1|2|de|1': '3' })
  })

  it('past its bound the hash of revisions starts anew but keeps the one before: the latest notes are never lost', async () => {
    const journal = new BullmqJournal({ redisUrl: url, name: 'revisions-bound', concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, maxRevisionsKept: 3, log: silentLogger() })
    running.push({ stop: () => journal.close() })
    const job = (stringId: number, revision: number) =>
      ({ key: `acme|1|2|de|${stringId}|${revision}`, organizationId: 'acme', domain: 'acme', projectId: 1, stepId: 2, languageId: 'de', stringId, revision }) as unknown as Job
    const note = (jobs: Job[]) => (journal as unknown as { noteRevisions(jobs: Job[]): Promise<void> }).noteRevisions(jobs)
    for (let i = 1; i <= 3; i++) await note([job(i, 2)])
    await note([job(4, 2)]) // the first hash is full: it becomes the one before
    await note([job(1, 2)]) // not written again: the one before has it
    expect([...(await journal.newerArrived([1, 2, 3, 4].map((i) => job(i, 1))))].map((j) => j.stringId)).toEqual([1, 2, 3, 4])
    for (let i = 5; i <= 7; i++) await note([job(i, 2)]) // and again
    // 1-3 are forgotten (two generations ago); 4-7 are kept.
    expect([...(await journal.newerArrived([1, 4, 5, 6, 7].map((i) => job(i, 1))))].map((j) => j.stringId)).toEqual([4, 5, 6, 7])
  })

  it('an older copy whose reads failed while the newer revision was reported is not reported after it', async () => {
    let failing = true
    const service = fakeServiceFetch(({ method, url }) => (failing && method === 'GET' && url.includes('/translations') ? { status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '4' } } : undefined))
    const pipelines = fakePipelines('test-step', (item) => (item.source === 'Old text' ? 'translated' : 'approved'), { needsTranslation: true })
    const w = await startTestWorker({ pipelines, fetch: service.fetch, config: { queue: 'bullmq', queueName: 'newer-revision', queueRedisUrl: url } })
    running.push(w)
    expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(1, 'Old text'), SECRET))).status).toBe(200)
    // Its reads get 429 with Retry-After: 4 s.
    await expect.poll(() => service.fake.requestsTo('translations').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1)
    await new Promise((r) => setTimeout(r, 1500))
    failing = false
    expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(2, 'New text'), SECRET))).status).toBe(200)
    await expect.poll(() => service.fake.statusOf(7, 11, 'de', 5)?.output, { timeout: 5000 }).toBe('approved')
    await w.idle(20_000) // revision 1 came back (its Retry-After is over) and was accounted for
    expect(service.patches.flatMap((p) => p.ops)).toEqual([{ op: 'replace', path: '/5/output', value: 'approved' }])
    expect(service.fake.statusOf(7, 11, 'de', 5)?.output).toBe('approved')
    const jobs = await w.metrics.registry.getSingleMetricAsString('switchyard_jobs_total')
    expect(jobs).toMatch(/outcome="(superseded|absorbed)",port=""} 1/)
  }, 60_000)
})
