// What decodeBatch makes of a signed batch, field by field: the defaults of optional fields, the
// events that can't be used (parked when they name their string, logged otherwise), the other
// events and their counts, which organization a batch is from, and the answers to bodies that are
// not a batch.
import { describe, expect, it } from 'vitest'
import { decodeBatch } from '../../src/webhooks/decode-batch.js'
import type { EncodedJobList as DecodedJobs } from '../../src/queue/job-codec.js'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'

const SECRETS = ['s3cret']
const decode = (body: unknown, organization = '200000', secrets = SECRETS) => {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return decodeBatch(Buffer.from(text), signBody(text, 's3cret'), secrets, organization)
}
const ok = (body: unknown, organization?: string) => {
  const result = decode(body, organization)
  if (!result.ok) throw new Error(`refused: ${result.code} ${result.message}`)
  return result
}
const tuples = (jobs: string) => (JSON.parse(jobs) as DecodedJobs)

type Translation = Record<string, unknown>
const eventWith = (stringId: number, change: (t: Translation) => void) => {
  const e = recalculationEvent({ stringId })
  change(e.stringStatus.translation as Translation)
  return e
}

describe('decodeBatch: the step of a batch', () => {
  it('names the workflow step all its jobs are of, parked ones included, and none when they are of several', () => {
    expect(ok({ events: [recalculationEvent({ stringId: 1 }), recalculationEvent({ stringId: 2, languageId: 'fr' })] }).step).toBe('7|11')
    expect(ok({ events: [recalculationEvent({ stringId: 1 }), recalculationEvent({ stringId: 2, stepId: 12 })] }).step).toBe('')
    expect(ok({ events: [recalculationEvent({ stringId: 1 }), recalculationEvent({ stringId: 2, projectId: 8 })] }).step).toBe('')
    // An event that fails validation but names its string is a job too (parked at the service).
    const invalid = eventWith(3, (t) => delete t.text)
    ;(invalid.stringStatus as { workflowStep: { id: number } }).workflowStep.id = 99
    expect(ok({ events: [recalculationEvent({ stringId: 1 }), invalid] }).step).toBe('')
    expect(ok({ events: [{ event: 'project.translated', projectId: 7 }] }).step).toBe('')
  })
})

