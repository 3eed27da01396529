// The journal's group commit (a performance change made for issue 9): batches that arrive while a
// write is under way share the next write, each resolves only after it, and a failed write fails
// every batch in it.
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { Journal } from '../../src/queue/journal.js'
import type { Job } from '../../src/protocol/job.js'

const lang = { id: 'de', name: 'German', editorCode: 'de', twoLettersCode: 'de', threeLettersCode: 'deu', locale: 'de-DE', androidCode: 'de-rDE', osxCode: 'de', osxLocale: 'de', textDirection: 'ltr', dialectOf: null }
const job = (id: number): Job => ({
  key: `o|1|2|de|${id}|1`, organizationId: 'o', domain: 'acme', moduleKey: 'qa-gate', projectId: 1, stepId: 2, languageId: 'de', stringId: id, revision: 1,
  string: { key: `k${id}`, context: '', maxLength: 0, text: `text ${id}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
  sourceLanguage: { ...lang, id: 'en', locale: 'en-US' }, targetLanguage: lang, batchId: '', attempts: 0,
})


/** Everything a journal holds, read the way the backlog reads it: scanned, then part by part. */
async function loadAll(store: ConstructorParameters<typeof Journal>[0]) {
  const journal = new Journal(store)
  const refs: Array<[string, number]> = []
  await journal.scan((entryId, parts) => parts.forEach((_, i) => refs.push([entryId, i])))
  const batches: Array<{ batchId: string; jobs: Awaited<ReturnType<Journal['readPart']>> }> = []
  for (const [entryId, part] of refs) {
    let b = batches.find((x) => x.batchId === entryId)
    if (!b) batches.push((b = { batchId: entryId, jobs: [] }))
    b.jobs.push(...(await journal.readPart(entryId, part)))
  }
  return { batches }
}

describe('journal group commit', () => {
  it('writes batches that arrive during a write together, and replays them', async () => {
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    const sets: string[] = []
    const set = store.set.bind(store)
    store.set = (async (key: string, value: unknown) => {
      sets.push(key)
      await new Promise((r) => setTimeout(r, 20))
      return set(key, value)
    }) as typeof store.set
    const journal = new Journal(store)
    const appends = [1, 2, 3, 4].map((n) => journal.append(`batch-${n}`, [job(n * 10), job(n * 10 + 1)]))
    await Promise.all(appends)
    expect(sets).toEqual(['b:batch-1', 'b:batch-2'])
    expect(journal.size).toBe(8)
    const { batches } = await loadAll(store)
    expect(batches.map((b) => [b.batchId, b.jobs.map((j) => j.stringId)])).toEqual([
      ['batch-1', [10, 11]],
      ['batch-2', [20, 21, 30, 31, 40, 41]],
    ])
  })

  it('fails every batch of a failed write and counts none of them', async () => {
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    store.set = (async () => {
      await new Promise((r) => setTimeout(r, 5))
      throw new Error('disk full')
    }) as typeof store.set
    const journal = new Journal(store)
    const results = await Promise.allSettled([journal.append('a', [job(1)]), journal.append('b', [job(2)])])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(journal.size).toBe(0)
  })
})

describe('journal entries written from decoded webhooks', () => {
  it('store the decoder text and the duplicates skipped, and replay only the jobs taken', async () => {
    const { batchSource } = await import('../../src/bench/webhook-bodies.js')
    const { decodeBatch } = await import('../../src/webhooks/decode-batch.js')
    const { decodeJobs } = await import('../../src/queue/job-codec.js')
    const source = batchSource({ seed: 3, strings: 10, languages: ['de', 'ar'] }, { appSecret: 's', batchSize: 20 })
    const b = source.batch(0)
    const decoded = decodeBatch(b.body, b.headers['X-Service-Signature']!, ['s'])
    if (!decoded.ok) throw new Error(decoded.message)
    const origin = { organizationId: '', domain: 'acme', batchId: 'w1' }
    const jobs = decodeJobs(decoded.jobs, origin)
    const taken = jobs.filter((_, i) => i % 4 !== 0)
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    const journal = new Journal(store)
    await Promise.all([
      journal.append('w1', taken, { organizationId: '', domain: 'acme', text: decoded.jobs, skip: [0, 4, 8, 12, 16] }),
      journal.append('p1', [job(1)]),
    ])
    expect(journal.size).toBe(16)
    const { batches } = await loadAll(store)
    const replayed = batches.flatMap((x) => x.jobs)
    expect(replayed.map((j) => j.key)).toEqual([...taken, job(1)].map((j) => j.key))
    // The organization comes from each event when the header named none, as on intake.
    expect(replayed[0]!.organizationId).toBe(taken[0]!.organizationId)
    expect(replayed[0]!.organizationId).not.toBe('')
    expect(replayed[0]).toEqual({ ...taken[0], batchId: batches[0]!.batchId })
  })
})
