// Issue 16: on SQLite the journal reads one batch (part) of a stored group with json_extract
// instead of the whole row (up to four batches, 1-2 MB of text, parsed on the main thread at every
// refill of the window). Same jobs either way: parts, duplicates skipped, strings that are not
// ASCII; older entry versions and a missing entry fall back to the whole read.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { jobKeyOf, type Job } from '../../src/protocol/job.js'
import { encodeJobs } from '../../src/queue/job-codec.js'
import { Journal } from '../../src/queue/journal.js'
import { createStores, type Stores } from '../../src/store/create-stores.js'

const en = languageFromCode('en')
const de = languageFromCode('de')

function job(stringId: number, organizationId = '200000', text = `Text ${stringId}`): Job {
  const j: Job = {
    key: '', organizationId, domain: `d${organizationId}`, moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 2,
    string: { key: `k.${stringId}`, context: '', maxLength: 0, text, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
    sourceLanguage: en, targetLanguage: de, batchId: '', attempts: 0,
  }
  j.key = jobKeyOf(j)
  return j
}

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-part-read-'))
let stores: Stores
beforeAll(async () => {
  stores = await createStores(`sqlite://${path.join(dir, 'j.sqlite')}`, { prefix: 't1_' })
})
afterAll(async () => {
  await stores.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A journal that reads parts alone, and counts whole-row reads of its store. */
function partJournal() {
  let wholeReads = 0
  const store = stores.journal
  const get = store.get.bind(store)
  store.get = ((...args: Parameters<typeof get>) => {
    wholeReads++
    return get(...args)
  }) as typeof store.get
  let partReads = 0
  const journal = new Journal(store, (key, paths) => {
    partReads++
    return stores.extract!('journal', key, paths)
  })
  return { journal, wholeReads: () => wholeReads, partReads: () => partReads, restore: () => void (store.get = get) }
}

const view = (jobs: Job[]) => jobs.map((j) => ({ key: j.key, batchId: j.batchId, part: j.part ?? 0, text: j.string.text, organizationId: j.organizationId, domain: j.domain }))

describe('reading one part of a journal entry (SQLite)', () => {
  it('the stores offer extract on SQLite, not on memory', async () => {
    expect(typeof stores.extract).toBe('function')
    const memory = await createStores('memory://')
    expect(memory.extract).toBeUndefined()
    await memory.close()
  })

  it('gives the same jobs as the whole read, part by part, without reading the row whole', async () => {
    // Written, and read whole, by a journal of its own; then read part by part.
    const writer = new Journal(stores.journal)
    // Three batches written together (group commit): three parts of one entry; one of them from
    // a webhook's text with a duplicate skipped, texts with quotes, backslashes and Cyrillic.
    const a = [job(1, '200000', 'Say "hi" \\ bye'), job(2)]
    const b = [job(10, '300000', 'Привет, {имя}'), job(11, '300000')]
    const webhook = [job(20), job(21), job(22)]
    const [pa, pb, pc] = await Promise.all([
      writer.append('g1', a),
      writer.append('g2', b),
      writer.append('g3', { count: 2, organization: '200000', domain: 'd200000' }, { organizationId: '200000', domain: 'd200000', text: encodeJobs(webhook), skip: [1] }),
    ])
    expect([pa, pb, pc]).toEqual([{ entryId: 'g1', part: 0 }, { entryId: 'g2', part: 0 }, { entryId: 'g2', part: 1 }])
    const parts = [['g1', 0], ['g2', 0], ['g2', 1]] as const
    const expected: Array<ReturnType<typeof view>> = []
    for (const [entryId, part] of parts) expected.push(view(await writer.readPart(entryId, part)))
    const { journal, wholeReads, restore } = partJournal()
    try {
      for (const [i, [entryId, part]] of parts.entries()) {
        const alone = await journal.readPart(entryId, part)
        expect(view(alone)).toEqual(expected[i])
        expect(alone.length).toBeGreaterThan(0)
      }
      expect(view(await journal.readPart('g2', 1)).map((j) => j.key)).toEqual([webhook[0]!.key, webhook[2]!.key])
      expect(view(await journal.readPart('g2', 0))[0]!.text).toBe('Привет, {имя}')
      expect(wholeReads()).toBe(0)
      // A part past the end: nothing, still without a whole read.
      expect(await journal.readPart('g2', 7)).toEqual([])
      expect(wholeReads()).toBe(0)
    } finally {
      restore()
    }
  })

  it('a part taken into the window in chunks is read from the store once', async () => {
    const writer = new Journal(stores.journal)
    await writer.append('c1', Array.from({ length: 6 }, (_, i) => job(100 + i)))
    const { journal, partReads, restore } = partJournal()
    try {
      const first = await journal.readPart('c1', 0)
      const again = await journal.readPart('c1', 0)
      expect(view(again)).toEqual(view(first))
      expect(first.length).toBe(6)
      expect(partReads()).toBe(1)
      // Another part is read anew.
      await journal.readPart('c1', 1)
      expect(partReads()).toBe(2)
    } finally {
      restore()
    }
  })

  it('an entry of an older version, or one that is gone, is read whole', async () => {
    const { journal, wholeReads, restore } = partJournal()
    try {
      await stores.journal.set('b:old', { v: 3, parts: [{ o: '200000', d: 'd200000', t: encodeJobs([job(30), job(31)]), skip: [0] }] })
      expect((await journal.readPart('old', 0)).map((j) => j.stringId)).toEqual([31])
      expect(wholeReads()).toBe(1)
      expect(await journal.readPart('missing', 0)).toEqual([])
      expect(wholeReads()).toBe(2)
      // After an older entry was read whole, a version-4 one is still read a part at a time.
      await new Journal(stores.journal).append('v4', [job(40), job(41)])
      expect((await journal.readPart('v4', 0)).map((j) => j.stringId)).toEqual([40, 41])
      expect(wholeReads()).toBe(2)
    } finally {
      restore()
    }
  })
})
