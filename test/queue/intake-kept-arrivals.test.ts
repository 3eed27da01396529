// An arrival of a string whose copy's status update went out (the service may have applied it, and
// the string come back to the step, before the answer): journaled and acknowledged like any other,
// but not run until that copy ends; then it runs, checked with the service first. Released while
// its own delivery is still being written, it waits for that write, and goes nowhere if it failed
// (nothing was acknowledged).
import { describe, expect, it } from 'vitest'
import { Dedupe } from '../../src/queue/dedupe.js'
import { incoming, Intake } from '../../src/queue/intake.js'
import type { Job } from '../../src/protocol/job.js'
import { WorkQueue } from '../../src/queue/work-queue.js'

const job = (stringId: number, revision = 1): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain: 'acme', moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision, batchId: '', attempts: 0 }) as unknown as Job

/** An intake whose journal writes finish when the test says; the jobs the queue ran, in order. */
function setup() {
  const writes: Array<{ settle: (error?: Error) => void }> = []
  const journal = {
    append(_batchId: string, jobs: Job[]) {
      // As the real journal: nothing to write is done at once.
      if (jobs.length === 0) return Promise.resolve({ entryId: '', part: 0 })
      return new Promise((resolve, reject) => writes.push({ settle: (error) => (error ? reject(error) : resolve({ entryId: 'e', part: 0 })) }))
    },
  }
  const backlog = { refuse: () => undefined, direct: () => true, spill: () => undefined }
  const ran: Job[] = []
  const queue = new WorkQueue({ concurrency: 4, limit: 100, process: async (jobs) => void ran.push(...jobs), onError: () => {} })
  const dedupe = new Dedupe(60_000, Date.now, 100_000, undefined, (ref) => intake.released(ref as Job))
  const intake: Intake = new Intake({ dedupe, queue, local: { journal: journal as never, backlog: backlog as never } })
  /** Accept a delivery and let its write go through. */
  const delivered = async (batchId: string, jobs: Job[]) => {
    const accepted = intake.accept(batchId, incoming(jobs))
    await settle()
    writes.at(-1)!.settle()
    return accepted
  }
  return { intake, writes, dedupe, queue, ran, delivered }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('an arrival while the status update of its copy is under way', () => {
  it('is journaled and acknowledged, not run; once that copy ends it runs, checked with the service first', async () => {
    const { dedupe, queue, ran, delivered } = setup()
    await delivered('a', [job(1)])
    await settle()
    const first = ran[0]!
    dedupe.sending(first, 1)
    const again = job(1)
    expect(await delivered('b', [again])).toEqual({ status: 'accepted', accepted: 1, duplicates: 0 })
    await settle()
    expect(ran).toEqual([first])
    expect(queue.depth).toBe(2)
    dedupe.finish(first, 1)
    await settle()
    expect(ran).toEqual([first, again])
    expect(again.recheck).toBe(true)
  })

  it('released while its delivery is being written, it runs only once the write is done', async () => {
    const { intake, writes, dedupe, ran, delivered } = setup()
    await delivered('a', [job(1)])
    await settle()
    dedupe.sending(ran[0]!, 1)
    const accepted = intake.accept('b', incoming([job(1)]))
    await settle()
    dedupe.finish(ran[0]!, 1)
    await settle()
    expect(ran).toHaveLength(1)
    writes[1]!.settle()
    await accepted
    await settle()
    expect(ran).toHaveLength(2)
    expect(ran[1]!.recheck).toBe(true)
  })

  it('released while its delivery is being written, and the write fails: it never runs, and is forgotten', async () => {
    const { intake, writes, dedupe, queue, ran, delivered } = setup()
    await delivered('a', [job(1)])
    await settle()
    dedupe.sending(ran[0]!, 1)
    const accepted = intake.accept('b', incoming([job(1)]))
    await settle()
    dedupe.finish(ran[0]!, 1)
    queue.finish()
    writes[1]!.settle(new Error('disk write failed'))
    await expect(accepted).rejects.toThrow('disk write failed')
    await settle()
    expect(ran).toHaveLength(1)
    expect(queue.depth).toBe(0)
    expect(dedupe.isActive(job(1))).toBe(false)
  })

  it('a repeat of the kept arrival is absorbed; its write failing, the next arrival is kept in its place', async () => {
    const { intake, writes, dedupe, ran, delivered } = setup()
    await delivered('a', [job(1)])
    await settle()
    dedupe.sending(ran[0]!, 1)
    const kept = intake.accept('b', incoming([job(1)]))
    await settle()
    writes[1]!.settle(new Error('disk write failed'))
    await expect(kept).rejects.toThrow('disk write failed')
    expect(await delivered('c', [job(1)])).toEqual({ status: 'accepted', accepted: 1, duplicates: 0 })
    expect(await delivered('d', [job(1)])).toEqual({ status: 'accepted', accepted: 0, duplicates: 1 })
    dedupe.finish(ran[0]!, 1)
    await settle()
    expect(ran).toHaveLength(2)
  })
})
