// QUEUE=bullmq and reconciliation: strings queued or running in Redis are not counted as orphans
// (this process's de-duplication memory holds none of them: before, every one was counted, and a
// string really lost could not be told from them); once nothing is queued, one the service waits
// for and no instance holds is found.
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { describeWithService, flushRedis } from '../support/services.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const DB = 15 // a database of its own (7 and 10-14 are other files')

await describeWithService('redis', 'QUEUE=bullmq: reconciliation', (REDIS) => {
  const url = `${REDIS}/${DB}`
  const running: Array<{ stop(): Promise<void> }> = []
  const flush = () => flushRedis(url)
  beforeEach(flush)
  afterEach(async () => {
    while (running.length) await running.pop()!.stop()
  })
  afterAll(flush)

  it('strings being worked on are no orphans; a lost one is found once nothing is queued', async () => {
    const service = fakeServiceFetch()
    service.fake.setStatuses(7, Array.from({ length: 21 }, (_, i) => ({ stringId: i + 1, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' })))
    const w = await startTestWorker({ pipelines: fakePipelines('test-step', () => 'approved', { delayMs: 1500 }), fetch: service.fetch, config: { queue: 'bullmq', queueName: 'reconcile', queueRedisUrl: url } })
    running.push(w)
    // 20 of the 21 strings the service waits for reach the worker; string 21 is lost on the way.
    const events = Array.from({ length: 20 }, (_, i) => recalculationEvent({ stringId: i + 1 }))
    expect((await fetch(`${w.url}/webhooks`, signedRequest(JSON.stringify({ events }), SECRET))).status).toBe(200)
    await new Promise((r) => setTimeout(r, 500)) // running (the pipeline takes 1.5 s)
    expect(await w.reconcile()).toEqual({ orphans: 0, checked: 0, queuedElsewhere: 20 })
    await w.idle(20_000)
    await new Promise((r) => setTimeout(r, 300)) // the count in Redis, read at most every 250 ms
    expect(await w.reconcile()).toEqual({ orphans: 1, checked: 1 })
  }, 40_000)
})
