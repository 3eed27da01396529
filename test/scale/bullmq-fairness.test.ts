// Issue 16 with QUEUE=bullmq: organizations, and the steps of each, are served in turn (a second
// organization's or step's small batch is not kept behind the first's large backlog, and the first
// is not starved by a newcomer's large one), each organization has its share of the backlog
// budget, and the age of its oldest waiting string is known. Against the local Redis:
// skipped with the reason when it is not reachable, a failure instead when CI is set.
import type { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { afterEach, expect, it } from 'vitest'
import { BullmqJournal, FAIR_TURN, REDIS_BYTES_PER_STRING } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import { describeWithService } from '../support/services.js'

const open: BullmqJournal[] = []
afterEach(async () => {
  for (const journal of open.splice(0)) {
    await queueOf(journal).obliterate({ force: true }).catch(() => undefined)
    // The fairness keys are the journal's own, outside BullMQ's.
    await clientOf(journal).del(queueOf(journal).toKey('fair:steps'), queueOf(journal).toKey('fair:clock')).catch(() => undefined)
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
/** The BullMQ priority (turn) each string of a batch was queued at. */
const turns = async (j: BullmqJournal, jobs: Job[]) => Promise.all(jobs.map(async (x) => (await queueOf(j).getJob(x.key))!.opts.priority))

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
    await new Promise((r) => setTimeout(r, 300))
    await j.backlog()
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

  it("an organization's steps share its turn: each is spaced by the steps waiting, so the organization still gets one turn's worth", async () => {
    const j = journal(url)
    const s2 = batch('A', 0, 2 * FAIR_TURN, 2)
    const s3 = batch('A', 0, 2 * FAIR_TURN, 3)
    await j.append('a', s2)
    // Alone, step 2's strings take one turn per FAIR_TURN strings.
    expect(await turns(j, s2)).toEqual(s2.map((_, i) => Math.floor(i / FAIR_TURN) + 1))
    // Step 3 comes while step 2 waits: from the clock (turn 1), every other position.
    await j.append('b', s3)
    expect(await turns(j, s3)).toEqual(s3.map((_, i) => Math.floor((2 * i) / FAIR_TURN) + 1))
    // Step 2's next strings, too, are spaced by the two steps waiting, after its last.
    const more = batch('A', 1000, 10, 2)
    await j.append('c', more)
    expect(await turns(j, more)).toEqual(more.map((_, i) => Math.floor((2 * FAIR_TURN + 2 * i) / FAIR_TURN) + 1))
    // Another organization is not held back by A's two steps: it starts at the clock.
    await j.append('d', batch('B', 0, 5))
    expect(await turns(j, batch('B', 0, 5))).toEqual([1, 1, 1, 1, 1])
    // A's waiting strings, estimated from the positions: each step's, over its spacing.
    await j.backlog()
    expect(j.waitingPerOrganization().get('A')).toBe(2 * FAIR_TURN + 2 * FAIR_TURN + 10)
    // Once the clock is past step 3's strings (turn 4), step 2 is the only one waiting: spaced by 1 again.
    await clientOf(j).set(queueOf(j).toKey('fair:clock'), 4)
    const last = batch('A', 2000, 3, 2)
    await j.append('e', last)
    expect(await turns(j, last)).toEqual([5, 5, 5])
  }, 30_000)

  it('knows when the oldest waiting string of each organization was queued, across its steps, as the clock passes them', async () => {
    const j = journal(url)
    const clock = queueOf(j).toKey('fair:clock')
    const times: number[] = []
    const pause = () => new Promise((r) => setTimeout(r, 30))
    // Step 2's first batch: positions 0-99. Step 3's, while step 2 waits: 0-198, every other.
    // Step 2's second: 100-298, every other.
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
      await new Promise((r) => setTimeout(r, 300))
      await j.backlog()
      const a = j.list().find((b) => b.organization === 'A')
      return a && [a.oldestAt, a.waiting]
    }
    const within = (from: number, to: number) => expect.toSatisfy((at: number) => at >= from && at <= to)
    expect(await oldest()).toEqual([within(times[0]!, times[1]!), 3 * FAIR_TURN])
    // The clock past turn 1 has passed step 2's first batch, not step 3's: that is the oldest
    // (half of step 3's strings and all of step 2's second batch wait).
    await clientOf(j).set(clock, 1)
    expect(await oldest()).toEqual([within(times[2]!, times[3]!), FAIR_TURN / 2 + FAIR_TURN])
    // Past turn 2: step 3's batch too; step 2's second has half its strings waiting.
    await clientOf(j).set(clock, 2)
    expect(await oldest()).toEqual([within(times[4]!, times[5]!), FAIR_TURN / 2])
    // Past everything: nothing waits, no age.
    await clientOf(j).set(clock, 10)
    expect(await oldest()).toBeUndefined()
    expect(j.list()).toEqual([])
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
    await new Promise((r) => setTimeout(r, 300))
    await j.backlog()
    const [a] = j.list()
    expect(a!.oldestAt).toBeGreaterThanOrEqual(t0)
    expect(a!.oldestAt).toBeLessThanOrEqual(t1)
    expect(a!.waiting).toBe(40)
    // What the step keeps stays bounded.
    const kept = JSON.parse((await clientOf(j).hget(queueOf(j).toKey('fair:steps'), 'A'))!) as Record<string, { m: unknown[] }>
    expect(kept['1|2']!.m.length).toBeLessThanOrEqual(16)
  }, 30_000)
})
