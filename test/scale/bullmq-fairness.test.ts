// Issue 16 with QUEUE=bullmq: organizations, and the steps of each, are served in turn (a second
// organization's or step's small batch is not kept behind the first's large backlog, and the first
// is not starved by a newcomer's large one), each organization has its share of the backlog
// budget, and the age of its oldest waiting string is known. Against the local Redis:
// skipped with the reason when it is not reachable, a failure instead when CI is set.
import type { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { afterEach, expect, it } from 'vitest'
import { BullmqJournal, FAIR_TURN, flowsWaiting, REDIS_BYTES_PER_STRING } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import { describeWithService, forgetJournalQueue } from '../support/services.js'

const open: BullmqJournal[] = []
afterEach(async () => {
  for (const journal of open.splice(0)) {
    await forgetJournalQueue(journal)
    await journal.close()
  }
})

function journal(url: string, o: { maxStrings?: number; share?: number } = {}): BullmqJournal {
  const j = new BullmqJournal({
    redisUrl: url, name: `fairness-${process.pid}-${Date.now()}-${open.length}`, concurrency: 1, attempts: 1, backoffMs: 1000, lockMs: 30_000, dedupeTtlMs: 1000,
    ...(o.maxStrings ? { maxBytes: o.maxStrings * REDIS_BYTES_PER_STRING } : {}), ...(o.share ? { organizationShare: o.share } : {}), log: silentLogger(),
  })
  open.push(j)
  return j
}

const job = (organization: string, i: number, stepId = 2): Job => ({
  key: `${organization}|1|${stepId}|de|${i}|1`, organizationId: organization, domain: organization.toLowerCase(), moduleKey: 'm', projectId: 1, stepId, languageId: 'de', stringId: i, revision: 1,
  string: { key: `k${i}`, context: '', maxLength: 0, text: `t${i}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
  sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0,
})
const batch = (organization: string, from: number, n: number, stepId = 2) => Array.from({ length: n }, (_, i) => job(organization, from + i, stepId))
const queueOf = (j: BullmqJournal) => (j as unknown as { queue: Queue }).queue
const clientOf = (j: BullmqJournal) => (j as unknown as { queueClient: Redis }).queueClient
/** The backlog counted afresh (the counts are refreshed at most every 250 ms). */
const counted = async (j: BullmqJournal) => {
  await new Promise((r) => setTimeout(r, 300))
  await j.backlog()
}
/** The BullMQ priority (turn) each string of a batch was queued at. */
const turns = async (j: BullmqJournal, jobs: Job[]) => Promise.all(jobs.map(async (x) => (await queueOf(j).getJob(x.key))!.opts.priority ?? 0))

/** Take jobs one at a time (concurrency 1), each done after `ms`; the organizations in the order taken. */
function take(j: BullmqJournal, ms = 0): { order: string[]; until(n: number): Promise<void> } {
  const order: string[] = []
  j.start((job) => {
    order.push(job.organizationId)
    if (ms) setTimeout(() => void j.done(job), ms)
    else void j.done(job)
  })
  return {
    order,
    async until(n) {
      const deadline = Date.now() + 60_000
      while (order.length < n) {
        if (Date.now() > deadline) throw new Error(`only ${order.length} of ${n} jobs taken`)
        await new Promise((r) => setTimeout(r, 20))
      }
    },
  }
}

await describeWithService('redis', 'BullMQ: organizations in turn, and a share of the budget each', (url) => {
  it("a second organization's small batch is taken within a turn, not after the first's backlog", async () => {
    const j = journal(url)
    await j.append('a', batch('A', 0, 3 * FAIR_TURN))
    await j.append('b', batch('B', 0, 20))
    const t = take(j)
    await t.until(3 * FAIR_TURN + 20)
    // First in, first out would take B's strings last (positions 300-319).
    const lastB = t.order.lastIndexOf('B')
    expect(t.order.filter((o) => o === 'B')).toHaveLength(20)
    expect(lastB).toBeLessThan(FAIR_TURN + 20 + 5)
  }, 90_000)

  it('a newcomer with a large backlog takes turns with the organization already waiting, oldest first within each', async () => {
    const j = journal(url)
    await j.append('a', batch('A', 0, 4 * FAIR_TURN))
    // 5 ms a string: A's 400 take 2 s, so B arrives well before A's last.
    const t = take(j, 5)
    await t.until(FAIR_TURN + 10)
    await new Promise((r) => setTimeout(r, 150))
    // B arrives while A is in its second turn: B's strings start at the clock (not before A's
    // current turn: B's first comes after A's 200th), and then the two take turns: B's first
    // before A's last (first in, first out would take every A first).
    await j.append('b', batch('B', 0, 4 * FAIR_TURN))
    await t.until(8 * FAIR_TURN)
    const firstB = t.order.indexOf('B')
    expect(firstB).toBeGreaterThanOrEqual(2 * FAIR_TURN - 5)
    expect(firstB).toBeLessThan(t.order.lastIndexOf('A'))
    expect(t.order.lastIndexOf('A')).toBeGreaterThan(4 * FAIR_TURN)
  }, 90_000)

  it('one organization filling its share is refused with a reason; another is still taken; the count resets when the queue is empty', async () => {
    const j = journal(url, { maxStrings: 100, share: 0.5 })
    await j.append('a', batch('A', 0, 60))
    await j.backlog()
    await counted(j)
    expect(j.waitingPerOrganization().get('A')).toBe(60)
    expect(j.refuse(1000, 'A')).toMatch(/this organization's share of the backlog in Redis is full .*BACKLOG_ORGANIZATION_SHARE/)
    expect(j.refuse(1000, 'B')).toBeUndefined()
    const t = take(j)
    await t.until(60)
    await new Promise((r) => setTimeout(r, 500))
    await j.backlog()
    expect(j.size).toBe(0)
    expect(j.waitingPerOrganization().size).toBe(0)
    expect(j.refuse(1000, 'A')).toBeUndefined()
  }, 90_000)

  it("another step's small batch is taken within a turn, not after its organization's backlog of one step", async () => {
    const j = journal(url)
    await j.append('a', batch('A', 0, 3 * FAIR_TURN, 2))
    await j.append('b', batch('A', 0, 20, 3))
    const steps: number[] = []
    j.start((x) => {
      steps.push(x.stepId)
      void j.done(x)
    })
    await expect.poll(() => steps.length, { timeout: 60_000, interval: 20 }).toBe(3 * FAIR_TURN + 20)
    // First in, first out (or turns per organization only) would take step 3's strings last.
    expect(steps.filter((s) => s === 3)).toHaveLength(20)
    expect(steps.lastIndexOf(3)).toBeLessThan(FAIR_TURN + 20 + 5)
  }, 90_000)

  it("an organization's steps share its turn: spaced by the steps waiting at each position, back to one where the others end", async () => {
    const j = journal(url)
    const s2 = batch('A', 0, 2 * FAIR_TURN, 2)
    const s3 = batch('A', 0, 2 * FAIR_TURN, 3)
    await j.append('a', s2)
    // Alone, step 2's strings take one turn per FAIR_TURN strings (positions 0-199).
    expect(await turns(j, s2)).toEqual(s2.map((_, i) => Math.floor(i / FAIR_TURN) + 1))
    // Step 3 comes while step 2 waits: from the clock (position 0), every other position while
    // step 2's strings last (0-198), then one a position (200-299).
    await j.append('b', s3)
    expect(await turns(j, s3)).toEqual(s3.map((_, i) => (i < FAIR_TURN ? Math.floor((2 * i) / FAIR_TURN) + 1 : 3)))
    // Step 2's next strings, after its last, are spaced by the two steps while step 3's last
    // (299): 200, 202, ... 218.
    const more = batch('A', 1000, 10, 2)
    await j.append('c', more)
    expect(await turns(j, more)).toEqual(more.map(() => 3))
    // Another organization is not held back by A's two steps: it starts at the clock.
    await j.append('d', batch('B', 0, 5))
    expect(await turns(j, batch('B', 0, 5))).toEqual([1, 1, 1, 1, 1])
    // A's waiting strings, counted from what each step keeps: all of them.
    await j.backlog()
    expect(j.waitingPerOrganization().get('A')).toBe(2 * FAIR_TURN + 2 * FAIR_TURN + 10)
    // Once the clock is past everything of A (turn 4), a new batch starts at the clock, one a position.
    await clientOf(j).set(queueOf(j).toKey('fair:clock'), 4)
    const last = batch('A', 2000, 3, 2)
    await j.append('e', last)
    expect(await turns(j, last)).toEqual([5, 5, 5])
    // Step 3, passed, is no longer kept.
    expect(Object.keys(JSON.parse((await clientOf(j).hget(queueOf(j).toKey('fair:steps'), 'A'))!) as object)).toEqual(['1|2'])
  }, 30_000)

  it("a step's trickle does not slow its organization's busy step past the trickle's last string", async () => {
    const j = journal(url)
    // Each round A queues one string of step 3 and a turn's worth of step 2; B a turn's worth.
    for (let round = 0; round < 5; round++) {
      const trickle = batch('A', round, 1, 3)
      const busy = batch('A', round * FAIR_TURN, FAIR_TURN, 2)
      const other = batch('B', round * FAIR_TURN, FAIR_TURN, 2)
      await j.append(`t${round}`, trickle)
      await j.append(`a${round}`, busy)
      await j.append(`b${round}`, other)
      // A's turns keep pace with B's: its busy step is spaced by 2 only beside the trickle's string.
      expect(Math.max(...(await turns(j, busy)))).toBeLessThanOrEqual(Math.max(...(await turns(j, other))) + 1)
    }
    await j.backlog()
    expect(j.waitingPerOrganization().get('A')).toBe(5 * FAIR_TURN + 5)
    expect(j.waitingPerOrganization().get('B')).toBe(5 * FAIR_TURN)
  }, 30_000)

  it('knows when the oldest waiting string of each organization was queued, across its steps, as the clock passes them', async () => {
    const j = journal(url)
    const clock = queueOf(j).toKey('fair:clock')
    const times: number[] = []
    const pause = () => new Promise((r) => setTimeout(r, 30))
    // Step 2's first batch: positions 0-99. Step 3's, while step 2 waits: 0-98 every other, then
    // 100-149. Step 2's second: 100-148 every other, then 150-224.
    times.push(Date.now())
    await j.append('a', batch('A', 0, FAIR_TURN, 2))
    times.push(Date.now())
    await pause()
    times.push(Date.now())
    await j.append('b', batch('A', 0, FAIR_TURN, 3))
    times.push(Date.now())
    await pause()
    times.push(Date.now())
    await j.append('c', batch('A', FAIR_TURN, FAIR_TURN, 2))
    times.push(Date.now())
    const oldest = async () => {
      await counted(j)
      const a = j.list().find((b) => b.organization === 'A')
      return a && [a.oldestAt, a.waiting]
    }
    const within = (from: number, to: number) => expect.toSatisfy((at: number) => at >= from && at <= to)
    expect(await oldest()).toEqual([within(times[0]!, times[1]!), 3 * FAIR_TURN])
    // The clock past turn 1 has passed step 2's first batch, not step 3's: that is the oldest
    // (step 3's last 50 strings and all of step 2's second batch wait).
    await clientOf(j).set(clock, 1)
    expect(await oldest()).toEqual([within(times[2]!, times[3]!), FAIR_TURN / 2 + FAIR_TURN])
    // Past turn 2: step 3's batch too; step 2's second has its last 25 strings waiting.
    await clientOf(j).set(clock, 2)
    expect(await oldest()).toEqual([within(times[4]!, times[5]!), 25])
    // Past everything: nothing waits, no age.
    await clientOf(j).set(clock, 10)
    expect(await oldest()).toBeUndefined()
    expect(j.list()).toEqual([])
  }, 30_000)

  it("keeps a step's marks bounded by merging the two closest in time, of the same spacing first, so the counts stay exact", async () => {
    const j = journal(url)
    const key = queueOf(j).toKey('fair:steps')
    /** Marks of 10 strings each, back to back from position 0, at these times and spacings. */
    const seed = async (times: number[], spacings: number[]) => {
      let at = 0
      const m = times.map((t, i) => {
        const k = spacings[i]!
        const mark = [at, at + 10 * k, t, k, 10]
        at += 10 * k
        return mark
      })
      await clientOf(j).hset(key, 'A', JSON.stringify({ '1|2': { p: at, q: at - 1, m } }))
      return at
    }
    const marks = async () => (JSON.parse((await clientOf(j).hget(key, 'A'))!) as Record<string, { m: number[][] }>)['1|2']!.m
    // 16 marks a second apart, but the 8th and 9th only 10 ms: those two merge when a 17th comes.
    const times = Array.from({ length: 16 }, (_, i) => 1000 * i + (i >= 8 ? -990 : 0))
    const end = await seed(times, times.map(() => 1))
    await j.append('a', batch('A', 0, 10, 2))
    let m = await marks()
    expect(m).toHaveLength(16)
    expect(m[7]).toEqual([70, 90, times[7], 1, 20])
    expect(m.at(-1)!.slice(0, 2)).toEqual([end, end + 10])
    // (Counted from the marks; the queue holds only the last 10, the rest were seeded.)
    expect(flowsWaiting((await clientOf(j).hget(key, 'A'))!, 0).waiting).toBe(170)
    // Spacings 1 and 2 alternate but for one pair of 2s far apart in time: that pair merges, not
    // the closer pairs of unlike spacing (whose count would become a guess).
    const spacings = Array.from({ length: 16 }, (_, i) => (i < 11 ? 1 + (i % 2) : i === 11 ? 2 : 1 + ((i + 1) % 2)))
    expect(spacings.slice(10, 13)).toEqual([1, 2, 2])
    const far = Array.from({ length: 16 }, (_, i) => 1000 * i + (i === 11 ? 5000 : i > 11 ? 10_000 : 0))
    await seed(far, spacings)
    await j.append('b', batch('A', 100, 10, 2))
    m = await marks()
    expect(m).toHaveLength(16)
    expect(m.map((x) => x[3])).toEqual([...spacings.slice(0, 11), 2, ...spacings.slice(13), 1])
    expect(m[11]!.slice(2)).toEqual([far[11], 2, 20])
  }, 30_000)

  it('gives a backlog that never drains the age of its oldest waiting string, not of when it began', async () => {
    const j = journal(url)
    const clock = queueOf(j).toKey('fair:clock')
    const times: number[] = []
    const ends: number[] = []
    // 60 batches of 10, 5 ms apart; the clock keeps 20 of them waiting (two turns' worth).
    for (let i = 0; i < 60; i++) {
      times.push(Date.now())
      await j.append(`b${i}`, batch('A', 10 * i, 10, 2))
      ends.push(Date.now())
      await new Promise((r) => setTimeout(r, 5))
      if (i >= 20 && i % 10 === 0) await clientOf(j).set(clock, (i - 20) / 10)
    }
    await clientOf(j).set(clock, 4)
    await counted(j)
    const [a] = j.list()
    // Batch 40 (positions 400-409) is the oldest waiting: its time, within a few batches' merges.
    expect(a!.waiting).toBe(200)
    expect(a!.oldestAt).toBeGreaterThanOrEqual(times[35]!)
    expect(a!.oldestAt).toBeLessThanOrEqual(ends[40]!)
  }, 30_000)

  it('queues a batch whatever is stored for its organization: unreadable positions or marks are dropped', async () => {
    const j = journal(url)
    const key = queueOf(j).toKey('fair:steps')
    await clientOf(j).hset(key, 'A', 'not json')
    await j.append('a', batch('A', 0, 2))
    expect(await turns(j, batch('A', 0, 2))).toEqual([1, 1])
    // A mark without its spacing or count, another step's garbage: the batch still goes in.
    await clientOf(j).hset(key, 'A', JSON.stringify({ '1|2': { p: 2, q: 1, m: [[0, 2, 1], 'x'] }, '1|3': 'y' }))
    await j.append('b', batch('A', 2, 1))
    const kept = JSON.parse((await clientOf(j).hget(key, 'A'))!) as Record<string, { p: number; m: unknown[] }>
    expect(kept).toEqual({ '1|2': { p: 3, q: 2, m: [[2, 3, expect.any(Number), 1, 1]] } })
  }, 30_000)

  it("gives an organization with strings both queued and held the age of the older", async () => {
    const j = journal(url)
    const before = Date.now()
    await j.append('a', batch('A', 0, 3))
    const after = Date.now()
    // One more string of A held (as a hold writes it), first held at `since`.
    const held = async (since: number) => {
      await clientOf(j).hset(queueOf(j).toKey('held-domains'), 'a', JSON.stringify({ domain: 'a', organization: 'A', retryAt: 0, since }))
      await clientOf(j).hset(queueOf(j).toKey('held:a'), 'A|1|2|de|99|1', JSON.stringify(job('A', 99)))
      await counted(j)
      return j.list().map((b) => [b.organization, b.waiting, b.oldestAt])
    }
    expect(await held(before - 60_000)).toEqual([['A', 4, before - 60_000]])
    expect(await held(after + 60_000)).toEqual([['A', 4, expect.toSatisfy((at: number) => at >= before && at <= after)]])
  }, 30_000)

  it('keeps the clock and positions while a batch is on its way to the queue, though the queue is empty', async () => {
    const j = journal(url)
    const clock = queueOf(j).toKey('fair:clock')
    const key = queueOf(j).toKey('fair:steps')
    await clientOf(j).set(clock, 50)
    // A count of the backlog runs between the batch's positions and its add (as a webhook's check
    // of the budget, or another instance's metrics, may): the queue is empty then.
    const queue = queueOf(j)
    const addBulk = queue.addBulk.bind(queue)
    queue.addBulk = async (...a) => {
      ;(j as unknown as { counts: { at: number } }).counts.at = 0
      await j.backlog()
      return addBulk(...a)
    }
    await j.append('a', batch('A', 0, 10))
    expect(await turns(j, batch('A', 0, 10))).toEqual(Array(10).fill(51))
    // Not reset under it: the next batch of the step comes after it, and it is counted.
    expect(await clientOf(j).get(clock)).toBe('50')
    expect(await clientOf(j).hexists(key, 'A')).toBe(1)
    queue.addBulk = addBulk
    await j.append('b', batch('A', 10, 10))
    expect(await turns(j, batch('A', 10, 10))).toEqual(Array(10).fill(51))
    await counted(j)
    expect(j.waitingPerOrganization().get('A')).toBe(20)
  }, 30_000)

  it('ignores a clock update of a turn taken before clock and positions started again', async () => {
    const j = journal(url)
    const clock = queueOf(j).toKey('fair:clock')
    // A string of turn 50 taken; before its update is told (100 ms later), the queue is found
    // empty and clock and positions start again (a new epoch).
    const epoch = Number((await clientOf(j).get(queueOf(j).toKey('fair:epoch'))) ?? 0)
    ;(j as unknown as { tookTurn(turn: number, epoch?: number): void }).tookTurn(50, epoch)
    await clientOf(j).set(clock, 49)
    ;(j as unknown as { counts: { at: number } }).counts.at = 0
    await j.backlog()
    expect(await clientOf(j).get(clock)).toBeNull()
    await j.append('a', batch('A', 0, 2 * FAIR_TURN))
    await new Promise((r) => setTimeout(r, 300))
    // The late update did not move the new clock to 50: B starts at the clock, beside A, not behind it.
    expect(await clientOf(j).get(clock)).toBeNull()
    await j.append('b', batch('B', 0, 1))
    expect(await turns(j, batch('B', 0, 1))).toEqual([1])
    await j.backlog()
    expect(j.waitingPerOrganization().get('A')).toBe(2 * FAIR_TURN)
  }, 30_000)

  it('gives no positions to a repeat of a string still queued (BullMQ absorbs it)', async () => {
    const j = journal(url)
    await j.append('a', batch('A', 0, FAIR_TURN))
    await j.append('a again', batch('A', 0, FAIR_TURN))
    await j.append('b', batch('A', FAIR_TURN, 1))
    // Right after the first hundred (turn 2), not after positions the repeats would have taken (turn 3).
    expect(await turns(j, batch('A', FAIR_TURN, 1))).toEqual([2])
    await counted(j)
    expect(j.waitingPerOrganization().get('A')).toBe(FAIR_TURN + 1)
  }, 30_000)

  it("spaces a step by two up to another step's last string, that one included, and by one after it; keeps a mark the clock is inside", async () => {
    const j = journal(url)
    const key = queueOf(j).toKey('fair:steps')
    const marks = async (step: string) => (JSON.parse((await clientOf(j).hget(key, 'A'))!) as Record<string, { m: number[][] }>)[step]!.m.map((m) => [m[0], m[1], m[3], m[4]])
    // Step 3's one string at position 0: step 2 takes 0 beside it (spacing 2), then 2, 3, 4.
    await j.append('a', batch('A', 0, 1, 3))
    await j.append('b', batch('A', 0, 4, 2))
    expect(await marks('1|2')).toEqual([[0, 2, 2, 1], [2, 5, 1, 3]])
    // Step 3's next five: 1 and 3 beside step 2's strings (its last at 4), then 5, 6, 7.
    await j.append('c', batch('A', 1, 5, 3))
    expect(await marks('1|3')).toEqual([[0, 1, 1, 1], [1, 5, 2, 2], [5, 8, 1, 3]])
    // A mark that started before the clock but ends after it keeps its strings past the clock.
    expect(flowsWaiting(JSON.stringify({ s: { m: [[0, 6, 1, 2, 3], [6, 9, 1, 1, 3]] } }), 7)).toEqual({ waiting: 2, oldestAt: 1 })
  }, 30_000)

  it("keeps, at a step's next batch, the marks the clock is inside", async () => {
    const j = journal(url)
    await j.append('a', batch('A', 0, 150))
    // The clock past turn 1 (position 100): 50 of the first batch's strings wait.
    await clientOf(j).set(queueOf(j).toKey('fair:clock'), 1)
    await j.append('b', batch('A', 150, 10))
    await counted(j)
    expect(j.waitingPerOrganization().get('A')).toBe(60)
  }, 30_000)

  it('drops a passed organization only if its positions are still what the count read', async () => {
    const j = journal(url)
    const key = queueOf(j).toKey('fair:steps')
    await j.append('a', batch('A', 0, 3))
    await j.append('b', batch('B', 0, 3))
    // The clock is past both; a batch of A comes while the count has read the positions (before
    // the count drops A): A's new entry stays.
    await clientOf(j).set(queueOf(j).toKey('fair:clock'), 5)
    const client = clientOf(j)
    const hgetall = client.hgetall.bind(client) as (k: string) => Promise<Record<string, string>>
    ;(client as unknown as { hgetall(k: string): Promise<Record<string, string>> }).hgetall = async (k: string) => {
      const read = await hgetall(k)
      if (k === key) await j.append('c', batch('A', 3, 2))
      return read
    }
    ;(j as unknown as { counts: { at: number } }).counts.at = 0
    await j.backlog()
    ;(client as unknown as { hgetall: unknown }).hgetall = hgetall
    expect(await clientOf(j).hkeys(key)).toEqual(['A'])
    expect(await turns(j, batch('A', 3, 2))).toEqual([6, 6])
  }, 30_000)

  it('drops the positions of an organization the clock has passed, while the queue is busy with others', async () => {
    const j = journal(url)
    const key = queueOf(j).toKey('fair:steps')
    await j.append('a', batch('A', 0, 10))
    await j.append('b', batch('B', 0, 3 * FAIR_TURN))
    expect((await clientOf(j).hkeys(key)).sort()).toEqual(['A', 'B'])
    await clientOf(j).set(queueOf(j).toKey('fair:clock'), 1)
    await counted(j)
    expect(await clientOf(j).hkeys(key)).toEqual(['B'])
    expect([...j.waitingPerOrganization()]).toEqual([['B', 2 * FAIR_TURN]])
  }, 30_000)

  it('keeps the time of a step\'s oldest batch when its many batches are merged', async () => {
    const j = journal(url)
    const t0 = Date.now()
    await j.append('b0', batch('A', 0, 1, 2))
    const t1 = Date.now()
    for (let i = 1; i < 40; i++) {
      await new Promise((r) => setTimeout(r, 5))
      await j.append(`b${i}`, batch('A', i, 1, 2))
    }
    await counted(j)
    const [a] = j.list()
    expect(a!.oldestAt).toBeGreaterThanOrEqual(t0)
    expect(a!.oldestAt).toBeLessThanOrEqual(t1)
    expect(a!.waiting).toBe(40)
    // What the step keeps stays bounded.
    const kept = JSON.parse((await clientOf(j).hget(queueOf(j).toKey('fair:steps'), 'A'))!) as Record<string, { m: unknown[] }>
    expect(kept['1|2']!.m.length).toBeLessThanOrEqual(16)
  }, 30_000)
})
