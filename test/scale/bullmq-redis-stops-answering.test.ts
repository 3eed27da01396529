// QUEUE=bullmq when the queue's Redis stops answering on a connection that stays open (a stopped or
// swapping server, a half-open connection): its commands wait for it for ever, so a batch's writes
// are given a deadline, past which the webhook gets a 5XX (the service delivers it again) instead
// of no answer. The writes that end later must still count once: nothing lost, nothing twice.
import { afterAll, expect, it } from 'vitest'
import { BullmqJournal } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import { redisServer, startPrivateRedis, type PrivateRedis } from '../support/private-redis.js'

const job = (i: number): Job => ({ key: `o|1|2|de|${i}|1`, organizationId: 'o', domain: 'acme', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1, string: { key: `k${i}`, context: '', maxLength: 0, text: `t${i}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] }, sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0 })

if (!redisServer && !process.env.CI) console.warn('[switchyard tests] redis-server is not installed: skipping the test of a Redis that stops answering (install the redis-server package, or run .ci/run)')

let redis: PrivateRedis | undefined
afterAll(() => redis?.stop())

// Under CI a missing redis-server fails the test rather than skipping it.
it.skipIf(!redisServer && !process.env.CI)('a batch whose writes Redis does not answer is refused after the deadline; the late writes count once', async () => {
  redis = await startPrivateRedis()
  const journal = new BullmqJournal({ redisUrl: redis.socket, name: 'stops-answering', concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 60_000, appendWaitMs: 1000, log: silentLogger() })
  const queued = async () => {
    const counts = await (journal as unknown as { queue: { getJobCounts(...t: string[]): Promise<Record<string, number>> } }).queue.getJobCounts('waiting', 'prioritized')
    return (counts.waiting ?? 0) + (counts.prioritized ?? 0)
  }
  try {
    await journal.append('b1', [job(1)])
    redis.pause()
    const t0 = Date.now()
    const refused = await journal.append('b2', [job(2), job(3)]).then(() => undefined, (e: Error) => e)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(refused?.message).toMatch(/did not answer the batch's writes within 1 s; the batch was not acknowledged and the service delivers it again: check that Redis is up and answering/)
    redis.resume()
    // The writes under way when Redis stopped are carried out once it answers again ...
    for (let i = 0; i < 100 && (await queued()) < 3; i++) await new Promise((r) => setTimeout(r, 50))
    expect(await queued()).toBe(3)
    // ... and the delivery the 5XX brings again adds nothing twice.
    await journal.append('b2', [job(2), job(3)])
    expect(await queued()).toBe(3)
  } finally {
    redis.resume()
    await (journal as unknown as { queue: { obliterate(o: { force: boolean }): Promise<void> } }).queue.obliterate({ force: true }).catch(() => undefined)
    await journal.close()
  }
}, 30_000)

// The mark a status update's strings get before it goes out (`sending`) waits for Redis: without a
// deadline, a Redis that stopped answering stopped every report, and a stop waiting for them, for
// as long as it did not answer. Past the deadline the update fails (its strings are held).
it.skipIf(!redisServer && !process.env.CI)('a status update whose mark Redis does not answer fails after the deadline instead of waiting for ever', async () => {
  redis ??= await startPrivateRedis()
  const journal = new BullmqJournal({ redisUrl: redis.socket, name: 'mark-stops-answering', concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 60_000, markWaitMs: 500, log: silentLogger() })
  const taken: Job[] = []
  try {
    journal.start((t) => taken.push(t))
    await journal.append('b1', [job(7)])
    for (let i = 0; i < 100 && taken.length === 0; i++) await new Promise((r) => setTimeout(r, 50))
    expect(taken).toHaveLength(1)
    redis.pause()
    const t0 = Date.now()
    const refused = await journal.sending(taken).then(() => undefined, (e: Error) => e)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(refused?.message).toMatch(/did not answer the mark of a status update within 0.5 s; the update was not sent/)
  } finally {
    redis.resume()
    await (journal as unknown as { queue: { obliterate(o: { force: boolean }): Promise<void> } }).queue.obliterate({ force: true }).catch(() => undefined)
    await journal.close()
  }
}, 30_000)
