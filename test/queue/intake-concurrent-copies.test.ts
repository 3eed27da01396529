// Two copies of one delivery at once (the platform may send a batch twice): the second copy's
// strings are repeats of the first's while the first is still being written to the journal. The
// second copy is acknowledged only once that write is done; if it failed, the second copy stores
// the strings itself, so a 2XX never covers strings nobody stored.
import { describe, expect, it } from 'vitest'
import { Dedupe } from '../../src/queue/dedupe.js'
import { incoming, Intake } from '../../src/queue/intake.js'
import type { Job } from '../../src/protocol/job.js'
import { WorkQueue } from '../../src/queue/work-queue.js'

const job = (stringId: number, revision = 1): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain: 'acme', moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision, batchId: '', attempts: 0 }) as unknown as Job

/** A journal whose writes finish when the test says, each as the test says. */
function setup(o: { limit?: number } = {}) {
  const writes: Array<{ batchId: string; ids: number[]; settle: (error?: Error) => void }> = []
  const journal = {
    append(batchId: string, jobs: Job[]) {
      // As the real journal: nothing to write is done at once.
      if (jobs.length === 0) return Promise.resolve({ entryId: '', part: 0 })
      return new Promise((resolve, reject) => {
        writes.push({ batchId, ids: jobs.map((j) => j.stringId), settle: (error) => (error ? reject(error) : resolve({ entryId: batchId, part: 0 })) })
      })
    },
  }
  const spilled: number[] = []
  // As the backlog decides: direct while the window has room for the batch (backlog.ts `direct`).
  const backlog = {
    refuse: () => undefined,
    direct: (_o: string, _d: string, n: number) => queue.depth + n <= queue.limit,
    spill: (_o: string, _d: string, _at: unknown, n: number) => void spilled.push(n),
    replay: async () => ({ strings: 0, batches: 0, parked: 0 }),
  }
  const dedupe = new Dedupe(60_000)
  const queue = new WorkQueue({ concurrency: 1, limit: o.limit ?? 100, process: async () => {}, onError: () => {} })
  const intake = new Intake({ dedupe, queue, local: { journal: journal as never, backlog: backlog as never } })
  return { intake, writes, dedupe, queue, spilled }
}

/** Lets every pending promise callback run. */
const settleMicrotasks = () => new Promise((resolve) => setImmediate(resolve))

describe('two copies of a delivery at once', () => {
  it("acknowledges the second copy's repeats only after the first copy's write, as repeats when it landed", async () => {
    const { intake, writes } = setup()
    const first = intake.accept('a', incoming([job(1), job(2)]))
    let secondDone = false
    const second = intake.accept('b', incoming([job(1), job(2)])).finally(() => (secondDone = true))
    await settleMicrotasks()
    expect(writes.map((w) => w.ids)).toEqual([[1, 2]])
    expect(secondDone).toBe(false)
    writes[0]!.settle()
    expect(await first).toEqual({ status: 'accepted', accepted: 2, duplicates: 0 })
    expect(await second).toEqual({ status: 'accepted', accepted: 0, duplicates: 2 })
  })

  it('stores the strings with the second copy when the first copy could not be written', async () => {
    const { intake, writes, queue } = setup()
    const first = intake.accept('a', incoming([job(1), job(2)]))
    const second = intake.accept('b', incoming([job(2), job(3)]))
    await settleMicrotasks()
    writes[0]!.settle(new Error('disk write failed'))
    await expect(first).rejects.toThrow('disk write failed')
    await settleMicrotasks()
    // String 2 was the first copy's: the second copy writes it now, with its own string 3.
    expect(writes.map((w) => [w.batchId, w.ids])).toEqual([['a', [1, 2]], ['b', [2, 3]]])
    writes[1]!.settle()
    expect(await second).toEqual({ status: 'accepted', accepted: 2, duplicates: 0 })
    expect(queue.depth).toBe(2)
  })

  it("keeps the window's limit while a copy with repeats waits: its room is taken before the wait", async () => {
    const { intake, writes, queue, spilled } = setup({ limit: 4 })
    const a = intake.accept('a', incoming([job(1), job(2)]))
    // b repeats string 2 of a (being written): it waits, with room for its string 3 taken.
    const b = intake.accept('b', incoming([job(2), job(3)]))
    // c arrives meanwhile: 2 + 1 taken, no room for 2 more, so it waits on disk.
    const c = intake.accept('c', incoming([job(4), job(5)]))
    await settleMicrotasks()
    for (const w of writes) w.settle()
    await settleMicrotasks()
    for (const w of writes) w.settle()
    await Promise.all([a, b, c])
    expect(spilled).toEqual([2])
    expect(queue.depth).toBe(3)
    expect(queue.depth).toBeLessThanOrEqual(queue.limit)
  })

  it('never has two copies wait for each other', async () => {
    const { intake, writes } = setup()
    const a = intake.accept('a', incoming([job(1), job(2)]))
    const b = intake.accept('b', incoming([job(2), job(3)]))
    const c = intake.accept('c', incoming([job(3), job(1)]))
    await settleMicrotasks()
    writes[0]!.settle()
    await settleMicrotasks()
    // b waited for a only; c for a and b.
    expect(writes.map((w) => w.ids)).toEqual([[1, 2], [3]])
    writes[1]!.settle()
    expect(await Promise.all([a, b, c])).toEqual([
      { status: 'accepted', accepted: 2, duplicates: 0 },
      { status: 'accepted', accepted: 1, duplicates: 1 },
      { status: 'accepted', accepted: 0, duplicates: 2 },
    ])
  })
})
