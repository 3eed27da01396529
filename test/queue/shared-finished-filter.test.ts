// The filter of finished strings in Redis (QUEUE=bullmq): it answers as the default path's filter
// does for the same strings (the same bits), keeps its two generations within their bound, and is
// shared by the instances on one Redis.
import type { Redis } from 'ioredis'
import { afterAll, beforeEach, expect, it } from 'vitest'
import { FinishedFilter, scopeHash } from '../../src/queue/finished-filter.js'
import { SharedFinishedFilter } from '../../src/queue/shared-finished-filter.js'
import { seededRandom } from '../support/seed.js'
import { describeWithService, flushRedis } from '../support/services.js'

// A Redis database of its own, emptied before each test (5 and 7-15 are other files').
const DB = 6

type Ref = { organizationId: string; projectId: number; stepId: number; languageId: string; stringId: number; revision: number }

await describeWithService('redis', 'the filter of finished strings in Redis', (REDIS) => {
  const url = `${REDIS}/${DB}`
  const clients: Redis[] = []
  const client = async () => {
    const { redisClient } = await import('../../src/queue/bullmq-journal.js')
    const c = redisClient(url)
    clients.push(c)
    return c
  }
  const keyOf = (name: string) => `bull:filter-test:${name}`
  beforeEach(async () => {
    await flushRedis(url)
  })
  afterAll(() => {
    for (const c of clients) c.disconnect()
  })

  const random = seededRandom('shared-finished-filter')
  const refs = (n: number): Ref[] =>
    Array.from({ length: n }, () => ({
      organizationId: String(100_000 + Math.floor(random() * 5)),
      projectId: 1 + Math.floor(random() * 3),
      stepId: 10 + Math.floor(random() * 2),
      languageId: ['de', 'fr', 'ja'][Math.floor(random() * 3)]!,
      stringId: 1 + Math.floor(random() * 2 ** 40),
      revision: 1 + Math.floor(random() * 3),
    }))

  it('answers as the default path\'s filter for the same strings, false positives included, through its rotations', async () => {
    const perGeneration = 100
    const shared = new SharedFinishedFilter(await client(), keyOf, perGeneration)
    const local = new FinishedFilter(perGeneration)
    const finished = refs(350)
    // In uneven pieces: a piece may straddle a rotation.
    for (let i = 0; i < finished.length; i += 37) {
      const piece = finished.slice(i, i + 37)
      await shared.add(piece)
      for (const r of piece) local.add(scopeHash(`${r.organizationId}|${r.projectId}|${r.stepId}|${r.languageId}`), r.stringId, r.revision)
    }
    const asked = [...finished, ...refs(2000)]
    const found = await shared.mayHave(asked)
    const expected = asked.filter((r) => local.mayHave(scopeHash(`${r.organizationId}|${r.projectId}|${r.stepId}|${r.languageId}`), r.stringId, r.revision))
    expect(asked.filter((r) => found.has(r))).toEqual(expected)
    // The last one to two generations are kept: at least the newest 100, not the oldest 100.
    for (const r of finished.slice(-100)) expect(found.has(r)).toBe(true)
    expect(finished.slice(0, 100).filter((r) => found.has(r)).length).toBeLessThan(3)
  })

  it('keeps its Redis memory within two generations, and is shared by every client of the queue', async () => {
    const perGeneration = 100
    const a = new SharedFinishedFilter(await client(), keyOf, perGeneration)
    const b = new SharedFinishedFilter(await client(), keyOf, perGeneration)
    const finished = refs(1000)
    for (let i = 0; i < finished.length; i += 50) await (i % 100 === 0 ? a : b).add(finished.slice(i, i + 50))
    const c = await client()
    const bytes = (await c.strlen(keyOf('finished:bits'))) + (await c.strlen(keyOf('finished:bits:before')))
    expect(bytes).toBeGreaterThan(0)
    expect(bytes).toBeLessThanOrEqual(a.maxBytes)
    // What one instance noted, another finds.
    const last = finished.slice(-100)
    expect((await b.mayHave(last)).size).toBe(100)
    expect((await a.mayHave(last)).size).toBe(100)
  })
})