describe('decodeBatch fields', () => {
  it('reads every field of a string event into its job', () => {
    const e = eventWith(5, (t) => Object.assign(t, { context: 'ctx', maxLength: 12, labelIds: [1, 2], hasPlurals: true, revision: 4 }))
    const { jobs, count, moduleKeys, organizationId } = ok({ events: [e] })
    expect(count).toBe(1)
    expect(moduleKeys).toEqual(['test-step'])
    expect(organizationId).toBe('200000')
    const decoded = tuples(jobs)
    expect(decoded.jobs[0]).toEqual(['200000', 'test-step', 7, 11, 'de', 5, 4, 'key.5', 'ctx', 12, 'Text 5', 1, 'json', '/ui.json', [1, 2], 0, 1])
    expect(decoded.languages.map((l) => l.id)).toEqual(['en', 'de'])
  })

  it('gives optional fields their defaults', () => {
    const e = eventWith(6, (t) => {
      delete t.key
      t.identifier = 'ident.6'
      t.context = null
      t.maxLength = null
      t.revision = null
      t.file = null
      delete t.labelIds
      delete t.hasPlurals
    })
    const bare = eventWith(7, (t) => {
      delete t.key
      delete t.identifier
      delete t.context
      delete t.maxLength
      delete t.revision
      delete t.file
    })
    const decoded = tuples(ok({ events: [e, bare] }).jobs)
    expect(decoded.jobs[0]!.slice(6, 15)).toEqual([0, 'ident.6', '', 0, 'Text 6', 0, '', '', []])
    expect(decoded.jobs[1]!.slice(6, 15)).toEqual([0, '', '', 0, 'Text 7', 0, '', '', []])
  })

  it('takes null in every field it reads only where present, and a missing status: the string is processed, not parked', () => {
    const e = eventWith(8, (t) => {
      Object.assign(t, { key: null, identifier: 'ident.8', type: null, hasPlurals: null, labelIds: [1, 'x', 2.5, 3], file: { type: null, path: null } })
    })
    const s = e.stringStatus as Record<string, unknown> & { workflowStep: { applicationModule: Record<string, unknown> } }
    Object.assign(s, { output: null, originEvent: null })
    delete s.status
    s.workflowStep.applicationModule.applicationIdentifier = null
    const nullLabels = eventWith(9, (t) => (t.labelIds = null))
    const result = ok({ events: [e, nullLabels] })
    expect(result.invalid).toEqual([])
    const decoded = tuples(result.jobs)
    expect(decoded.jobs[0]!.slice(5, 15)).toEqual([8, 1, 'ident.8', '', 0, 'Text 8', 0, '', '', [1, 3]])
    expect(decoded.jobs[1]![14]).toEqual([])
  })

  it('reads a length limit given as text, and takes anything else as no limit', () => {
    const limits = ['25', '0', '-3', 'ten', 3.5, '', '1e3', '1e309', '-1', ' 12 ', '7.9']
    const decoded = tuples(ok({ events: limits.map((maxLength, i) => eventWith(i + 1, (t) => (t.maxLength = maxLength))) }).jobs)
    // "1e3" is a thousand, not 1; "1e309" is past any length (no limit), not a limit of one character.
    expect(decoded.jobs.map((j) => j[9])).toEqual([25, 0, 0, 0, 0, 0, 1000, 0, 0, 12, 7])
  })

  it('shares one language record between events that send the same one', () => {
    const events = [recalculationEvent({ stringId: 1, languageId: 'de' }), recalculationEvent({ stringId: 2, languageId: 'fr' }), recalculationEvent({ stringId: 3, languageId: 'de' })]
    const decoded = tuples(ok({ events }).jobs)
    expect(decoded.languages.map((l) => l.id)).toEqual(['en', 'de', 'fr'])
    expect(decoded.jobs.map((j) => [j[15], j[16]])).toEqual([[0, 1], [0, 2], [0, 1]])
  })

  it('parks an invalid string event that names its string, step and language, and only logs the others', () => {
    const noText = eventWith(8, (t) => delete t.text)
    const noProject = eventWith(9, (t) => delete t.project)
    const named = { event: '', stringStatus: {} }
    const result = ok({ events: [noText, noProject, named, 42, recalculationEvent({ stringId: 10 })] })
    expect(result.invalid).toEqual([
      { index: 0, reason: '/events/0/stringStatus/translation: missing field "text"', parked: true },
      { index: 1, reason: expect.stringContaining('missing field "project"'), parked: false },
      { index: 2, reason: '/events/2: not an event object with a name', parked: false },
      { index: 3, reason: '/events/3: not an event object with a name', parked: false },
    ])
    expect(result.count).toBe(2)
    const decoded = tuples(result.jobs)
    expect(decoded.jobs[0]).toEqual(['200000', 'test-step', 7, 11, 'de', 8, 1, '', '', 0, '', 0, '', '', [], 0, 0, '/events/0/stringStatus/translation: missing field "text"'])
    // Its language is only an id, as both its source and its target.
    expect(decoded.languages[0]).toEqual({ id: 'de' })
    expect(decoded.languages.map((l) => l.id)).toEqual(['de', 'en', 'de'])
    // Only valid events name the module keys that must have a pipeline.
    expect(result.moduleKeys).toEqual(['test-step'])
  })

  it('parks with revision 0 and no module key when the invalid event lacks them', () => {
    const e = recalculationEvent({ stringId: 11 }) as { stringStatus: Record<string, unknown> & { translation: Translation; workflowStep: Record<string, unknown> } }
    delete e.stringStatus.translation.text
    e.stringStatus.translation.revision = 'two'
    e.stringStatus.workflowStep.applicationModule = {}
    const decoded = tuples(ok({ events: [e] }).jobs)
    expect(decoded.jobs[0]!.slice(0, 7)).toEqual(['200000', '', 7, 11, 'de', 11, 0])
  })

  it('does not park an event whose ids are not ids', () => {
    for (const change of [(s: Record<string, unknown>) => ((s.translation as Translation).id = -1), (s: Record<string, unknown>) => ((s.affectedLanguage as Translation).id = ''), (s: Record<string, unknown>) => ((s.workflowStep as Translation).id = 1.5)]) {
      const e = recalculationEvent({ stringId: 12 }) as { stringStatus: Record<string, unknown> }
      delete (e.stringStatus.translation as Translation).text
      change(e.stringStatus)
      const result = ok({ events: [e] })
      expect(result.invalid[0]!.parked).toBe(false)
      expect(result.jobs).toBe('')
      expect(result.count).toBe(0)
    }
  })

  it('hands other events on as they are, and counts every event by its name, cut to 80 characters', () => {
    const long = `x.${'y'.repeat(100)}`
    const other = { event: 'project.translated', projectId: 7 }
    const result = ok({ events: [other, { event: long }, recalculationEvent({ stringId: 1 }), recalculationEvent({ stringId: 2 })] })
    expect(result.others).toEqual([other, { event: long }])
    expect(result.eventCounts).toEqual(new Map([['project.translated', 1], [long.slice(0, 80), 1], ['string.status_on_step.recalculation_triggered', 2]]))
  })

  it('makes no job text for a batch without string events', () => {
    const result = ok({ events: [{ event: 'file.added' }] })
    expect(result.jobs).toBe('')
    expect(result.count).toBe(0)
    expect(ok({ events: [] }).jobs).toBe('')
  })
})

