// QUEUE=bullmq, graceful shutdown: while an instance drains it still acknowledges deliveries (the
// service spends a retry on every 503, issue 16), queuing them in Redis for the other instances,
// and takes none of them itself. Another instance on the same Redis reports them.
import { afterAll, beforeEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { describeWithService, flushRedis } from '../support/services.js'

const DB = 12 // a database of its own: bullmq-held.test.ts empties 10 while this file may run beside it
const QUEUE_NAME = 'drain-test'
const batch = (ids: number[]) => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId })) })
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)

await describeWithService('redis', 'QUEUE=bullmq: a draining instance', (REDIS) => {
  const url = `${REDIS}/${DB}`
  const running: Array<{ stop(): Promise<void> }> = []
  const flush = () => flushRedis(url)
  beforeEach(async () => {
    while (running.length) await running.pop()!.stop()
    await flush()
  })
  afterAll(async () => {
    while (running.length) await running.pop()!.stop()
    await flush()
  })

  it('acknowledges deliveries while it drains, runs none of them, and another instance reports them', async () => {
    const service = fakeServiceFetch()
    const config = { queue: 'bullmq' as const, queueName: QUEUE_NAME, queueRedisUrl: url, shutdownTimeoutMs: 1500, queueLockMs: 2000 }
    // A slow pipeline: the drain lasts while a run holds the instance.
    const ranOnA: number[] = []
    const slow = fakePipelines('test-step', (item) => (ranOnA.push(item.id), 'approved'), { delayMs: 1000 })
    const a = await startTestWorker({ pipelines: slow, fetch: service.fetch, config })
    expect((await fetch(`${a.url}/webhooks`, signedRequest(batch(ids(1, 5)), SECRET))).status).toBe(200)
    await new Promise((r) => setTimeout(r, 200)) // its run has begun
    const stopping = a.stop()
    const during = await fetch(`${a.url}/webhooks`, signedRequest(batch(ids(100, 20)), SECRET))
    expect(during.status).toBe(200)
    await stopping

    const b = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, config })
    running.push(b)
    await b.idle(20_000)
    const reported = new Set(service.patches.flatMap((p) => p.ops.map((o) => Number(o.path.split('/')[1]))))
    for (const id of ids(100, 20)) expect(reported.has(id), `string ${id}`).toBe(true)
    // The draining instance ran only the strings it had taken before.
    expect(ranOnA.length).toBeGreaterThan(0)
    expect(ranOnA.filter((id) => id >= 100)).toEqual([])
  }, 40_000)
})
