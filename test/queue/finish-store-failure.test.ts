// A status update went through for a PATCH of several strings, and the store fails to delete the
// journal entry the first of them completes. The entry stays on disk (a restart checks its
// strings with the service, and absorbs them), but the other strings of the PATCH must still be
// finished here: left active, they kept their room in the window for good, and every later
// arrival of them (a string sent back and fixed, same revision) was absorbed as a repeat of a
// copy "still queued or running": never processed again while the service waits for it.
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { jobKeyOf, type Job } from '../../src/protocol/job.js'
import { Dedupe } from '../../src/queue/dedupe.js'
import { HeldOrganizations } from '../../src/queue/held-organizations.js'
import { Journal } from '../../src/queue/journal.js'
import { createOutcomes } from '../../src/queue/outcomes.js'
import { WorkQueue } from '../../src/queue/work-queue.js'
import { createLogger } from '../../src/util/logger.js'
import { createMetrics } from '../../src/util/metrics.js'

const en = languageFromCode('en')
const de = languageFromCode('de')

function job(stringId: number): Job {
  const j: Job = {
    key: '', organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1,
    string: { key: `k.${stringId}`, context: '', maxLength: 0, text: `Text ${stringId}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
    sourceLanguage: en, targetLanguage: de, batchId: '', attempts: 0,
  }
  j.key = jobKeyOf(j)
  return j
}

/** Outcomes over a journal on `store`, with strings 1 and 2 taken from two deliveries (two entries). */
async function twoStrings(store: Keyv) {
  const journal = new Journal(store)
  const log = createLogger({ level: 'silent' })
  const dedupe = new Dedupe(60_000)
  const queue = new WorkQueue({ concurrency: 1, limit: 10, process: async () => undefined, onError: () => undefined })
  const held = new HeldOrganizations({ log, canReport: async () => true, release: () => undefined })
  const outcomes = createOutcomes({ journal, dedupe, queue, held, metrics: createMetrics(), log, report: () => undefined, stash: async () => undefined })
  const a = job(1)
  const b = job(2)
  for (const j of [a, b]) {
    expect(dedupe.arrive(j, j.revision)).toBe('new')
    queue.reserve(1)
    await journal.append(journal.newBatchId(), [j])
  }
  return { journal, dedupe, queue, outcomes, a, b }
}

describe('finishing strings when the journal cannot delete an entry', () => {
  it('the other strings of the PATCH are finished all the same; the entry stays for the next start', async () => {
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    const del = store.delete.bind(store)
    let failures = 1
    store.delete = (async (key: string | string[]) => {
      if (failures-- > 0) throw new Error('database is locked')
      return del(key as string)
    }) as typeof store.delete
    // Two deliveries of one string each (two entries), taken and reported in one PATCH.
    const { journal, dedupe, queue, outcomes, a, b } = await twoStrings(store)
    await Promise.resolve(outcomes.reporterHooks.reported([{ job: a, port: 'approved' }, { job: b, port: 'approved' }])).catch(() => undefined)

    expect(queue.depth).toBe(0)
    expect(dedupe.isActive(b)).toBe(false)
    // String 2 comes back (sent back, fixed, same revision): asked about, not absorbed from memory.
    expect(dedupe.arrive(job(2), 1)).toBe('finished')
    // String 1's entry is still on disk: the next start replays it (and checks it with the service).
    const left = await new Journal(store).load()
    expect(left.batches.flatMap((x) => x.jobs.map((j) => j.stringId))).toEqual([1])
    expect(journal.size).toBe(0)
  })

  it('a string that cannot be parked is finished here all the same, and the rest of its update too', async () => {
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    const set = store.set.bind(store)
    let failures = 0
    store.set = (async (...args: Parameters<typeof store.set>) => {
      if (String(args[0]).startsWith('p:') && failures-- > 0) throw new Error('database is locked')
      return set(...args)
    }) as typeof store.set
    const { dedupe, queue, outcomes, a, b } = await twoStrings(store)
    failures = 1
    await Promise.resolve(outcomes.reporterHooks.parked([{ job: a, port: 'approved' }, { job: b, port: 'approved' }], 'the service failed')).catch(() => undefined)

    expect(queue.depth).toBe(0)
    expect([a, b].map((j) => dedupe.isActive(j))).toEqual([false, false])
    // String 1 is still in its entry for the next start; string 2 was parked.
    const left = await new Journal(store).load()
    expect(left.batches.flatMap((x) => x.jobs.map((j) => j.stringId))).toEqual([1])
    expect(left.parked.map((p) => p.job.stringId)).toEqual([2])
  })
})
