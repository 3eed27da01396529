// The intake: back-pressure, de-duplication while active, rechecks for strings that finished
// before, one journal write per batch, and replay that checks every string with the service.
import { describe, expect, it } from 'vitest'
import { Dedupe } from '../../src/queue/dedupe.js'
import { Intake } from '../../src/queue/intake.js'
import type { IntakeJournal } from '../../src/queue/intake-journal.js'
import { stringKeyOf, type Job } from '../../src/queue/job.js'
import { WorkQueue } from '../../src/queue/work-queue.js'

const job = (stringId: number, revision = 1, domain = 'acme'): Job =>
  ({ key: `k${stringId}|${revision}`, organizationId: '1', domain, moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision, batchId: '', attempts: 0, string: {} }) as unknown as Job

function setup(o: { limit?: number; held?: number; stored?: { batches: Array<{ batchId: string; jobs: Job[] }>; parked: Array<{ job: Job; reason: string; at: number }> }; failWrite?: boolean } = {}) {
  const appended: Array<{ batchId: string; jobs: Job[] }> = []
  const done: Job[] = []
  const journal: IntakeJournal = {
    delivers: false,
    newBatchId: () => 'replay-batch',
    append: async (batchId, jobs) => {
      if (o.failWrite) throw new Error('disk full')
      appended.push({ batchId, jobs: [...jobs] })
    },
    done: async (j) => void done.push(j),
    park: async () => undefined,
    load: async () => o.stored ?? { batches: [], parked: [] },
    adopt: () => undefined,
    unpark: async () => undefined,
    size: 0,
    parked: 0,
  }
  const ran: Job[] = []
  const queue = new WorkQueue({ concurrency: 1, limit: o.limit ?? 100, process: async (jobs) => void ran.push(...jobs), onError: () => undefined })
  queue.pause()
  const dedupe = new Dedupe(60_000)
  const intake = new Intake({ dedupe, journal, queue, held: { count: () => o.held ?? 0 } })
  return { intake, dedupe, queue, appended, done }
}

describe('Intake', () => {
  it('journals a batch once, queues it, and absorbs repeats while they are active', async () => {
    const { intake, queue, appended } = setup()
    expect(await intake.accept('b1', [job(1), job(2), job(1)])).toEqual({ status: 'accepted', accepted: 2, duplicates: 1 })
    expect(appended).toHaveLength(1)
    expect(queue.depth).toBe(2)
    expect(await intake.accept('b2', [job(2)])).toEqual({ status: 'accepted', accepted: 0, duplicates: 1 })
  })

  it('admits a string that finished before, marked to be checked with the service', async () => {
    const { intake, dedupe } = setup()
    const first = job(1)
    await intake.accept('b1', [first])
    dedupe.finish(stringKeyOf(first), 1)
    const again = job(1)
    expect(await intake.accept('b2', [again])).toMatchObject({ accepted: 1 })
    expect(again.recheck).toBe(true)
    expect(first.recheck).toBeUndefined()
  })

  it('answers busy, journaling nothing, when the queue is full or the organization holds too much', async () => {
    const full = setup({ limit: 2 })
    await full.intake.accept('b1', [job(1), job(2)])
    expect(await full.intake.accept('b2', [job(3)])).toMatchObject({ status: 'busy' })
    expect(full.appended).toHaveLength(1)
    const holding = setup({ limit: 10, held: 9 })
    expect(await holding.intake.accept('b1', [job(1), job(2)])).toMatchObject({ status: 'busy', retryAfterSeconds: 30, reason: expect.stringMatching(/holds 9 strings/) })
    const closed = setup()
    closed.intake.close()
    expect(await closed.intake.accept('b1', [job(1)])).toMatchObject({ status: 'busy' })
  })

  it('gives the room and the de-duplication back when the journal write fails', async () => {
    const { intake, queue, dedupe } = setup({ failWrite: true })
    await expect(intake.accept('b1', [job(1)])).rejects.toThrow('disk full')
    expect(queue.depth).toBe(0)
    expect(dedupe.admit(stringKeyOf(job(1)), 1)).toBe('new')
  })

  it('replays batches and parked strings, each marked to be checked with the service first', async () => {
    const stored = { batches: [{ batchId: 'e1', jobs: [job(1), job(2), job(1)] }], parked: [{ job: job(3), reason: 'x', at: 0 }] }
    const { intake, queue, appended, done } = setup({ stored })
    expect(await intake.replay()).toEqual({ strings: 3, batches: 1, parked: 1 })
    expect(queue.depth).toBe(3)
    expect(done).toHaveLength(1) // the duplicate of string 1
    expect(appended[0]!.jobs.map((j) => [j.stringId, j.recheck])).toEqual([[3, true]])
    expect(stored.batches[0]!.jobs.slice(0, 2).every((j) => j.recheck)).toBe(true)
  })
})

describe('Intake under concurrent batches', () => {
  it('never admits past the limit when batches arrive together', async () => {
    const { intake, queue } = setup({ limit: 250 })
    await intake.accept('b0', [job(1000)])
    const answers = await Promise.all(Array.from({ length: 10 }, (_, b) => intake.accept(`b${b + 1}`, Array.from({ length: 100 }, (_, i) => job(b * 100 + i + 1)))))
    expect(answers.filter((a) => a.status === 'accepted')).toHaveLength(2)
    expect(queue.depth).toBe(201)
  })
})

describe('Intake replay after a restart', () => {
  it('takes the time the last process was alive, so that new arrivals are checked with the service for a while', async () => {
    const { intake, dedupe } = setup()
    const journal = (intake as unknown as { options: { journal: IntakeJournal } }).options.journal
    let marked = 0
    journal.lastAlive = async () => Date.now() - 5_000
    journal.markAlive = async () => void marked++
    await intake.replay()
    expect(marked).toBe(1)
    const arriving = job(77)
    expect(await intake.accept('b1', [arriving])).toMatchObject({ accepted: 1 })
    expect(arriving.recheck).toBe(true)
    void dedupe
  })
  it('a first start (nothing recorded) takes new strings as new', async () => {
    const { intake } = setup()
    await intake.replay()
    const arriving = job(78)
    await intake.accept('b1', [arriving])
    expect(arriving.recheck).toBeUndefined()
  })
})
