// QUEUE=bullmq, one instance against the local Redis: what a string's BullMQ job holds (its turn as
// priority, the attempts and back-off set, how long a finished one is kept), what the worker hands
// to the pipeline, a string parked when its attempts ran out (logged, counted), and the exact 503
// reasons of the budget and of an organization's share, at their limits. Each test has a queue of
// its own, removed afterwards; skipped with the reason when Redis is not reachable.
import { afterEach, expect, it } from 'vitest'
import type { Queue } from 'bullmq'
import { BullmqJournal, FAIR_TURN, REDIS_BYTES_PER_STRING, type BullmqJournalOptions } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger, silentLogger } from '../../src/util/logger.js'
import { describeWithService, forgetJournalQueue } from '../support/services.js'
import { orgBatch, orgJob } from '../support/jobs.js'

const open: BullmqJournal[] = []
const queueOf = (j: BullmqJournal) => (j as unknown as { queue: Queue }).queue
afterEach(async () => {
  for (const journal of open.splice(0)) {
    await forgetJournalQueue(journal)
    await journal.close()
  }
})

const job = orgJob
const batch = orgBatch
const settle = () => new Promise((r) => setTimeout(r, 300))

await describeWithService('redis', 'BullMQ journal: jobs, parking and the budget', (url) => {
  function journal(o: Partial<BullmqJournalOptions> = {}): BullmqJournal {
    const j = new BullmqJournal({
      redisUrl: url, name: `books-${process.pid}-${Date.now()}-${open.length}`, concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000, log: silentLogger(), ...o,
    })
    open.push(j)
    return j
  }

  it("each string's job: its turn as priority, the attempts and back-off set, kept as long as the de-duplication remembers", async () => {
    const j = journal({ attempts: 4, backoffMs: 250, dedupeTtlMs: 90_500 })
    await j.append('a', batch('A', 0, 2 * FAIR_TURN + 1))
    await j.append('b', batch('B', 0, 1))
    const stored = async (organization: string, i: number) => (await queueOf(j).getJob(`${organization}|1|2|de|${i}|1`))!
    const first = await stored('A', 0)
    expect(first.opts).toMatchObject({ priority: 1, attempts: 4, backoff: { type: 'exponential', delay: 250 }, removeOnComplete: { age: 91 }, removeOnFail: false })
    expect(first.name).toBe('string')
    expect(first.data).toMatchObject({ organizationId: 'A', stringId: 0 })
    expect((await stored('A', FAIR_TURN - 1)).opts.priority).toBe(1)
    expect((await stored('A', FAIR_TURN)).opts.priority).toBe(2)
    expect((await stored('A', 2 * FAIR_TURN)).opts.priority).toBe(3)
    // B is new: it starts at the clock (turn 1), not behind A.
    expect((await stored('B', 0)).opts.priority).toBe(1)
    expect(await j.backlog()).toBe(2 * FAIR_TURN + 2)
    expect(j.size).toBe(2 * FAIR_TURN + 2)
  })

  it('keeps a finished job at least a second, and turns past the highest priority share it', async () => {
    const j = journal({ dedupeTtlMs: 0 })
    const client = (j as unknown as { queueClient: { hset(k: string, f: string, v: string): Promise<number> } }).queueClient
    await client.hset(queueOf(j).toKey('fair:steps'), 'A', JSON.stringify({ '1|2': { p: (2 ** 21 + 5) * FAIR_TURN, m: [] } }))
    await j.append('a', batch('A', 0, 1))
    const stored = (await queueOf(j).getJob('A|1|2|de|0|1'))!
    expect(stored.opts).toMatchObject({ priority: 2 ** 21 - 1, removeOnComplete: { age: 1 } })
  })

  it('keeps at most DEDUPE_MAX finished jobs, the newest, however young the rest (a drained backlog does not stay in Redis)', async () => {
    const j = journal({ dedupeTtlMs: 600_000, dedupeMax: 3 })
    const taken: Job[] = []
    j.start((x) => {
      taken.push(x)
      void j.done(x)
    })
    await j.append('a', batch('A', 0, 10))
    await expect.poll(() => taken.length, { timeout: 10_000 }).toBe(10)
    await expect.poll(async () => (await settle(), await j.backlog()), { timeout: 10_000 }).toBe(0)
    const completed = await queueOf(j).getCompleted()
    expect(completed.map((c) => c.data.stringId).sort((a, b) => a - b)).toEqual([7, 8, 9])
    // Each job's hash went with it, not only its place in the completed set.
    expect(await queueOf(j).getJob('A|1|2|de|0|1')).toBeUndefined()
  })

  it('at start, removes the finished jobs past DEDUPE_MAX (oldest first) before it takes a string', async () => {
    // An instance without the bound (an earlier version) leaves 30 finished jobs.
    const name = `books-trim-${process.pid}-${Date.now()}`
    const before = journal({ name, dedupeTtlMs: 600_000 })
    before.start((x) => void before.done(x))
    await before.append('a', batch('A', 0, 30))
    await expect.poll(async () => (await queueOf(before).getJobCounts('completed')).completed, { timeout: 10_000 }).toBe(30)
    await before.close()
    // The next keeps 5: trimmed as it starts, though nothing has completed since.
    const after = journal({ name, dedupeTtlMs: 600_000, dedupeMax: 5 })
    const taken: Job[] = []
    after.start((x) => {
      taken.push(x)
      void after.done(x)
    })
    await expect.poll(async () => (await queueOf(after).getJobCounts('completed')).completed, { timeout: 10_000 }).toBe(5)
    expect((await queueOf(after).getCompleted()).map((c) => c.data.stringId).sort((a, b) => a - b)).toEqual([25, 26, 27, 28, 29])
    // And it then takes strings as ever.
    await after.append('b', batch('A', 100, 2))
    await expect.poll(() => taken.length, { timeout: 10_000 }).toBe(2)
  })

  it('hands each string to the pipeline with its BullMQ job as batch and its attempts at 0; done completes it', async () => {
    const j = journal()
    const taken: Job[] = []
    j.start((x) => {
      taken.push(x)
      void j.done(x)
    })
    await j.append('a', batch('A', 0, 2))
    await expect.poll(() => taken.length, { timeout: 10_000 }).toBe(2)
    expect(taken.map((x) => [x.stringId, x.batchId, x.attempts])).toEqual([[0, 'A|1|2|de|0|1', 0], [1, 'A|1|2|de|1|1', 0]])
    await expect.poll(async () => (await settle(), await j.backlog()), { timeout: 10_000 }).toBe(0)
    expect(await queueOf(j).getJobCounts('completed')).toEqual({ completed: 2 })
    expect(j.parked).toBe(0)
  })

  it('a string parked when its attempts ran out: logged with the reason, kept in the failed set and counted', async () => {
    const lines: Array<Record<string, unknown>> = []
    const events: string[] = []
    const log = createLogger({ level: 'info', destination: { write: (l: string) => void (lines.push(JSON.parse(l)), events.push('logged')) } as never })
    const j = journal({ attempts: 2, backoffMs: 200, log })
    j.start((x) => {
      events.push(`try ${x.stringId}`)
      void j.park(x, 'the pipeline failed')
    })
    await j.append('a', batch('A', 0, 1))
    await expect.poll(() => lines.length, { timeout: 10_000 }).toBe(1)
    await new Promise((r) => setTimeout(r, 300))
    // Logged once, when the last attempt failed, not at the first.
    expect(events).toEqual(['try 0', 'try 0', 'logged'])
    expect(lines[0]).toMatchObject({ level: 50, job: 'A|1|2|de|0|1', reason: 'the pipeline failed', msg: 'string parked: BullMQ attempts ran out (kept in the failed set)' })
    await expect.poll(async () => (await settle(), await j.backlog(), j.parked), { timeout: 10_000 }).toBe(1)
    expect(j.size).toBe(0)
    // Done or parked again: nothing waits for it any more.
    await j.done(job('A', 0))
    await j.park(job('A', 0), 'again')
  })

  it('the budget: refused past BACKLOG_MAX_MB with the figures, never while Redis holds nothing, never without a budget', async () => {
    const j = journal({ maxBytes: 12 * REDIS_BYTES_PER_STRING })
    expect(j.refuse(100 * REDIS_BYTES_PER_STRING)).toBeUndefined()
    await j.append('a', batch('A', 0, 10))
    await settle()
    await j.backlog()
    expect(j.refuse(2 * REDIS_BYTES_PER_STRING)).toBeUndefined()
    expect(j.refuse(2 * REDIS_BYTES_PER_STRING + 1)).toBe(
      "the backlog in Redis is full (about 0 MB for 10 strings, BACKLOG_MAX_MB=0): strings are not being reported as fast as they arrive. Check the API's health, or give Redis more memory and raise BACKLOG_MAX_MB",
    )
    const unbounded = journal()
    await unbounded.append('a', batch('A', 0, 10))
    await settle()
    await unbounded.backlog()
    expect(unbounded.refuse(2 ** 40, 'A')).toBeUndefined()
  })

  it("an organization's share: refused at its limit with the figures; the waiting strings per organization", async () => {
    const j = journal({ maxBytes: 100 * REDIS_BYTES_PER_STRING, organizationShare: 0.25 })
    await j.append('a', batch('A', 0, 20))
    await j.append('b', batch('B', 0, 3))
    await settle()
    await j.backlog()
    expect([...j.waitingPerOrganization()].sort()).toEqual([['A', 20], ['B', 3]])
    // The share is 25 strings' worth.
    expect(j.refuse(5 * REDIS_BYTES_PER_STRING, 'A')).toBeUndefined()
    expect(j.refuse(5 * REDIS_BYTES_PER_STRING + 1, 'A')).toBe(
      "this organization's share of the backlog in Redis is full (about 0 MB of 0 MB, BACKLOG_ORGANIZATION_SHARE of BACKLOG_MAX_MB): its strings are not being reported as fast as they arrive. Check whether it is held (operator page), or give Redis more memory and raise BACKLOG_MAX_MB",
    )
    expect(j.refuse(5 * REDIS_BYTES_PER_STRING + 1)).toBeUndefined()
    // An organization with nothing waiting may send a batch larger than its share.
    expect(j.refuse(50 * REDIS_BYTES_PER_STRING, 'C')).toBeUndefined()
  })

  it('the waiting strings of an organization are never more than the whole backlog', async () => {
    const j = journal()
    await j.append('a', batch('A', 0, 5))
    // Three of them leave the queue by other means (removed by an operator): their positions stay.
    for (const x of batch('A', 0, 3)) await queueOf(j).remove(x.key)
    await settle()
    expect(await j.backlog()).toBe(2)
    expect(j.waitingPerOrganization().get('A')).toBe(2)
  })
})
