// QUEUE=bullmq, the marks of status updates and the strings of this instance that sent them, after
// a review: a release of held strings removes, with a finished copy's job, the mark a lost instance
// left on that copy (left, it kept every arrival of the string behind the copy queued again until
// the sweep with the parked strings); the strings an instance sent updates for are forgotten once
// BullMQ can no longer tell of their end here (given back to wait out a back-off, or their lock
// lost), instead of staying for the life of the process; and a batch's finished jobs are replaced
// in one round trip, not one a job. Each test has a queue of its own, removed afterwards.
import { afterEach, expect, it } from 'vitest'
import type { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { BullmqJournal, HELD, redisClient, type BullmqJournalOptions } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import { describeWithService, forgetJournalQueue } from '../support/services.js'
import { orgBatch, orgJob } from '../support/jobs.js'

const open: BullmqJournal[] = []
const clients: Redis[] = []
const queueOf = (j: BullmqJournal) => (j as unknown as { queue: Queue }).queue
/** The strings this instance sent updates for (`sending`), by string key. */
const sentOf = (j: BullmqJournal) => (j as unknown as { sent: Map<string, unknown> }).sent
afterEach(async () => {
  for (const journal of open.splice(0)) {
    await forgetJournalQueue(journal)
    await journal.close()
  }
  for (const client of clients.splice(0)) client.disconnect()
})

const job = orgJob
const batch = orgBatch
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

await describeWithService('redis', 'BullMQ journal: marks of status updates, and finished jobs replaced', (url) => {
  let seq = 0
  function journal(o: Partial<BullmqJournalOptions> = {}): BullmqJournal {
    const j = new BullmqJournal({
      redisUrl: url, name: `marks-${process.pid}-${Date.now()}-${seq++}`, concurrency: 4, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 60_000, log: silentLogger(), ...o,
    })
    open.push(j)
    return j
  }
  function redis(): Redis {
    const client = redisClient(url)
    clients.push(client)
    return client
  }

  it('a release removes the mark a lost instance left on the held copy with its job: an arrival of the string is then absorbed, not kept behind the copy queued again', async () => {
    const raw = redis()
    const j = journal()
    const key = (name: string) => queueOf(j).toKey(name)
    const taken: Job[] = []
    j.start((x) => taken.push(x))
    await j.append('a', batch('A', 1, 2))
    await expect.poll(() => taken.length).toBe(2)
    await j.hold(taken.splice(0), Date.now() + 60_000)
    for (const i of [1, 2]) await expect.poll(() => raw.hget(key(job('A', i).key), 'returnvalue')).toBe(JSON.stringify(HELD))
    // As an instance lost between a copy's end and letting go of its mark leaves it (a mark names
    // its copy by the job's timestamp); 2's mark names another copy of the string.
    const copy = (await raw.hget(key(job('A', 1).key), 'timestamp'))!
    await raw.hset(key('sending'), job('A', 1).key, copy, job('A', 2).key, 'another copy')
    expect(await j.release('a')).toBe(2)
    expect(await raw.hget(key('sending'), job('A', 1).key)).toBeNull()
    expect(await raw.hget(key('sending'), job('A', 2).key)).toBe('another copy')
    // Queued again as they were held, and taken.
    await expect.poll(() => taken.map((t) => t.stringId).sort()).toEqual([1, 2])
    expect(taken.find((t) => t.stringId === 1)!.recheck).toBeFalsy()
    await j.append('b', [job('A', 1)])
    expect(await raw.hlen(key('kept'))).toBe(0)
  })

  it('what was kept behind that mark goes with it: the copy queued again answers for it, checked with the service first', async () => {
    const raw = redis()
    const j = journal()
    const key = (name: string) => queueOf(j).toKey(name)
    const taken: Job[] = []
    j.start((x) => taken.push(x))
    await j.append('a', [job('B', 1)])
    await expect.poll(() => taken.length).toBe(1)
    await j.hold(taken.splice(0), Date.now() + 60_000)
    await expect.poll(() => raw.hget(key(job('B', 1).key), 'returnvalue')).toBe(JSON.stringify(HELD))
    const copy = (await raw.hget(key(job('B', 1).key), 'timestamp'))!
    await raw.hset(key('sending'), job('B', 1).key, copy)
    await raw.hset(key('kept'), job('B', 1).key, JSON.stringify({ ...job('B', 1), batchId: 'sent back' }))
    expect(await j.release('b')).toBe(1)
    expect(await raw.hlen(key('sending'))).toBe(0)
    expect(await raw.hlen(key('kept'))).toBe(0)
    await expect.poll(() => taken.length).toBe(1)
    expect(taken[0]).toMatchObject({ stringId: 1, recheck: true })
  })

  it('forgets a string it sent the update of once BullMQ can no longer tell of its end here: its lock lost (lockMs after it settled), or given back to wait out a back-off (lockMs after the back-off)', async () => {
    const raw = redis()
    const j = journal({ lockMs: 1000 })
    const taken: Job[] = []
    j.start((x) => taken.push(x))
    await j.append('a', batch('C', 1, 4))
    await expect.poll(() => taken.length).toBe(4)
    const [a, b, c, d] = [1, 2, 3, 4].map((i) => taken.find((t) => t.stringId === i)!)
    await j.sending([a!, b!])
    // Nothing more is taken (b, moved back to the queue by BullMQ's stalled check, stays there).
    await j.stopTaking()
    // a waits out a back-off: it may come back here and end here, so it is kept past the back-off.
    await j.delay([a!], 1200)
    // b's lock is lost (another instance took it over once it lapsed): its completion here fails.
    await raw.del(queueOf(j).toKey(`${b!.key}:lock`))
    await j.done(b!)
    await sleep(300)
    expect(await raw.hget(queueOf(j).toKey(b!.key), 'finishedOn')).toBeNull()
    expect([...sentOf(j).keys()].sort()).toEqual([a!.key, b!.key].sort())
    await sleep(1000)
    // Whatever settles next, past lockMs, forgets b; a's back-off is not over a lockMs ago yet.
    await j.done(c!)
    await expect.poll(() => [...sentOf(j).keys()]).toEqual([a!.key])
    // Past the back-off and lockMs after it, with room to spare on a busy machine.
    await sleep(1600)
    await j.done(d!)
    await expect.poll(() => sentOf(j).size).toBe(0)
  })

  it('a job whose completion failed here (its lock lost) is no longer waited for: close() returns at once, and nothing of it stays', async () => {
    const raw = redis()
    const j = journal()
    const taken: Job[] = []
    j.start((x) => taken.push(x))
    await j.append('a', [job('F', 1)])
    await expect.poll(() => taken.length).toBe(1)
    await j.stopTaking()
    // Another instance took it over once its lock lapsed: BullMQ's completion here fails.
    await raw.del(queueOf(j).toKey(`${taken[0]!.key}:lock`))
    await j.done(taken[0]!)
    await sleep(300)
    expect(await raw.hget(queueOf(j).toKey(taken[0]!.key), 'finishedOn')).toBeNull()
    expect((j as unknown as { underWay: { completing: Set<string> } }).underWay.completing.size).toBe(0)
    await forgetJournalQueue(open.splice(open.indexOf(j), 1)[0])
    const started = Date.now()
    await j.close()
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it("removes a batch's finished jobs all at once, not one after another, and a mark left on one goes with what was kept behind it", async () => {
    const raw = redis()
    const j = journal({ concurrency: 40 })
    const key = (name: string) => queueOf(j).toKey(name)
    j.start((x) => void j.done(x))
    await j.append('a', batch('D', 0, 40))
    await expect.poll(() => raw.zcard(key('completed')), { timeout: 10_000 }).toBe(40)
    // The copies queued again wait (taken and cut off by the queue's removal, they would hold close() up).
    await j.stopTaking()
    await raw.hset(key('sending'), job('D', 5).key, 'a copy whose instance was lost')
    await raw.hset(key('kept'), job('D', 5).key, JSON.stringify(job('D', 5)))
    // Another instance, which takes nothing: its connection carries the batch's writes alone.
    const other = journal({ name: queueOf(j).name })
    await other.append('warm', [job('E', 0)])
    // Its removals of the finished copies: all under way together, not one after another.
    const q = queueOf(other)
    const remove = q.remove.bind(q)
    let underWay = 0
    let most = 0
    q.remove = async (...args: Parameters<typeof q.remove>) => {
      most = Math.max(most, ++underWay)
      try {
        return await remove(...args)
      } finally {
        underWay--
      }
    }
    try {
      await other.append('again', batch('D', 0, 40))
    } finally {
      q.remove = remove
    }
    expect(most).toBe(40)
    // Each replaced: queued again, to be checked with the service.
    for (const i of [0, 5, 39]) expect((await queueOf(other).getJob(job('D', i).key))?.data).toMatchObject({ recheck: true })
    expect(await raw.hlen(key('sending'))).toBe(0)
    expect(await raw.hlen(key('kept'))).toBe(0)
  })
})

await describeWithService('redis', 'BullMQ journal: finished jobs replaced without marks', (url) => {
  // An ioredis multi() holds its MULTI from the start (length 1): a transaction nothing was added
  // to is still one round trip (MULTI, EXEC) when executed.
  it('a batch whose finished jobs carry no mark sends no empty transaction after removing them', async () => {
    const j = new BullmqJournal({ redisUrl: url, name: `marks-empty-${process.pid}-${Date.now()}`, concurrency: 8, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 60_000, log: silentLogger() })
    open.push(j)
    const raw = redisClient(url)
    clients.push(raw)
    j.start((x) => void j.done(x))
    await j.append('a', batch('F', 0, 5))
    await expect.poll(() => raw.zcard(queueOf(j).toKey('completed')), { timeout: 10_000 }).toBe(5)
    await j.stopTaking()
    const client = (j as unknown as { queueClient: Redis }).queueClient
    const multi = client.multi.bind(client)
    /** Commands besides MULTI in each transaction executed. */
    const executed: number[] = []
    client.multi = ((...args: Parameters<typeof client.multi>) => {
      const tx = multi(...args)
      const exec = tx.exec.bind(tx)
      tx.exec = ((...a: Parameters<typeof tx.exec>) => (executed.push(tx.length - 1), exec(...a))) as typeof tx.exec
      return tx
    }) as typeof client.multi
    try {
      await j.append('again', batch('F', 0, 5))
    } finally {
      client.multi = multi
    }
    expect(executed.filter((n) => n === 0)).toEqual([])
    // Replaced all the same: queued again, to be checked with the service.
    for (const i of [0, 4]) expect((await queueOf(j).getJob(job('F', i).key))?.data).toMatchObject({ recheck: true })
  })
})
