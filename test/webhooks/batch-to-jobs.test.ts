// From a signed batch to the jobs the queue holds (decodeBatch, then toJobs): every field of a job
// comes from its event (the domain and batch from the delivery), language records are shared
// between jobs, and an event that names its string but can't be used becomes a job marked invalid.
// And the depth limit of events that are not string events (limit-depth.ts).
import { describe, expect, it } from 'vitest'
import { jobKeyOf } from '../../src/protocol/job.js'
import { decodeBatch } from '../../src/webhooks/decode-batch.js'
import { CUT_MARKER, cutToDepth, deeperThan, limitDepth } from '../../src/webhooks/limit-depth.js'
import { decodeJobs as toJobs } from '../../src/queue/job-codec.js'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'

function decode(events: unknown[], organization = '200000') {
  const body = JSON.stringify({ events })
  const decoded = decodeBatch(Buffer.from(body), signBody(body, 's3cret'), ['s3cret'], organization)
  if (!decoded.ok) throw new Error(`not decoded: ${decoded.message}`)
  return decoded
}

describe('toJobs', () => {
  it('makes one job per event, every field from the event and the delivery', () => {
    const event = recalculationEvent({ stringId: 42, text: 'Hello {name}', languageId: 'fr', moduleKey: 'qa', stepId: 5, projectId: 9, revision: 3 })
    Object.assign(event.stringStatus.translation, { context: 'greeting', maxLength: '25', labelIds: [4, 6], hasPlurals: true })
    const decoded = decode([event])
    const [job] = toJobs(decoded.jobs, { organizationId: '200000', domain: 'acme', batchId: 'batch-1' })
    expect(job).toMatchObject({
      organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 9, stepId: 5, languageId: 'fr', stringId: 42, revision: 3, batchId: 'batch-1', attempts: 0,
      string: { key: 'key.42', context: 'greeting', maxLength: 25, text: 'Hello {name}', isPlural: true, fileType: 'json', filePath: '/ui.json', labelIds: [4, 6] },
    })
    expect(job!.sourceLanguage).toMatchObject({ id: 'en' })
    expect(job!.targetLanguage).toMatchObject({ id: 'fr' })
    expect(job!.key).toBe(jobKeyOf(job!))
    expect(job!.invalid).toBeUndefined()
    expect(toJobs(decode([recalculationEvent({ stringId: 1 })]).jobs, { organizationId: '', domain: 'd', batchId: 'b' })[0]!.string.isPlural).toBe(false)
  })

  it("takes the event's organization when the delivery names none", () => {
    const decoded = decode([recalculationEvent({ stringId: 1, organizationId: '300' })], '')
    expect(toJobs(decoded.jobs, { organizationId: '', domain: 'acme', batchId: 'b' })[0]!.organizationId).toBe('300')
  })

  it('shares one language record between the jobs of a batch and across batches', () => {
    const a = toJobs(decode([recalculationEvent({ stringId: 1 }), recalculationEvent({ stringId: 2 })]).jobs, { organizationId: '1', domain: 'acme', batchId: 'b1' })
    const b = toJobs(decode([recalculationEvent({ stringId: 3 })]).jobs, { organizationId: '1', domain: 'acme', batchId: 'b2' })
    expect(a[0]!.targetLanguage).toBe(a[1]!.targetLanguage)
    expect(a[0]!.targetLanguage).toBe(b[0]!.targetLanguage)
    expect(a[0]!.sourceLanguage).toBe(b[0]!.sourceLanguage)
    expect(a[0]!.sourceLanguage).not.toBe(a[0]!.targetLanguage)
  })

  it('keeps sharing a language record while other new languages come and go', () => {
    const origin = { organizationId: '1', domain: 'acme', batchId: 'b' }
    const first = toJobs(decode([recalculationEvent({ stringId: 1, languageId: 'zz-one' }), recalculationEvent({ stringId: 2, languageId: 'zz-two' })]).jobs, origin)
    const again = toJobs(decode([recalculationEvent({ stringId: 3, languageId: 'zz-one' })]).jobs, origin)
    expect(again[0]!.targetLanguage).toBe(first[0]!.targetLanguage)
  })

  it('forgets the language records it shares once it has kept a few thousand', () => {
    const origin = { organizationId: '1', domain: 'acme', batchId: 'b' }
    const [before] = toJobs(decode([recalculationEvent({ stringId: 1, languageId: 'yy-first' })]).jobs, origin)
    const many = Array.from({ length: 2001 }, (_, i) => recalculationEvent({ stringId: i + 2, languageId: `yy-${i}` }))
    toJobs(decode(many).jobs, origin)
    const [after] = toJobs(decode([recalculationEvent({ stringId: 1, languageId: 'yy-first' })]).jobs, origin)
    expect(after!.targetLanguage).toEqual(before!.targetLanguage)
    expect(after!.targetLanguage).not.toBe(before!.targetLanguage)
  })

  it('marks a job whose event cannot be used, with the reason', () => {
    const bad = recalculationEvent({ stringId: 7 })
    ;(bad.stringStatus.translation as { revision: unknown }).revision = 'not a number'
    const decoded = decode([bad, recalculationEvent({ stringId: 8 })])
    const jobs = toJobs(decoded.jobs, { organizationId: '200000', domain: 'acme', batchId: 'b' })
    const invalid = jobs.filter((j) => j.invalid)
    expect(decoded.invalid.filter((i) => i.parked).length).toBe(invalid.length)
    expect(invalid.map((j) => j.stringId)).toEqual([7])
    expect(invalid[0]!.invalid).toMatch(/revision/)
    expect(jobs.find((j) => j.stringId === 8)!.invalid).toBeUndefined()
  })

  it('makes no jobs from an empty text', () => {
    expect(toJobs('', { organizationId: '1', domain: 'acme', batchId: 'b' })).toEqual([])
  })
})

