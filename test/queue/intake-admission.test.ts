// The intake on its own, with the real de-duplication memory and work queue and recording fakes of
// the journal and backlog: what it refuses and why, what it writes before acknowledging, what goes
// straight to work and what stays on disk, and how a failed write gives back what it took.
import { describe, expect, it } from 'vitest'
import { Dedupe } from '../../src/queue/dedupe.js'
import { ALIVE_EVERY_MS, incoming, Intake } from '../../src/queue/intake.js'
import type { Job } from '../../src/protocol/job.js'
import { WorkQueue } from '../../src/queue/work-queue.js'

const job = (stringId: number, revision = 1, organizationId = '1', domain = 'acme'): Job =>
  ({ key: `k${stringId}`, organizationId, domain, moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision, batchId: '', attempts: 0 }) as unknown as Job
/** A string no batch of these tests names. */
const neverSeen = job(999_999)

function setup(options: { direct?: boolean; refuse?: string; failAppend?: boolean; lastAlive?: number } = {}) {
  const events: string[] = []
  const processed: Job[][] = []
  const dedupe = new Dedupe(60_000, () => 1_000_000)
  const queue = new WorkQueue({ concurrency: 1, limit: 100, process: async (jobs) => void processed.push(jobs), onError: () => {} })
  const journal = {
    async append(batchId: string, jobs: Job[] | { count: number; organization: string; domain: string }, encoded?: { text: string; skip?: number[] }) {
      events.push(`append ${batchId} ${Array.isArray(jobs) ? jobs.map((j) => j.stringId).join(',') : JSON.stringify(jobs)} ${encoded ? `encoded skip=${JSON.stringify(encoded.skip ?? null)}` : 'jobs'} depth=${queue.depth}`)
      if (options.failAppend) throw new Error('disk write failed')
      return { entryId: 'e1', part: 0 }
    },
    lastAlive: async () => options.lastAlive,
    markAlive: async () => void events.push('alive'),
  }
  const backlog = {
    refuse: (organization: string, bytes: number) => (events.push(`refuse? ${organization} ${bytes}`), options.refuse),
    direct: (organization: string, domain: string, count: number) => (events.push(`direct? ${organization} ${domain} ${count}`), options.direct ?? true),
    spill: (organization: string, domain: string, at: unknown, count: number, o?: unknown) => void events.push(`spill ${organization} ${domain} ${JSON.stringify(at)} ${count} ${JSON.stringify(o)}`),
    replay: async () => ({ strings: 3, batches: 1, parked: 0 }),
  }
  const intake = new Intake({ dedupe, queue, local: { journal: journal as never, backlog: backlog as never } })
  return { intake, dedupe, queue, events, processed }
}

