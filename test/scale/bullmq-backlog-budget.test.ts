// Issue 16 with QUEUE=bullmq: Redis holds the backlog, so BACKLOG_MAX_MB bounds Redis memory as
// estimated from the strings waiting; past it, a batch is refused (the only 503). Its own queue
// name on the shared Redis, removed afterwards.
import { afterAll, describe, expect, it } from 'vitest'
import { BullmqJournal, REDIS_BYTES_PER_STRING } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'

const name = `backlog-budget-${process.pid}-${Date.now()}`
const journal = new BullmqJournal({ redisUrl: 'redis://127.0.0.1:6379', name, concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, maxBytes: 10 * REDIS_BYTES_PER_STRING, log: silentLogger() })

afterAll(async () => {
  await (journal as unknown as { queue: { obliterate(o: { force: boolean }): Promise<void> } }).queue.obliterate({ force: true }).catch(() => undefined)
  await journal.close()
})

const job = (i: number): Job => ({ key: `o|1|2|de|${i}|1`, organizationId: 'o', domain: 'acme', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1, string: { key: `k${i}`, context: '', maxLength: 0, text: `t${i}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] }, sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0 })

describe('BullMQ backlog budget', () => {
  it('takes batches while the estimated Redis memory is under BACKLOG_MAX_MB, then refuses with a reason that says what to do', async () => {
    expect(journal.refuse(1000)).toBeUndefined()
    await journal.append('b1', Array.from({ length: 12 }, (_, i) => job(i)))
    await new Promise((r) => setTimeout(r, 300))
    await journal.backlog()
    expect(journal.refuse(1000)).toMatch(/backlog in Redis is full .*12 strings.*raise BACKLOG_MAX_MB/)
  })
})
