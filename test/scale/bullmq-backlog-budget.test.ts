// Issue 16 with QUEUE=bullmq: Redis holds the backlog, so BACKLOG_MAX_MB bounds Redis memory as
// estimated from the strings waiting; past it, a batch is refused with 503. The estimate assumes UI
// strings, so Redis's own maxmemory is watched too: past REDIS_MEMORY_CEILING of it, batches are
// refused before Redis refuses a write. Its own queue name on the shared Redis, removed afterwards;
// the ceiling on a Redis of its own, started here with a small maxmemory.
import { afterAll, expect, it } from 'vitest'
import { BullmqJournal, REDIS_BYTES_PER_STRING, REDIS_MEMORY_CEILING, redisClient, redisMemoryOf } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger, silentLogger } from '../../src/util/logger.js'
import { redisServer, startPrivateRedis } from '../support/private-redis.js'
import { describeWithService, probeTcp } from '../support/services.js'

const job = (i: number, text = `t${i}`): Job => ({ key: `o|1|2|de|${i}|1`, organizationId: 'o', domain: 'acme', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1, string: { key: `k${i}`, context: '', maxLength: 0, text, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] }, sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0 })
const obliterate = (journal: BullmqJournal) => (journal as unknown as { queue: { obliterate(o: { force: boolean }): Promise<void> } }).queue.obliterate({ force: true }).catch(() => undefined)

it('reads used_memory and maxmemory from INFO memory', () => {
  expect(redisMemoryOf('# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:33554432\r\nmaxmemory_human:32.00M\r\n')).toEqual({ used: 1048576, max: 33554432 })
  expect(redisMemoryOf('# Memory\r\nused_memory:5\r\nmaxmemory:0\r\n')).toEqual({ used: 5, max: 0 })
  expect(redisMemoryOf('# Memory\r\nused_memory_peak:5\r\n')).toBeUndefined()
  // Replication and AOF buffers are not counted against maxmemory by Redis either.
  expect(redisMemoryOf('used_memory:9000\r\nmem_not_counted_for_evict:1000\r\nmaxmemory:10000\r\n')).toEqual({ used: 8000, max: 10000 })
})

await describeWithService('redis', 'BullMQ backlog budget', (url) => {
  const name = `backlog-budget-${process.pid}-${Date.now()}`
  const journal = new BullmqJournal({ redisUrl: url, name, concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, maxBytes: 10 * REDIS_BYTES_PER_STRING, log: silentLogger() })
  afterAll(async () => {
    await obliterate(journal)
    await journal.close()
  })

  it('takes batches while the estimated Redis memory is under BACKLOG_MAX_MB, then refuses with a reason that says what to do', async () => {
    expect(journal.refuse(1000)).toBeUndefined()
    await journal.append('b1', Array.from({ length: 12 }, (_, i) => job(i)))
    await new Promise((r) => setTimeout(r, 300))
    await journal.backlog()
    expect(journal.refuse(1000)).toMatch(/backlog in Redis is full .*12 strings.*raise BACKLOG_MAX_MB/)
  })
})

await describeWithService('redis', 'BullMQ backlog: Redis nearly full', () => {
  const MAXMEMORY = 24 * 2 ** 20
  const stops: Array<() => void> = []
  afterAll(() => {
    for (const stop of stops) stop()
  })
  const needsServer = redisServer || !process.env.CI ? it.skipIf(!redisServer) : it
  if (!redisServer) console.warn('[switchyard tests] redis-server is not installed: skipping the tests on a Redis of their own (install the redis-server package, or run .ci/run)')

  needsServer('refuses long texts before Redis does, though the budget\'s estimate says there is room; says what to do once at start; keeps every string it took', async () => {
    const { socket, stop } = await startPrivateRedis(MAXMEMORY)
    stops.push(stop)
    const lines: Array<{ msg: string }> = []
    const log = createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string }) } as never })
    // A budget of 1 GB: by its estimate (1,700 bytes a string) there is room for 600,000 strings.
    const journal = new BullmqJournal({ redisUrl: socket, name: 'nearly-full', concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, maxBytes: 2 ** 30, log })
    const text = 'Ein langer Absatz, wie ihn Hilfeseiten haben. '.repeat(400) // 18,400 characters
    let taken = 0
    let reason: string | undefined
    try {
      // As the webhook route does: ask, then append; batches of 50 long texts (about 1 MB each).
      for (let b = 0; b < 200 && !reason; b++) {
        reason = journal.refuse(50 * (text.length + 300), 'o')
        if (reason) break
        await journal.append(`b${b}`, Array.from({ length: 50 }, (_, i) => job(b * 50 + i, text)))
        taken += 50
      }
      expect(reason).toMatch(/^Redis is nearly full \(\d+ MB of its maxmemory 24 MB, \d+ strings waiting; batches are refused past 90%\).*give Redis more maxmemory or BACKLOG_MAX_MB less/)
      // Refused with room to spare: Redis never refused a write (append would have thrown), and
      // nothing taken is missing.
      const redis = redisClient(socket)
      try {
        const memory = redisMemoryOf(await redis.info('memory'))!
        expect(memory.used).toBeLessThan(MAXMEMORY)
        expect(memory.used).toBeGreaterThan(MAXMEMORY * REDIS_MEMORY_CEILING * 0.8)
        expect(taken).toBeGreaterThan(200)
        const counts = await (journal as unknown as { queue: { getJobCounts(...t: string[]): Promise<Record<string, number>> } }).queue.getJobCounts('waiting', 'prioritized')
        expect((counts.waiting ?? 0) + (counts.prioritized ?? 0)).toBe(taken)
      } finally {
        redis.disconnect()
      }
      expect(lines.filter((l) => l.msg.startsWith('Redis\'s maxmemory is smaller than BACKLOG_MAX_MB and the finished jobs need'))).toHaveLength(1)
    } finally {
      await obliterate(journal)
      await journal.close()
    }
  })

  needsServer('with no string waiting, Redis filled by other keys past 90%: batches are still taken until Redis itself would refuse them, then refused naming what fills it', async () => {
    const { socket, stop } = await startPrivateRedis(MAXMEMORY)
    stops.push(stop)
    const redis = redisClient(socket)
    const journal = new BullmqJournal({ redisUrl: socket, name: 'full-of-others', concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, log: silentLogger() })
    try {
      // Other keys, 16 KB at a time, until Redis counts `upTo` bytes (stopping short of maxmemory,
      // so that the worker's own writes still go through).
      const fill = async (upTo: number) => {
        for (let i = 0; redisMemoryOf(await redis.info('memory'))!.used < upTo; i++) await redis.set(`other:${upTo}:${i}`, 'x'.repeat(16 * 1024))
      }
      await fill(MAXMEMORY * 0.93)
      await journal.backlog()
      expect(journal.waiting()).toBe(0)
      expect(journal.refuse(50_000, 'o')).toBeUndefined()
      await fill(MAXMEMORY - 300_000)
      await new Promise((r) => setTimeout(r, 300))
      await journal.backlog()
      // A batch that still fits is taken; one that would take Redis past maxmemory is not.
      expect(journal.refuse(100_000, 'o')).toBeUndefined()
      expect(journal.refuse(400_000, 'o')).toMatch(/^Redis is full \(\d+ MB of its maxmemory 24 MB\) with no strings waiting: the room is taken by 0 parked strings .*DEDUPE_MAX.*other keys/)
    } finally {
      await obliterate(journal)
      await journal.close()
      redis.disconnect()
    }
  })
})