describe('Intake', () => {
  it('writes new jobs to the journal, then queues them, de-duplicated', async () => {
    const { intake, queue, events, processed } = setup()
    const jobs = [job(1), job(2), job(1)]
    expect(await intake.accept('b1', incoming(jobs))).toEqual({ status: 'accepted', accepted: 2, duplicates: 1 })
    // Room is taken before the write.
    expect(events).toEqual(['refuse? 1 3072', 'direct? 1 acme 3', 'append b1 1,2 jobs depth=2'])
    expect(jobs.map((j) => j.batchId)).toEqual(['b1', 'b1', 'b1'])
    await queue.onIdle()
    expect(processed.flat().map((j) => j.stringId)).toEqual([1, 2])
    expect(queue.depth).toBe(2)
  })

  it("stores the decoder's text with the indexes of the jobs not taken, and sizes the batch by that text", async () => {
    const { intake, events } = setup()
    const encoded = { organizationId: '1', domain: 'acme', text: 'x'.repeat(10) }
    await intake.accept('b1', incoming([job(1), job(1), job(2)]), encoded)
    expect(events).toEqual(['refuse? 1 10', 'direct? 1 acme 3', 'append b1 1,2 encoded skip=[1] depth=2'])
  })

  it('takes a newer revision, refuses an older one, and asks the service about a string that finished here', async () => {
    const { intake, dedupe } = setup()
    await intake.accept('b1', incoming([job(1, 2)]))
    expect(await intake.accept('b2', incoming([job(1, 1)]))).toMatchObject({ accepted: 0, duplicates: 1 })
    const newer = job(1, 3)
    expect(await intake.accept('b3', incoming([newer]))).toMatchObject({ accepted: 1, duplicates: 0 })
    expect(newer.recheck).toBeUndefined()
    dedupe.finish(newer, 3)
    const again = job(1, 3)
    expect(await intake.accept('b4', incoming([again]))).toMatchObject({ accepted: 1, duplicates: 0 })
    expect(again.recheck).toBe(true)
  })

  it('gives back the room and the memory of a batch whose write failed', async () => {
    const { intake, queue, dedupe, processed } = setup({ failAppend: true })
    await expect(intake.accept('b1', incoming([job(1), job(2)]))).rejects.toThrow('disk write failed')
    expect(queue.depth).toBe(0)
    expect(dedupe.isActive(job(1))).toBe(false)
    expect(dedupe.arrive(job(1), 1)).toBe('new')
    await queue.onIdle()
    expect(processed).toEqual([])
  })

  it('leaves a batch on disk when its organization already waits there, without making its jobs', async () => {
    const { intake, queue, events } = setup({ direct: false })
    let made = 0
    // The decoder says which step the batch is of: its turn on disk is that step's.
    const batch = { count: 2, organizationId: '', domain: 'acme', step: '7|11', jobs: () => (made++, [job(1, 1, ''), job(2, 1, '')]) }
    const encoded = { organizationId: '', domain: 'acme', text: 'yy' }
    expect(await intake.accept('b1', batch, encoded)).toEqual({ status: 'accepted', accepted: 2, duplicates: 0, spilled: 2 })
    expect(made).toBe(0)
    expect(events).toEqual(['refuse? acme 2', 'direct? acme acme 2', 'append b1 {"count":2,"organization":"acme","domain":"acme","step":"7|11"} encoded skip=null depth=0', 'spill acme acme {"entryId":"e1","part":0} 2 {"step":"7|11"}'])
    expect(queue.depth).toBe(0)
  })

  it('writes the jobs themselves to disk when there is no decoder text', async () => {
    const { intake, events } = setup({ direct: false })
    await intake.accept('b1', incoming([job(1), job(2)]))
    expect(events[2]).toBe('append b1 1,2 jobs depth=0')
  })

  it('answers busy with the reason when the disk budget is spent, and busy on shutdown', async () => {
    const full = setup({ refuse: 'the backlog is full' })
    expect(await full.intake.accept('b1', incoming([job(1)]))).toEqual({ status: 'busy', retryAfterSeconds: 60, reason: 'the backlog is full' })
    expect(full.events).toEqual(['refuse? 1 1024'])
    const closing = setup()
    closing.intake.close()
    expect(await closing.intake.accept('b1', incoming([job(1)]))).toEqual({ status: 'busy', retryAfterSeconds: 5 })
    expect(closing.events).toEqual([])
  })

  it('accepts an empty batch without writing anything', async () => {
    const { intake, events } = setup()
    expect(await intake.accept('b1', incoming([]))).toEqual({ status: 'accepted', accepted: 0, duplicates: 0 })
    expect(events).toEqual([])
  })

  it('on a shared journal, stores every job (its ids absorb repeats) or says why it cannot', async () => {
    const appended: Array<{ batchId: string; jobs: Job[] }> = []
    let refusal: string | undefined
    const shared = { refuse: (bytes: number) => (bytes > 5000 ? 'too big' : refusal), append: async (batchId: string, jobs: Job[]) => void appended.push({ batchId, jobs }) }
    const intake = new Intake({ dedupe: new Dedupe(60_000), queue: new WorkQueue({ concurrency: 1, limit: 10, process: async () => {}, onError: () => {} }), shared: shared as never })
    const jobs = [job(1), job(1)]
    expect(await intake.accept('b1', incoming(jobs))).toEqual({ status: 'accepted', accepted: 2, duplicates: 0 })
    expect(appended).toEqual([{ batchId: 'b1', jobs }])
    expect(jobs.every((j) => j.batchId === 'b1')).toBe(true)
    expect(await intake.accept('b2', incoming(Array.from({ length: 5 }, (_, i) => job(i))))).toEqual({ status: 'busy', retryAfterSeconds: 60, reason: 'too big' })
    refusal = 'redis is down'
    expect(await intake.accept('b3', incoming([job(9)]))).toMatchObject({ status: 'busy', reason: 'redis is down' })
    expect(appended).toHaveLength(1)
    expect(await intake.replay()).toEqual({ strings: 0, batches: 0, parked: 0 })
  })

  it("on replay, treats strings as possibly finished until the earlier process's memory would have run out", async () => {
    // The clock reads 1,000,000; the memory lasts 60 s; the earlier process said it was alive 75 s
    // ago, so it may have lived up to ALIVE_EVERY_MS (30 s) more: uncertain for another 15 s.
    expect(ALIVE_EVERY_MS).toBe(30_000)
    const { intake, dedupe, events } = setup({ lastAlive: 1_000_000 - 75_000 })
    expect(await intake.replay()).toEqual({ strings: 3, batches: 1, parked: 0 })
    expect(events).toEqual(['alive'])
    expect(dedupe.arrive(neverSeen, 1)).toBe('finished')
  })

  it('takes strings as new again once that memory would have run out', async () => {
    const { intake, dedupe } = setup({ lastAlive: 1_000_000 - 95_000 })
    await intake.replay()
    expect(dedupe.arrive(neverSeen, 1)).toBe('new')
  })

  it('takes everything as new on a first start', async () => {
    const { intake, dedupe } = setup()
    await intake.replay()
    expect(dedupe.arrive(neverSeen, 1)).toBe('new')
  })

  it('replays from a journal that keeps no liveness, taking everything as new', async () => {
    const dedupe = new Dedupe(60_000, () => 1_000_000)
    const journal = { append: async () => ({ entryId: 'e', part: 0 }) }
    const backlog = { replay: async () => ({ strings: 0, batches: 0, parked: 0 }) }
    const intake = new Intake({ dedupe, queue: new WorkQueue({ concurrency: 1, limit: 10, process: async () => {}, onError: () => {} }), local: { journal: journal as never, backlog: backlog as never } })
    expect(await intake.replay()).toEqual({ strings: 0, batches: 0, parked: 0 })
    expect(dedupe.arrive(neverSeen, 1)).toBe('new')
  })

  it('while draining, acknowledges batches on disk only (none into the window), and says when no write is under way', async () => {
    const { intake, queue, events } = setup()
    intake.drain()
    let settled = false
    const accepting = intake.accept('b1', incoming([job(1), job(2)]))
    const waited = intake.settled().then(() => (settled = true))
    expect(settled).toBe(false)
    expect(await accepting).toEqual({ status: 'accepted', accepted: 2, duplicates: 0, spilled: 2 })
    await waited
    expect(settled).toBe(true)
    expect(queue.depth).toBe(0)
    expect(events).toEqual(['refuse? 1 2048', 'append b1 1,2 jobs depth=0', 'spill 1 acme {"entryId":"e1","part":0} 2 {"step":"7|11"}'])
    await intake.settled() // nothing under way: at once
  })

  it('does not refuse a part of a large delivery whose budget was asked for all of it (admitted)', async () => {
    const { intake, events } = setup({ refuse: 'the backlog on disk is full' })
    expect(await intake.accept('b1', { ...incoming([job(1)]), admitted: true })).toMatchObject({ status: 'accepted', accepted: 1 })
    expect(events.some((e) => e.startsWith('refuse?'))).toBe(false)
    expect(await intake.accept('b2', incoming([job(2)]))).toMatchObject({ status: 'busy' })
    expect(intake.refusal('1', 10)).toBe('the backlog on disk is full')
  })

  it("sizes a batch made of jobs by their count, and an empty one as nobody's", () => {
    expect(incoming([])).toMatchObject({ count: 0, organizationId: '', domain: '' })
    expect(incoming([job(1, 1, '7', 'beta')])).toMatchObject({ count: 1, organizationId: '7', domain: 'beta' })
  })
})