describe('decodeBatch: who sent it', () => {
  it("takes a numeric organization id of the events as the batch's", () => {
    const e = recalculationEvent({ stringId: 1 }) as { stringStatus: { organizationId: unknown } }
    e.stringStatus.organizationId = 300
    expect(ok({ events: [e] }, '').organizationId).toBe('300')
    expect(decode({ events: [e] }, '301')).toMatchObject({ ok: false, status: 401, code: 'organization_mismatch', message: 'the delivery claims organization "301" but event 0 is from "300"' })
  })

  it('refuses events from two organizations in one batch', () => {
    const result = decode({ events: [recalculationEvent({ stringId: 1, organizationId: '1' }), recalculationEvent({ stringId: 2, organizationId: '2' })] }, '')
    expect(result).toMatchObject({ ok: false, code: 'organization_mismatch', message: 'the delivery claims organization "1" but event 1 is from "2"' })
  })

  it('takes a batch whose events name no organization as from the header', () => {
    const e = recalculationEvent({ stringId: 1 }) as { stringStatus: { organizationId?: unknown } }
    delete e.stringStatus.organizationId
    expect(ok({ events: [e] }, '555').organizationId).toBe('555')
    expect(ok({ events: [e] }, '').organizationId).toBe('')
    // Nor do events that name it as null or "": taken, not refused whole (401) or parked.
    const blank = recalculationEvent({ stringId: 2 }) as { stringStatus: { organizationId?: unknown } }
    blank.stringStatus.organizationId = ''
    const nulled = recalculationEvent({ stringId: 3 }) as { stringStatus: { organizationId?: unknown } }
    nulled.stringStatus.organizationId = null
    const result = ok({ events: [recalculationEvent({ stringId: 1, organizationId: '555' }), blank, nulled] }, '555')
    expect([result.organizationId, result.count, result.invalid]).toEqual(['555', 3, []])
  })
})

describe('decodeBatch: bodies that are not a batch', () => {
  it('names the organization it has no secret for', () => {
    const text = JSON.stringify({ events: [] })
    expect(decodeBatch(Buffer.from(text), signBody(text, 'x'), ['1=x'], '2')).toEqual({ ok: false, status: 401, code: 'unknown_organization', message: 'no app secret is configured for organization "2"' })
  })

  it('refuses a bad signature before reading the body', () => {
    expect(decodeBatch(Buffer.from('not json'), signBody('other', 's3cret'), SECRETS, '')).toEqual({ ok: false, status: 401, code: 'bad_signature', message: 'signature does not match the body' })
  })

  it('says why JSON does not parse, and what a batch lacks', () => {
    expect(decode('{"events": [')).toMatchObject({ ok: false, status: 400, code: 'malformed_json', message: expect.stringMatching(/^body is not valid JSON: /) })
    expect(decode({ items: [] })).toMatchObject({ ok: false, status: 400, code: 'invalid_batch', message: expect.stringContaining('events') })
    expect(decode({ events: {} })).toMatchObject({ ok: false, status: 400, code: 'invalid_batch' })
  })

  it('decodes a Uint8Array view as it decodes a Buffer', () => {
    const text = JSON.stringify({ events: [recalculationEvent({ stringId: 1 })] })
    const backing = new Uint8Array(text.length + 8)
    backing.set(Buffer.from(text), 4)
    const view = new Uint8Array(backing.buffer, 4, text.length)
    const result = decodeBatch(view, signBody(text, 's3cret'), SECRETS, '200000')
    expect(result).toMatchObject({ ok: true, count: 1 })
  })
})
