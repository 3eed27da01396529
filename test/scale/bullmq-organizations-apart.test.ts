// QUEUE=bullmq, several organizations on one worker: strings whose organization's API fails, or
// whose pipeline asks for a retry, wait out their back-off in BullMQ's delayed set, not in the
// worker's BullMQ slots, so one organization with more strings taken than QUEUE_CONCURRENCY keeps
// no other waiting (issue 16: the in-process
// window gives their room back for the same reason, test/queue/organizations-apart.test.ts). Their
// attempts go with them, so they are still held as unavailable once spent, and they come back
// early when their organization's API answers again, but never before a Retry-After.
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest'
import type { Queue } from 'bullmq'
import { BullmqJournal } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import { bDoneWhileADown, otherDoneWhileStuck, twoOrganizations } from '../support/organizations.js'
import { describeWithService, flushRedis } from '../support/services.js'

const DB = 13 // a database of its own (7, 10, 11 and 12 are other files')

await describeWithService('redis', 'QUEUE=bullmq: organizations apart', (REDIS) => {
  const url = `${REDIS}/${DB}`
  const stops: Array<() => Promise<void>> = []
  const flush = () => flushRedis(url)
  beforeEach(flush)
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop()
  })
  afterAll(flush)

  it('strings waiting out a back-off leave their BullMQ slots: an organization whose API is down with more strings than QUEUE_CONCURRENCY keeps no other waiting', async () => {
    const config = { queue: 'bullmq' as const, queueName: 'apart', queueRedisUrl: url, queueConcurrency: 100, apiMaxAttempts: 3 }
    const { emulator, worker, a, b } = await twoOrganizations(stops, config, { a: 60, b: 40 })
    // A's 300 strings: three times what the worker takes from BullMQ at once. Before, they kept the
    // 100 slots through their back-off: B's 40 were not DONE after 60 s. Now about a second on a
    // quiet machine; A's strings still take the work slots for their reads in turn (BullMQ takes
    // them again as they come back, where the in-process window takes nothing more of A), and
    // beside the whole suite some of B's took over 10 s: bounded at 20 s here.
    await bDoneWhileADown(emulator, a, b, 20_000)
    // Their attempts went with them to BullMQ and back: spent (3), A's strings are held as
    // unavailable, not sent round the delayed set for ever.
    // (The most seen: the holder's probes put them back in the queue now and then.)
    let most = 0
    await expect.poll(() => (most = Math.max(most, worker.stats().held)), { timeout: 45_000, interval: 20 }).toBeGreaterThanOrEqual(100)
    emulator.configureFaults(null, a)
    await expect.poll(() => emulator.summary(a).notDone, { timeout: 60_000, interval: 200 }).toBe(0)
    expect(worker.stats()).toMatchObject({ held: 0, parked: 0 })
  }, 120_000)

  it('strings whose pipeline asks for a retry leave their BullMQ slots too: another organization\'s strings are DONE meanwhile', async () => {
    const config = { queue: 'bullmq' as const, queueName: 'apart-retry', queueRedisUrl: url, queueConcurrency: 20 }
    // B's plugin answers `retry` (its own upstream rate-limited, say) for all of B's 40 strings
    // (one language: one group); A's 10 (2 strings in 5 languages) come after them.
    let retrying = ''
    const { emulator, a, b } = await twoOrganizations(stops, config, { a: 2, b: 40 }, (item) => (item.organizationId === retrying ? 'retry' : 'approved'))
    retrying = emulator.organizations()[1]!.id
    // Before, B's strings kept the 20 slots through their back-off: A's 10 were not DONE after 15 s.
    await otherDoneWhileStuck(emulator, { domain: b, batch: 40 }, { domain: a, batch: 10 })
  }, 60_000)

  it('a string given back to BullMQ keeps its attempts, and comes back early when its organization answers again, but not before its Retry-After', async () => {
    const journal = new BullmqJournal({ redisUrl: url, name: 'delay', concurrency: 10, attempts: 2, backoffMs: 200, lockMs: 30_000, dedupeTtlMs: 1000, log: silentLogger() })
    stops.push(() => journal.close())
    const queue = (journal as unknown as { queue: Queue }).queue
    const job = (i: number): Job => ({
      key: `acme|1|2|de|${i}|1`, organizationId: 'acme', domain: 'acme', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1,
      string: { key: `k${i}`, context: '', maxLength: 0, text: `t${i}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
      sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0,
    })
    const taken: Job[] = []
    journal.start((j) => void taken.push(j))
    await journal.append('b', [job(1), job(2), job(3), job(4)])
    await expect.poll(() => taken.length, { timeout: 5000 }).toBe(4)
    for (const j of taken) j.attempts = 2
    const [one, two, three, four] = [...taken].sort((x, y) => x.stringId - y.stringId) as [Job, Job, Job, Job]
    await journal.delay([one, two], 60_000)
    await journal.delay([three], 60_000, 30_000) // a Retry-After of 30 s
    await journal.delay([four], 60_000, 0, false) // its pipeline asked for a retry: not the API's
    const state = async (i: number) => (await queue.getJob(job(i).key))!.getState()
    for (const i of [1, 2, 3, 4]) expect(await state(i)).toBe('delayed')
    expect(await queue.getJobCounts('failed', 'completed')).toEqual({ failed: 0, completed: 0 })

    taken.length = 0
    journal.bringForward('other')
    await new Promise((r) => setTimeout(r, 300))
    expect(taken).toEqual([])
    journal.bringForward('acme')
    await expect.poll(() => taken.map((j) => j.stringId).sort(), { timeout: 5000 }).toEqual([1, 2])
    expect(taken.map((j) => j.attempts)).toEqual([2, 2])
    expect(await state(3)).toBe('delayed')
    expect(await state(4)).toBe('delayed')
    expect(await queue.getJobCounts('failed')).toEqual({ failed: 0 })

    // A copy that does not come straight back from the delay starts afresh: parked (BullMQ tries it
    // again after its own back-off), and parked for good, then put back at the next start.
    const back = taken.find((j) => j.stringId === 2)!
    taken.length = 0
    await journal.park(back, 'refused')
    await expect.poll(() => taken.length, { timeout: 5000 }).toBe(1)
    expect(taken[0]!.attempts).toBe(0)
    await journal.park(taken[0]!, 'refused again')
    await expect.poll(() => queue.getJobCounts('failed'), { timeout: 5000 }).toEqual({ failed: 1 })
    taken.length = 0
    expect(await journal.replayParked()).toBe(1)
    await expect.poll(() => taken.length, { timeout: 5000 }).toBe(1)
    expect(taken[0]).toMatchObject({ stringId: 2, attempts: 0, recheck: true })

    // What the journal remembers of it goes once its delay is over (another instance may take it).
    const internals = journal as unknown as { delayed: Map<string, Map<string, unknown>>; delayedPrunedAt: number; forgetDelayedBefore(now: number): void }
    expect([...internals.delayed.get('acme')!.keys()]).toEqual([job(3).key])
    internals.delayedPrunedAt = 0
    internals.forgetDelayedBefore(Date.now())
    expect(internals.delayed.get('acme')?.size).toBe(1)
    internals.delayedPrunedAt = 0
    internals.forgetDelayedBefore(Date.now() + 61_000)
    expect(internals.delayed.size).toBe(0)
  }, 30_000)
})