describe('limitDepth', () => {
  const nest = (depth: number, leaf: unknown = 'leaf'): unknown => (depth === 0 ? leaf : { a: [nest(depth - 1, leaf)] })

  it('tells how deep a value is nested, counting objects and arrays', () => {
    expect(deeperThan('x', 0)).toBe(false)
    expect(deeperThan(null, 0)).toBe(false)
    expect(deeperThan({}, 0)).toBe(true)
    expect(deeperThan({}, 1)).toBe(false)
    expect(deeperThan([[1]], 1)).toBe(true)
    expect(deeperThan([[1]], 2)).toBe(false)
    expect(deeperThan({ a: 1, b: { c: {} } }, 2)).toBe(true)
    expect(deeperThan({ a: 1, b: { c: {} } }, 3)).toBe(false)
  })

  it('returns a shallow value itself, and cuts a deep one at the limit, keeping everything above it', () => {
    const shallow = { event: 'x', payload: { a: [1, 2] } }
    expect(limitDepth(shallow, 3)).toBe(shallow)
    const deep = { event: 'x', keep: [1, 'two', null], payload: nest(4) }
    const cut = limitDepth(deep, 3) as { event: string; keep: unknown[]; payload: unknown }
    expect(cut).not.toBe(deep)
    expect(cut).toEqual({ event: 'x', keep: [1, 'two', null], payload: { a: [CUT_MARKER] } })
    expect(deeperThan(cut, 3)).toBe(false)
    expect(deep.payload).toEqual(nest(4)) // the original is left alone
  })

  it('cuts to 32 levels unless told otherwise', () => {
    expect(deeperThan(limitDepth(nest(40)), 32)).toBe(false)
    expect(JSON.stringify(limitDepth(nest(40)))).toContain(CUT_MARKER)
    expect(limitDepth(nest(15))).toEqual(nest(15)) // 30 levels
    expect(cutToDepth(nest(20))).toEqual(nest(16, CUT_MARKER))
  })

  it('keeps a "__proto__" key as data, never as the prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":{"deep":{}}}}') as Record<string, unknown>
    const cut = cutToDepth(parsed, 2) as Record<string, unknown>
    expect(Object.getPrototypeOf(cut)).toBe(Object.prototype)
    expect(Object.keys(cut)).toEqual(['__proto__'])
    expect(JSON.stringify(cut)).toBe(`{"__proto__":{"polluted":"${CUT_MARKER}"}}`)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
