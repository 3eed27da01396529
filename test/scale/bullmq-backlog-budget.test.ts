// Issue 16 with QUEUE=bullmq: Redis holds the backlog, so BACKLOG_MAX_MB bounds Redis memory as
// estimated from the strings waiting; past it, a batch is refused with 503. The estimate assumes UI
// strings, so Redis's own maxmemory is watched too: past REDIS_MEMORY_CEILING of it, batches are
// refused before Redis refuses a write. Its own queue name on the shared Redis, removed afterwards;
// the ceiling on a Redis of its own, started here with a small maxmemory.
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { afterAll, expect, it } from 'vitest'
import { BullmqJournal, REDIS_BYTES_PER_STRING, REDIS_MEMORY_CEILING, redisClient, redisMemoryOf } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger, silentLogger } from '../../src/util/logger.js'
import { describeWithService, probeTcp } from '../support/services.js'

const job = (i: number, text = `t${i}`): Job => ({ key: `o|1|2|de|${i}|1`, organizationId: 'o', domain: 'acme', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1, string: { key: `k${i}`, context: '', maxLength: 0, text, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] }, sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0 })
const obliterate = (journal: BullmqJournal) => (journal as unknown as { queue: { obliterate(o: { force: boolean }): Promise<void> } }).queue.obliterate({ force: true }).catch(() => undefined)

it('reads used_memory and maxmemory from INFO memory', () => {
  expect(redisMemoryOf('# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:33554432\r\nmaxmemory_human:32.00M\r\n')).toEqual({ used: 1048576, max: 33554432 })
  expect(redisMemoryOf('# Memory\r\nused_memory:5\r\nmaxmemory:0\r\n')).toEqual({ used: 5, max: 0 })
  expect(redisMemoryOf('# Memory\r\nused_memory_peak:5\r\n')).toBeUndefined()
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

/** A free port on 127.0.0.1 (the OS picks it). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

await describeWithService('redis', 'BullMQ backlog: Redis nearly full', () => {
  const MAXMEMORY = 24 * 2 ** 20
  let server: ChildProcess | undefined
  let url = ''
  afterAll(() => {
    server?.kill('SIGKILL')
  })

  it('refuses long texts before Redis does, though the budget\'s estimate says there is room; says what to do once at start; keeps every string it took', async () => {
    const port = await freePort()
    // redis-server comes with the Redis the suite needs (.ci/run installs it); no file kept.
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory', String(MAXMEMORY), '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' })
    const exited = new Promise<Error>((resolve) => server!.once('error', resolve).once('exit', (code) => resolve(new Error(`redis-server exited with ${code}`))))
    for (let i = 0; !(await probeTcp('127.0.0.1', port)); i++) {
      if (i > 100) throw await Promise.race([exited, Promise.resolve(new Error('redis-server did not start'))])
      await new Promise((r) => setTimeout(r, 50))
    }
    url = `redis://127.0.0.1:${port}`
    const lines: Array<{ msg: string }> = []
    const log = createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string }) } as never })
    // A budget of 1 GB: by its estimate (1,700 bytes a string) there is room for 600,000 strings.
    const journal = new BullmqJournal({ redisUrl: url, name: 'nearly-full', concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, maxBytes: 2 ** 30, log })
    const text = 'Ein langer Absatz, wie ihn Hilfeseiten haben. '.repeat(400) // 18.8 KB
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
      const redis = redisClient(url)
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
      expect(lines.filter((l) => l.msg.startsWith('BACKLOG_MAX_MB is more than 90% of Redis\'s maxmemory'))).toHaveLength(1)
    } finally {
      await obliterate(journal)
      await journal.close()
    }
  })
})
