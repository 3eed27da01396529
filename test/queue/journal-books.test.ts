// The journal's books, in process over an in-memory store: what an append writes and where it puts
// a batch (group commit), what a failed write does, the strings and bytes each organization holds
// until its strings are done, parked strings, the liveness mark, and what a restart scan picks up.
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { jobKeyOf, type Job } from '../../src/protocol/job.js'
import { encodeJobs } from '../../src/queue/job-codec.js'
import { entryTime, Journal, newBatchId, organizationOf, summarizeEntry } from '../../src/queue/journal.js'

const en = languageFromCode('en')
const de = languageFromCode('de')

function job(stringId: number, organizationId = '200000', extra: Partial<Job> = {}): Job {
  const j: Job = {
    key: '', organizationId, domain: `d${organizationId}`, moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 2,
    string: { key: `k.${stringId}`, context: '', maxLength: 0, text: `Text ${stringId}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
    sourceLanguage: en, targetLanguage: de, batchId: '', attempts: 0, ...extra,
  }
  j.key = jobKeyOf(j)
  return j
}
const jobs = (from: number, n: number, organizationId?: string) => Array.from({ length: n }, (_, i) => job(from + i, organizationId))
const memory = () => new Keyv({ store: new Map(), namespace: 'journal' })

describe('append', () => {
  it('writes nothing for no strings, and refuses a counted batch without its text', async () => {
    const store = memory()
    const journal = new Journal(store)
    expect(await journal.append('e0', [])).toEqual({ entryId: '', part: 0 })
    expect(await journal.append('e0', { count: 0, organization: 'o', domain: 'd' })).toEqual({ entryId: '', part: 0 })
    await expect(journal.append('e0', { count: 2, organization: 'o', domain: 'd' })).rejects.toThrow('a batch without its jobs needs its encoded text')
    expect(journal.size).toBe(0)
    expect(await journal.load()).toEqual({ batches: [], parked: [] })
  })

  it('batches that arrive during a write go together in the next entry, each in its own part', async () => {
    const store = memory()
    const journal = new Journal(store)
    const a = jobs(1, 2)
    const b = jobs(10, 3, '300000')
    const c = [{ ...job(20), part: 5 }]
    const [pa, pb, pc] = await Promise.all([journal.append('first', a), journal.append('second', b), journal.append('third', c)])
    expect([pa, pb, pc]).toEqual([{ entryId: 'first', part: 0 }, { entryId: 'second', part: 0 }, { entryId: 'second', part: 1 }])
    // The jobs carry where they are.
    expect(a.map((j) => [j.batchId, j.part])).toEqual([['first', undefined], ['first', undefined]])
    expect(b.map((j) => [j.batchId, j.part])).toEqual([['second', undefined], ['second', undefined], ['second', undefined]])
    expect(c.map((j) => [j.batchId, j.part])).toEqual([['second', 1]])
    expect(journal.size).toBe(6)
    const loaded = await new Journal(store).load()
    expect(loaded.batches.map((x) => [x.batchId, x.jobs.map((j) => [j.stringId, j.part ?? 0])])).toEqual([
      ['first', [[1, 0], [2, 0]]],
      ['second', [[10, 0], [11, 0], [12, 0], [20, 1]]],
    ])
  })

  it('a failed write rejects every batch of it and is not booked; the next write goes on', async () => {
    const store = memory()
    const set = store.set.bind(store)
    let failures = 1
    store.set = (async (...args: Parameters<typeof set>) => {
      if (failures-- > 0) throw new Error('disk full')
      return set(...args)
    }) as typeof store.set
    const journal = new Journal(store)
    const first = journal.append('e1', jobs(1, 2))
    const second = journal.append('e2', jobs(5, 1))
    await expect(first).rejects.toThrow('disk full')
    expect(await second).toEqual({ entryId: 'e2', part: 0 })
    expect(journal.size).toBe(1)
    expect(journal.used()).toEqual({ strings: 1, bytes: expect.any(Number) })
    expect(await journal.append('e3', jobs(7, 1))).toEqual({ entryId: 'e3', part: 0 })
  })

  it("stores a webhook's text as it is, with the duplicates it skips, and counts the strings taken", async () => {
    const store = memory()
    const journal = new Journal(store)
    const text = encodeJobs(jobs(1, 4, ''))
    const counted = { count: 3, organization: '200000', domain: 'acme' }
    expect(await journal.append('w1', counted, { organizationId: '200000', domain: 'acme', text, skip: [1] })).toEqual({ entryId: 'w1', part: 0 })
    expect(await journal.append('w2', counted, { organizationId: '200000', domain: 'acme', text: encodeJobs(jobs(1, 3, '')), skip: [] })).toEqual({ entryId: 'w2', part: 0 })
    expect(await store.get('b:w1')).toEqual({ v: 4, parts: [{ o: '200000', d: 'acme', t: text, skip: [1], n: 3, b: text.length }] })
    expect(((await store.get('b:w2')) as { parts: object[] }).parts[0]).not.toHaveProperty('skip')
    expect(journal.used('200000')).toEqual({ strings: 6, bytes: text.length + encodeJobs(jobs(1, 3, '')).length, domain: 'acme' })
    const read = await journal.readPart('w1', 0)
    expect(read.map((j) => [j.stringId, j.organizationId, j.domain, j.batchId])).toEqual([[1, '200000', 'acme', 'w1'], [3, '200000', 'acme', 'w1'], [4, '200000', 'acme', 'w1']])
  })
})

describe('done: the books', () => {
  it("counts an organization's strings down, frees the part's bytes with its last string, and deletes the entry with its last", async () => {
    const store = memory()
    const journal = new Journal(store)
    const a = jobs(1, 2)
    const b = jobs(10, 1, '300000')
    await Promise.all([journal.append('x', [job(0)]), journal.append('e', a), journal.append('f', b)])
    const bytesOf = (t: string) => t.length
    const partA = bytesOf(encodeJobs(a))
    expect(journal.used('200000')).toEqual({ strings: 3, bytes: bytesOf(encodeJobs([job(0)])) + partA, domain: 'd200000' })
    expect(journal.used('300000').strings).toBe(1)
    expect(journal.used()).toEqual({ strings: 4, bytes: journal.used('200000').bytes + journal.used('300000').bytes })
    await journal.done(a[0]!)
    expect(journal.used('200000')).toMatchObject({ strings: 2, bytes: bytesOf(encodeJobs([job(0)])) + partA })
    await journal.done(a[1]!)
    expect(journal.used('200000')).toMatchObject({ strings: 1, bytes: bytesOf(encodeJobs([job(0)])) })
    // a and b share entry 'e': it stays until b is done too.
    expect(await store.get('b:e')).toBeDefined()
    await journal.done(b[0]!)
    expect(journal.used('300000')).toEqual({ strings: 0, bytes: 0 })
    expect([...journal.usageByOrganization().keys()]).toEqual(['200000'])
    expect(await store.get('b:e')).toBeUndefined()
    expect(journal.size).toBe(1)
    // Done twice, or never journaled: nothing changes.
    await journal.done(b[0]!)
    await journal.done(job(99, '200000', { batchId: 'nowhere' }))
    expect(journal.size).toBe(1)
    expect(journal.used()).toEqual({ strings: 1, bytes: bytesOf(encodeJobs([job(0)])) })
  })

  it('a job naming a part the entry does not have is counted against its first part', async () => {
    const journal = new Journal(memory())
    const a = jobs(1, 2)
    await journal.append('e', a)
    await journal.done({ ...a[0]!, part: 7 })
    expect(journal.used('200000').strings).toBe(1)
    expect(journal.size).toBe(1)
  })

  it('after an entry is deleted, reading it again reads the store, not what was read before', async () => {
    const store = memory()
    const journal = new Journal(store)
    const a = jobs(1, 1)
    await journal.append('e', a)
    expect(await journal.readPart('e', 0)).toHaveLength(1)
    await journal.done(a[0]!)
    expect(await journal.readPart('e', 0)).toEqual([])
  })
})

describe('parked strings', () => {
  it('are kept with the reason and when, done in their entry, and counted until unparked', async () => {
    const store = memory()
    const journal = new Journal(store)
    const [a, b] = jobs(1, 2)
    await journal.append('e', [a!, b!])
    const before = Date.now()
    await journal.park(a!, 'kept failing')
    await journal.park(b!, 'held')
    expect(journal.parked).toBe(2)
    expect(journal.size).toBe(0)
    expect(await store.get('b:e')).toBeUndefined()
    const stored = (await store.get(`p:${a!.key}`)) as { job: Job; reason: string; at: number }
    expect(stored).toMatchObject({ reason: 'kept failing', job: { stringId: 1 } })
    expect(stored.at).toBeGreaterThanOrEqual(before)
    const parked = await new Journal(store).scan(() => {})
    expect(parked.map((p) => [p.job.stringId, p.reason]).sort()).toEqual([[1, 'kept failing'], [2, 'held']])
    await journal.unpark(a!)
    expect(journal.parked).toBe(1)
    expect(await store.get(`p:${a!.key}`)).toBeUndefined()
    await journal.unpark(b!)
    await journal.unpark(b!)
    expect(journal.parked).toBe(0)
  })
})

describe('alive', () => {
  it('remembers when a process last said it was alive, and is not taken for a batch', async () => {
    const store = memory()
    const journal = new Journal(store)
    expect(await journal.lastAlive()).toBeUndefined()
    const before = Date.now()
    await journal.markAlive()
    const at = await journal.lastAlive()
    expect(at).toBeGreaterThanOrEqual(before)
    expect(at).toBeLessThanOrEqual(Date.now())
    expect(await new Journal(store).load()).toEqual({ batches: [], parked: [] })
    await store.set('alive', 'yesterday')
    expect(await journal.lastAlive()).toBeUndefined()
  })
})

describe('the step of a part', () => {
  it('records the step all of a part\'s jobs are of, from its jobs or from the decoder, and none for several', async () => {
    const store = memory()
    const journal = new Journal(store)
    const list = jobs(1, 3)
    await journal.append('a', list)
    await journal.append('b', { count: 3, organization: '200000', domain: 'd200000', step: '7|12' }, { organizationId: '200000', domain: 'd200000', text: encodeJobs(list) })
    await journal.append('c', [...jobs(10, 1), { ...job(11), stepId: 12 }])
    const steps = async (id: string) => ((await store.get(`b:${id}`)) as { parts: Array<{ s?: string }> }).parts.map((p) => p.s)
    expect(await steps('a')).toEqual(['7|11'])
    expect(await steps('b')).toEqual(['7|12'])
    expect(await steps('c')).toEqual([undefined])
    const seen: Array<string | undefined> = []
    await new Journal(store).scan((_, parts) => parts.forEach((p) => seen.push(p.step)))
    expect(seen.sort()).toEqual(['', '7|11', '7|12'])
  })
})

describe('scan after a restart', () => {
  it('books each entry an earlier run left, skips what this run wrote and what is not an entry', async () => {
    const store = memory()
    await new Journal(store).append('old', jobs(1, 3))
    await store.set('b:junk', { v: 9 })
    await store.set('p:junk', 'not a parked string')
    const journal = new Journal(store)
    await journal.append('new', jobs(50, 2, '300000'))
    const seen: Array<[string, unknown]> = []
    const parked = await journal.scan((entryId, parts) => seen.push([entryId, parts]))
    expect(parked).toEqual([])
    // Its strings at revision 2 are listed, for the replay to note them (an older copy read back first is stale).
    expect(seen).toEqual([['old', [{ organization: '200000', domain: 'd200000', strings: 3, bytes: encodeJobs(jobs(1, 3)).length, step: '7|11', revised: { o: ['200000'], l: ['de'], n: [1, 2, 3].flatMap((id) => [0, 7, 11, 0, id, 2]) } }]]])
    expect(journal.size).toBe(5)
    expect(journal.used('200000').strings).toBe(3)
  })

  it('finds nothing in a store that cannot be iterated', async () => {
    const store = memory()
    ;(store as { iterator?: unknown }).iterator = undefined
    expect(await new Journal(store).scan(() => {})).toEqual([])
  })

  it('a part of an older entry without its count is counted by its jobs, without the skipped ones', () => {
    const t = encodeJobs(jobs(1, 3))
    // Parts written before the step was recorded are served under the step ''.
    expect(summarizeEntry({ v: 3, parts: [{ o: '', d: 'acme', t, skip: [0] }] }, 'e')).toEqual([{ organization: 'acme', domain: 'acme', strings: 2, bytes: t.length, step: '' }])
    expect(summarizeEntry({ v: 3, parts: [{ c: { v: 2, languages: [], jobs: [] } }] }, 'e')).toEqual([{ organization: '', domain: '', strings: 0, bytes: JSON.stringify({ v: 2, languages: [], jobs: [] }).length, step: '' }])
    expect(summarizeEntry([], 'e')).toEqual([{ organization: '', domain: '', strings: 0, bytes: 2, step: '' }])
    expect(summarizeEntry('nothing', 'e')).toBeUndefined()
    expect(summarizeEntry(null, 'e')).toBeUndefined()
  })
})

describe('ids', () => {
  it("an entry id starts with its time, which reads back; anything else reads as 0", () => {
    const before = Date.now()
    const id = newBatchId()
    expect(id).toMatch(/^[0-9a-z]+-[0-9a-f]{12}$/)
    expect(entryTime(id)).toBeGreaterThanOrEqual(before)
    expect(entryTime(id)).toBeLessThanOrEqual(Date.now())
    expect(newBatchId()).not.toBe(id)
    expect(new Journal(memory()).newBatchId()).toMatch(/^[0-9a-z]+-[0-9a-f]{12}$/)
    expect(entryTime('!!-abc')).toBe(0)
    expect(entryTime('zz')).toBe(35 * 36 + 35)
  })

  it("a string's line is its organization's id, or its domain when it has none", () => {
    expect(organizationOf({ organizationId: '7', domain: 'acme' })).toBe('7')
    expect(organizationOf({ organizationId: '', domain: 'acme' })).toBe('acme')
  })
})
