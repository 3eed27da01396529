// QUEUE=bullmq's hot path, per string taken or finished, after a review: strings taken close
// together are grouped with one timer per group, not one cleared and set again per string; the
// filter of finished strings in Redis hashes a group's scope (organization, project, step,
// language) once, not per string, as the de-duplication does (dedupe.ts). No Redis needed.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Redis } from 'ioredis'
import type { Job } from '../../src/protocol/job.js'

const hashed = vi.hoisted(() => ({ scopes: [] as string[] }))
vi.mock('../../src/queue/finished-filter.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/queue/finished-filter.js')>()
  return { ...actual, scopeHash: (scope: string) => (hashed.scopes.push(scope), actual.scopeHash(scope)) }
})
const { takenTogether, TAKEN_TOGETHER_MS } = await import('../../src/queue/taken-together.js')
const { SharedFinishedFilter } = await import('../../src/queue/shared-finished-filter.js')
const { filterBits, probesOf, scopeHash } = await import('../../src/queue/finished-filter.js')

const job = (i: number, languageId = 'de') => ({ key: `1|7|11|${languageId}|${i}|1`, organizationId: '1', projectId: 7, stepId: 11, languageId, stringId: i, revision: 1 }) as unknown as Job

afterEach(() => {
  vi.restoreAllMocks()
  vi.useRealTimers()
})

describe('strings taken together', () => {
  it('a burst of strings is one group, with one timer for it, not one per string', () => {
    vi.useFakeTimers()
    const setTimeouts = vi.spyOn(globalThis, 'setTimeout')
    const groups: Job[][] = []
    const taken = takenTogether((jobs) => groups.push(jobs))
    for (let i = 0; i < 300; i++) taken.add(job(i))
    expect(setTimeouts).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(TAKEN_TOGETHER_MS)
    expect(groups.map((g) => g.length)).toEqual([300])
  })

  it('a string taken within the window of the one before joins its group; the group goes a window after the last, and never waits past the longest', () => {
    vi.useFakeTimers()
    const groups: number[][] = []
    const taken = takenTogether((jobs) => groups.push(jobs.map((j) => j.stringId)), { windowMs: 20, longestMs: 100 })
    taken.add(job(1))
    vi.advanceTimersByTime(15)
    taken.add(job(2))
    vi.advanceTimersByTime(15)
    // 30 ms after the first, 15 after the last: still open.
    expect(groups).toEqual([])
    vi.advanceTimersByTime(5)
    expect(groups).toEqual([[1, 2]])
    // Strings every 15 ms: the group goes 100 ms after its first all the same.
    for (let i = 3; i <= 10; i++) {
      taken.add(job(i))
      vi.advanceTimersByTime(15)
    }
    expect(groups[1]).toEqual([3, 4, 5, 6, 7, 8, 9])
    vi.advanceTimersByTime(20)
    expect(groups[2]).toEqual([10])
  })

  it('goes at once when full, and what is drained does not go later', () => {
    vi.useFakeTimers()
    const groups: number[][] = []
    const taken = takenTogether((jobs) => groups.push(jobs.map((j) => j.stringId)), { max: 3 })
    for (let i = 1; i <= 4; i++) taken.add(job(i))
    expect(groups).toEqual([[1, 2, 3]])
    expect(taken.drain().map((j) => j.stringId)).toEqual([4])
    vi.advanceTimersByTime(1000)
    expect(groups).toHaveLength(1)
  })
})

describe('the filter of finished strings in Redis, per string', () => {
  /** A Redis that answers the filter's scripts: every string found. */
  const redis = () => ({ eval: vi.fn(async (_script: string, _keys: number, ...args: unknown[]) => args.map(() => 1)) }) as unknown as Redis & { eval: ReturnType<typeof vi.fn> }

  it("hashes a group's scope once, not once per string, and probes each string as the default path's filter does", async () => {
    const client = redis()
    const filter = new SharedFinishedFilter(client, (name) => `q:${name}`, 1000)
    const strings = Array.from({ length: 500 }, (_, i) => job(i))
    hashed.scopes.length = 0
    await filter.add(strings)
    await filter.mayHave(strings)
    expect(hashed.scopes).toEqual(['1|7|11|de'])
    // Another scope, then the first again: each hashed when it comes.
    await filter.add([job(1, 'fr'), job(2, 'fr'), job(3)])
    expect(hashed.scopes).toEqual(['1|7|11|de', '1|7|11|fr', '1|7|11|de'])
    // Each string's probes are the default path's for it, its own scope's.
    const last = [job(1, 'fr'), job(2, 'fr'), job(3)]
    const probes = (client.eval.mock.calls[2] as unknown[]).slice(7)
    expect(probes).toEqual(last.flatMap((s) => probesOf(scopeHash(`1|7|11|${s.languageId}`), s.stringId, 1, filterBits(1000))))
  })
})
