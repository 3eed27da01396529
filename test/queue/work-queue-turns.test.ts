// The work queue on its own: the window it counts (admitted, finished, room), groups of at most
// `groupMax` jobs per run, and its turns: organizations in turn, then each one's groups in turn,
// oldest first; errors go to onError with the jobs; drain gives the waiting jobs back.
import { describe, expect, it } from 'vitest'
import type { Job } from '../../src/protocol/job.js'
import { PartFailed } from '../../src/queue/process-jobs.js'
import { DETACH_MAX_WEIGHT, WorkQueue } from '../../src/queue/work-queue.js'

const job = (name: string, organizationId: string, group = 'x', domain = `${organizationId || 'none'}.example`): Job =>
  ({ key: name, organizationId, domain, moduleKey: group, projectId: 7, stepId: 11, languageId: 'de', stringId: 1, revision: 1, batchId: 'b', attempts: 0 }) as unknown as Job

function gate() {
  let open: () => void = () => {}
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

function setup(options: { limit?: number; groupMax?: number; concurrency?: number } = {}) {
  const runs: string[][] = []
  const first = gate()
  let blocked = true
  const errors: Array<{ error: unknown; jobs: string[] }> = []
  let rooms = 0
  const queue = new WorkQueue({
    concurrency: options.concurrency ?? 1,
    limit: options.limit ?? 100,
    groupMax: options.groupMax,
    async process(jobs) {
      runs.push(jobs.map((j) => j.key))
      if (blocked) {
        blocked = false
        await first.promise
      }
      if (jobs.some((j) => j.key.startsWith('fail'))) throw new Error('pipeline broke')
    },
    onError: (error, jobs) => errors.push({ error, jobs: jobs.map((j) => j.key) }),
    onRoom: () => void rooms++,
  })
  return { queue, runs, errors, release: first.open, rooms: () => rooms }
}

describe('WorkQueue', () => {
  it('serves organizations in turn, then their groups in turn, oldest first, at most groupMax a run', async () => {
    const { queue, runs, release } = setup({ groupMax: 2 })
    queue.push([job('a1', 'A')]) // starts at once and holds the only slot
    queue.push([job('a2', 'A'), job('a3', 'A'), job('a4', 'A'), job('ay1', 'A', 'y'), job('b1', 'B')])
    expect(queue.waiting).toBe(5)
    release()
    await queue.onIdle()
    expect(runs).toEqual([['a1'], ['a2', 'a3'], ['b1'], ['ay1'], ['a4']])
    expect(queue.waiting).toBe(0)
  })

  // A run reads the step settings of its first job's organization: two organizations with the
  // same project and step ids under one domain (a header's, before either is bound) never share one.
  it('never runs the jobs of two organizations together, even under one domain', async () => {
    const { queue, runs, release } = setup()
    queue.push([job('hold', 'A', 'g0')])
    queue.push([job('a', 'A', 'x', 'shared.example'), job('b', 'B', 'x', 'shared.example'), job('a2', 'A', 'x', 'shared.example')])
    release()
    await queue.onIdle()
    expect(runs).toEqual([['hold'], ['a', 'a2'], ['b']])
  })

  it("keeps one organization's many groups from holding another's lone group back", async () => {
    const { queue, runs, release } = setup()
    queue.push([job('hold', 'A', 'g0')])
    queue.push(Array.from({ length: 5 }, (_, i) => job(`a${i}`, 'A', `g${i + 1}`)))
    queue.push([job('b', 'B')])
    release()
    await queue.onIdle()
    expect(runs.flat().indexOf('b')).toBe(2) // right after A's first waiting group
  })

  it('runs a whole group at once up to 500 by default', async () => {
    const { queue, runs, release } = setup()
    queue.push([job('hold', 'A', 'other')])
    queue.push(Array.from({ length: 501 }, (_, i) => job(`j${i}`, 'A')))
    release()
    await queue.onIdle()
    expect(runs.map((r) => r.length)).toEqual([1, 500, 1])
  })

  it('runs a batch pushed into an idle queue as one run per group, not one run per free slot', async () => {
    // An idle worker has every slot free: p-queue starts a task as soon as it is added. A batch's
    // strings of one group must still go to one run (one translation fetch, one status check),
    // not the first few one by one while the rest wait for a slot.
    const runs: string[][] = []
    const queue = new WorkQueue({
      concurrency: 4,
      limit: 100,
      async process(jobs) {
        runs.push(jobs.map((j) => j.key))
      },
      onError: () => {},
    })
    queue.push([...Array.from({ length: 6 }, (_, i) => job(`a${i}`, 'A')), job('ay', 'A', 'y'), job('b', 'B')])
    await queue.onIdle()
    expect(runs).toEqual([['a0', 'a1', 'a2', 'a3', 'a4', 'a5'], ['b'], ['ay']])
  })

  it('runs the rest of a group over groupMax when a slot is free at once', async () => {
    const runs: number[] = []
    const queue = new WorkQueue({
      concurrency: 4,
      limit: 2000,
      async process(jobs) {
        runs.push(jobs.length)
      },
      onError: () => {},
    })
    queue.push(Array.from({ length: 1200 }, (_, i) => job(`j${i}`, 'A')))
    await queue.onIdle()
    // The three runs start together (free slots), in no particular order.
    expect([...runs].sort((a, b) => a - b)).toEqual([200, 500, 500])
    expect(queue.waiting).toBe(0)
  })

  it('tells organizations apart by id, and by domain when there is none', async () => {
    const { queue, runs, release } = setup()
    queue.push([job('hold', 'A')])
    // Two groups of the same organization '' (told apart by domain), then one of 'C'.
    queue.push([job('d1', '', 'x', 'one.example'), job('d2', '', 'y', 'one.example'), job('e1', '', 'x', 'two.example'), job('c1', 'C')])
    release()
    await queue.onIdle()
    expect(runs).toEqual([['hold'], ['d1'], ['e1'], ['c1'], ['d2']])
  })

  it('hands a failed run to onError with its jobs, and goes on', async () => {
    const { queue, runs, errors, release } = setup()
    release()
    queue.push([job('fail1', 'A')])
    queue.push([job('ok', 'B')])
    await queue.onIdle()
    expect(runs).toEqual([['fail1'], ['ok']])
    expect(errors).toHaveLength(1)
    expect((errors[0]!.error as Error).message).toBe('pipeline broke')
    expect(errors[0]!.jobs).toEqual(['fail1'])
  })

  it('counts the window: admitted until finished, room up to the limit, never below zero', () => {
    const { queue, rooms } = setup({ limit: 10 })
    expect(queue.limit).toBe(10)
    expect(queue.hasRoom(10)).toBe(true)
    expect(queue.hasRoom(11)).toBe(true) // an empty window takes any batch
    expect(queue.hasRoom(0)).toBe(true)
    queue.reserve(4)
    expect(queue.depth).toBe(4)
    expect(queue.hasRoom(6)).toBe(true)
    expect(queue.hasRoom(7)).toBe(false)
    queue.finish()
    expect(queue.depth).toBe(3)
    expect(rooms()).toBe(1)
    queue.finish(2)
    expect(rooms()).toBe(2)
    queue.finish(0)
    expect(rooms()).toBe(2) // nothing left the window
    queue.finish(5)
    expect(queue.depth).toBe(0)
    queue.reserve(12)
    expect(queue.hasRoom(1)).toBe(false)
    expect(queue.hasRoom(0)).toBe(false)
  })

  it('needs no onRoom listener', () => {
    const queue = new WorkQueue({ concurrency: 1, limit: 5, process: async () => {}, onError: () => {} })
    queue.reserve(2)
    queue.finish(2)
    expect(queue.depth).toBe(0)
  })

  it('drains the waiting jobs, which then never run', async () => {
    const { queue, runs, release } = setup()
    queue.push([job('hold', 'A')])
    queue.push([job('w1', 'A'), job('w2', 'B', 'y')])
    expect(queue.running).toBe(1)
    expect(queue.drain().map((j) => j.key).sort()).toEqual(['w1', 'w2'])
    expect(queue.waiting).toBe(0)
    release()
    await queue.onIdle()
    expect(runs).toEqual([['hold']])
    // The queue still works after a drain.
    queue.push([job('later', 'A')])
    await queue.onIdle()
    expect(runs).toEqual([['hold'], ['later']])
  })

  it('runs other tasks in the same slots as pipeline runs', async () => {
    const { queue, release } = setup()
    const order: string[] = []
    queue.push([job('hold', 'A')])
    const task = queue.runTask(async () => void order.push('task'))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(order).toEqual([]) // the only slot is taken
    release()
    await task
    expect(order).toEqual(['task'])
  })

  it('starts nothing while paused', async () => {
    const { queue, runs, release } = setup()
    release()
    queue.pause()
    queue.push([job('j', 'A')])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(runs).toEqual([])
    expect(queue.waiting).toBe(1)
  })

  describe('detached work (runs waiting on the long-text lane)', () => {
    it('takes tasks beside the slots up to detachMaxWeight together, and frees their weight when they end', async () => {
      const queue = new WorkQueue({ concurrency: 1, limit: 10, detachMaxWeight: 100, process: async () => {}, onError: () => {} })
      const gates = [gate(), gate(), gate()]
      expect(queue.detach(() => gates[0]!.promise, [], 60)).toBe(true)
      expect(queue.detach(() => gates[1]!.promise, [], 40)).toBe(true)
      expect(queue.detach(() => gates[2]!.promise, [], 1)).toBe(false)
      gates[0]!.open()
      await new Promise((r) => setTimeout(r, 0))
      expect(queue.detach(() => gates[2]!.promise, [], 60)).toBe(true)
      expect(queue.detach(() => gates[2]!.promise, [], 1)).toBe(false)
      gates[1]!.open()
      gates[2]!.open()
      await queue.onIdle()
      // Nothing detached: one task is taken whatever it weighs.
      expect(queue.detach(async () => {}, [], 1000)).toBe(true)
      await queue.onIdle()
    })

    it('weighs up to DETACH_MAX_WEIGHT by default', () => {
      const queue = new WorkQueue({ concurrency: 1, limit: 10, process: async () => {}, onError: () => {} })
      const g = gate()
      expect(queue.detach(() => g.promise, [], DETACH_MAX_WEIGHT - 1)).toBe(true)
      expect(queue.detach(() => g.promise, [], 1)).toBe(true)
      expect(queue.detach(() => g.promise, [], 1)).toBe(false)
      g.open()
    })

    it('onIdle waits for detached work, and for the runs it queues', async () => {
      const { queue, runs, release } = setup()
      release()
      const g = gate()
      let detachedDone = false
      queue.detach(async () => {
        await g.promise
        queue.push([job('retry1', 'A')])
        detachedDone = true
      }, [], 1)
      let idle = false
      const waiting = queue.onIdle().then(() => { idle = true })
      await new Promise((r) => setTimeout(r, 10))
      expect(idle).toBe(false)
      g.open()
      await waiting
      expect(detachedDone).toBe(true)
      expect(runs).toEqual([['retry1']])
    })

    it('a run that failed for part of its group only gives that part to onError', async () => {
      const errors: Array<{ error: unknown; jobs: string[] }> = []
      const queue = new WorkQueue({
        concurrency: 1, limit: 10,
        process: async (jobs) => { throw new PartFailed(new Error('reporter broke'), jobs.filter((j) => j.key.startsWith('short'))) },
        onError: (error, jobs) => errors.push({ error, jobs: jobs.map((j) => j.key) }),
      })
      queue.push([job('long1', 'A'), job('short1', 'A')])
      await queue.onIdle()
      expect(errors).toEqual([{ error: new Error('reporter broke'), jobs: ['short1'] }])
    })

    it('a detached task that throws goes to onError with its jobs', async () => {
      const { queue, errors } = setup()
      queue.detach(async () => { throw new Error('lane broke') }, [job('long1', 'A')], 1)
      await queue.onIdle()
      expect(errors).toEqual([{ error: new Error('lane broke'), jobs: ['long1'] }])
    })
  })
})
