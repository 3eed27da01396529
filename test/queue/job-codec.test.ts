// The compact form of jobs (job-codec.ts) beyond what the journal tests read back: the count a
// batch's encoder gives the intake, and language records shared by every job that reads them.
import { describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { jobKeyOf, type Job } from '../../src/protocol/job.js'
import { decodeJobs, encodeJobs, JobEncoder } from '../../src/queue/job-codec.js'

const en = languageFromCode('en')
const de = languageFromCode('de')

function job(stringId: number, extra: Partial<Job> = {}): Job {
  const j: Job = {
    key: '', organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 2,
    string: { key: `k.${stringId}`, context: '', maxLength: 0, text: `Text ${stringId}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
    sourceLanguage: en, targetLanguage: de, batchId: 'b1', attempts: 0, ...extra,
  }
  j.key = jobKeyOf(j)
  return j
}

const origin = { organizationId: '', domain: 'acme', batchId: 'b1' }

describe('job codec', () => {
  it('counts the jobs an encoder was given (the strings a batch holds)', () => {
    const encoder = new JobEncoder()
    expect(encoder.count).toBe(0)
    expect(encoder.text()).toBe('')
    encoder.add(job(1))
    encoder.add(job(2, { attempts: 3 }))
    encoder.add(job(3, { invalid: 'no text' }))
    expect(encoder.count).toBe(3)
    expect(decodeJobs(encoder.text(), origin)).toEqual([job(1), job(2, { attempts: 3 }), job(3, { invalid: 'no text' })])
  })

  it('writes only the language records the jobs use, each once, in the order first met', () => {
    const fr = languageFromCode('fr')
    const text = encodeJobs([job(1), job(2, { targetLanguage: fr, languageId: 'fr' }), job(3, { sourceLanguage: { ...en } })])
    expect((JSON.parse(text) as { languages: unknown[] }).languages).toEqual([en, de, fr])
  })

  it('shares one language object among the jobs of every batch read back (a queue holds a handful)', () => {
    const a = decodeJobs(encodeJobs([job(1)]), origin)
    const b = decodeJobs(encodeJobs([job(2, { sourceLanguage: { ...en }, targetLanguage: { ...de } })]), origin)
    expect(b[0]!.sourceLanguage).toBe(a[0]!.sourceLanguage)
    expect(b[0]!.targetLanguage).toBe(a[0]!.targetLanguage)
    expect(b[0]!.sourceLanguage).not.toBe(b[0]!.targetLanguage)
  })

  it('a job read back has no port decided and no reason to be invalid unless it was written with one', () => {
    const [plain, retried, held] = decodeJobs(encodeJobs([job(1), job(2, { attempts: 2 }), job(3, { decidedPort: 'approved' })]), origin)
    expect(plain).toStrictEqual(job(1))
    expect(retried).toStrictEqual(job(2, { attempts: 2 }))
    expect(held).toStrictEqual(job(3, { decidedPort: 'approved' }))
  })

  it('keeps the fingerprint of the translation a held decision was made on, with or without its review', () => {
    const [a, b] = decodeJobs(encodeJobs([job(1, { decidedPort: 'approved', decidedOn: 'abc' }), job(2, { decidedPort: '', decidedReview: { findings: [] } as unknown as Job['decidedReview'], decidedOn: 'def' })]), origin)
    expect(a).toStrictEqual(job(1, { decidedPort: 'approved', decidedOn: 'abc' }))
    expect(b).toStrictEqual(job(2, { decidedPort: '', decidedReview: { findings: [] } as unknown as Job['decidedReview'], decidedOn: 'def' }))
  })
})

describe('language records shared between jobs', () => {
  const base = { id: 'xx', name: 'Custom', editorCode: 'xx', twoLettersCode: 'xx', threeLettersCode: 'xxx', locale: 'xx-XX', androidCode: 'xx-rXX', osxCode: 'xx.lproj', osxLocale: 'xx', textDirection: 'ltr', dialectOf: null } as unknown as Job['targetLanguage']
  const readBack = (target: Job['targetLanguage'], organizationId = '200000') => decodeJobs(encodeJobs([job(1, { organizationId, targetLanguage: target })]), origin)[0]!.targetLanguage

  it('are shared only when equal field for field: a field the service added since, a value of another type, a separator in a value', () => {
    const variants: Array<Record<string, unknown>> = [
      { ...base, pluralCategoryNames: ['one', 'other'] },
      { ...base, pluralCategoryNames: ['one', 'few', 'many', 'other'] },
      { ...base, dialectOf: 'null' },
      { ...base, dialectOf: 'xx' },
      { ...base, name: 'Cus\u0001tom', editorCode: 'xx' },
      { ...base, name: 'Cus', editorCode: 'tom\u0001xx' },
      { ...base, textDirection: 7 },
      { ...base, textDirection: '7' },
    ]
    // Each read back in a delivery of another organization after all the others: none takes another's record.
    for (const [i, v] of variants.entries()) readBack(v as unknown as Job['targetLanguage'], String(100 + i))
    for (const [i, v] of variants.entries()) expect(readBack(v as unknown as Job['targetLanguage'], String(200 + i))).toEqual(v)
    expect(readBack(base)).toEqual(base)
  })

  it('equal records are still one object, whatever delivery they came in', () => {
    expect(readBack({ ...base }, '1')).toBe(readBack({ ...base }, '2'))
    const extended = { ...base, pluralCategoryNames: ['one', 'other'] } as unknown as Job['targetLanguage']
    expect(readBack({ ...extended }, '1')).toBe(readBack({ ...extended }, '2'))
  })
})
