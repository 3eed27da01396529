// The journal's stored entries: version 4 keeps every field of a job through a write and a read
// (attempts, a held decision's port, why an event was invalid), and entries written by earlier
// versions (3, 2, 1) still replay to the same jobs after an upgrade.
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { jobKeyOf, type Job } from '../../src/protocol/job.js'
import { decodeJobs, encodeJobs } from '../../src/queue/job-codec.js'
import { Journal } from '../../src/queue/journal.js'

const en = languageFromCode('en')
const de = languageFromCode('de')

function job(stringId: number, extra: Partial<Job> = {}): Job {
  const j: Job = {
    key: '', organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 2,
    string: { key: `k.${stringId}`, context: 'ctx', maxLength: 40, text: `Text ${stringId}`, isPlural: stringId % 2 === 0, fileType: 'json', filePath: '/a.json', labelIds: [3] },
    sourceLanguage: en, targetLanguage: de, batchId: 'x', attempts: 0, ...extra,
  }
  j.key = jobKeyOf(j)
  return j
}

async function replay(store: Keyv) {
  const journal = new Journal(store)
  const parts: Array<{ entryId: string; organization: string; strings: number }> = []
  await journal.scan((entryId, summaries) => summaries.forEach((s) => parts.push({ entryId, organization: s.organization, strings: s.strings })))
  const jobs: Job[] = []
  for (const [i, p] of parts.entries()) jobs.push(...(await journal.readPart(p.entryId, parts.slice(0, i).filter((q) => q.entryId === p.entryId).length)))
  return { journal, parts, jobs }
}

const strip = (jobs: Job[]) => jobs.map(({ batchId: _b, part: _p, ...rest }) => rest)

describe('journal entries', () => {
  it('version 4: jobs journaled again keep attempts, a held port (even "") and why they were invalid', async () => {
    const jobs = [job(1), job(2, { attempts: 2 }), job(3, { decidedPort: '' }), job(4, { decidedPort: 'approved', attempts: 1 }), job(5, { invalid: 'bad event' })]
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    const placement = await new Journal(store).append('e1', jobs.map((j) => ({ ...j })))
    const raw = (await store.get(`b:${placement.entryId}`)) as { v: number; parts: Array<{ t: string }> }
    expect(raw.v).toBe(4)
    // The part is the one compact form the webhook decoder writes.
    expect(decodeJobs(raw.parts[0]!.t, { organizationId: '', domain: 'acme', batchId: 'x' })).toEqual(jobs)
    const { jobs: replayed, parts } = await replay(store)
    expect(parts).toEqual([{ entryId: placement.entryId, organization: '200000', strings: 5 }])
    expect(strip(replayed)).toEqual(strip(jobs))
  })

  it('the compact form: short tails, equal language records written once', () => {
    const text = encodeJobs([job(1), job(2, { sourceLanguage: { ...en } }), job(3, { attempts: 1 })])
    const parsed = JSON.parse(text) as { languages: unknown[]; jobs: unknown[][] }
    expect(parsed.languages).toHaveLength(2)
    expect(parsed.jobs.map((t) => t.length)).toEqual([17, 17, 19])
    expect(encodeJobs([])).toBe('')
  })

  it('version 3 (a webhook part and a compact part) replays to the same jobs', async () => {
    const webhook = [job(1), job(2)]
    const held = job(3, { decidedPort: 'approved', attempts: 1, invalid: undefined })
    const parked = job(4, { invalid: 'why' })
    // As version 3 wrote them: the webhook's decoder text with a skipped duplicate, and jobs
    // journaled again in the compact form of version 2.
    const v2 = (j: Job) => [j.organizationId, j.domain, j.moduleKey, j.projectId, j.stepId, j.languageId, j.stringId, j.revision, j.string.key, j.string.context, j.string.maxLength, j.string.text, j.string.isPlural ? 1 : 0, j.string.fileType, j.string.filePath, j.string.labelIds, 0, 1, j.attempts, ...(j.decidedPort !== undefined ? [j.invalid ?? 0, j.decidedPort] : j.invalid ? [j.invalid] : [])]
    const entry = {
      v: 3,
      parts: [
        { o: '200000', d: 'acme', t: encodeJobs([job(9), ...webhook]), skip: [0], n: 2, b: 100 },
        { c: { v: 2, languages: [en, de], jobs: [v2(held), v2(parked)] }, d: 'acme' },
      ],
    }
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    await store.set('b:old', entry)
    const { jobs, parts, journal } = await replay(store)
    expect(parts).toEqual([{ entryId: 'old', organization: '200000', strings: 2 }, { entryId: 'old', organization: '200000', strings: 2 }])
    expect(strip(jobs)).toEqual(strip([...webhook, held, parked]))
    expect(jobs.map((j) => [j.batchId, j.part ?? 0])).toEqual([['old', 0], ['old', 0], ['old', 1], ['old', 1]])
    // Done with every job, the old entry is deleted like a new one.
    for (const j of jobs) await journal.done(j)
    expect(await store.get('b:old')).toBeUndefined()
  })

  it('versions 2 and 1 replay too', async () => {
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    const j = job(7, { attempts: 1 })
    await store.set('b:v2', { v: 2, languages: [en, de], jobs: [[j.organizationId, j.domain, j.moduleKey, j.projectId, j.stepId, j.languageId, j.stringId, j.revision, j.string.key, j.string.context, j.string.maxLength, j.string.text, 0, j.string.fileType, j.string.filePath, j.string.labelIds, 0, 1, 1]] })
    await store.set('b:v1', [{ ...job(8), batchId: 'v1' }])
    const { jobs } = await replay(store)
    expect(strip(jobs).sort((a, b) => a.stringId - b.stringId)).toEqual(strip([j, job(8)]))
  })

  it('a job parked before version 4 keeps its decided port', async () => {
    const store = new Keyv({ store: new Map(), namespace: 'journal' })
    const { decidedPort: _d, ...old } = job(5)
    await store.set(`p:${old.key}`, { job: { ...old, port: 'approved' }, reason: 'the organization is held', at: 1 })
    const [parked] = await new Journal(store).scan(() => {})
    expect(parked!.job).toEqual({ ...old, decidedPort: 'approved' })
  })
})
