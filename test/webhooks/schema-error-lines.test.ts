// The one line a sender (or the operator reading the log) gets for a body or event that does not
// fit the schema: where in the body, and what is wrong.
import type { ErrorObject } from 'ajv'
import { describe, expect, it } from 'vitest'
import { describeSchemaError, validateBatch, validateRecalculationEvent } from '../../src/webhooks/batch-schema.js'
import { recalculationEvent } from '../support/events.js'

const error = (o: Partial<ErrorObject>): ErrorObject => ({ keyword: 'type', instancePath: '', schemaPath: '#', params: {}, ...o }) as ErrorObject

describe('describeSchemaError', () => {
  it('names a missing field where it is missing', () => {
    expect(describeSchemaError([error({ keyword: 'required', instancePath: '/stringStatus', params: { missingProperty: 'translation' } })], '/events/3')).toBe('/events/3/stringStatus: missing field "translation"')
  })

  it('names the value a constant must have', () => {
    expect(describeSchemaError([error({ keyword: 'const', instancePath: '/event', params: { allowedValue: 'x.y' } })])).toBe('/event: must be "x.y"')
  })

  it("uses the validator's words otherwise, or 'invalid'", () => {
    expect(describeSchemaError([error({ keyword: 'type', instancePath: '/events', message: 'must be array' })])).toBe('/events: must be array')
    expect(describeSchemaError([error({ keyword: 'type', instancePath: '/events' })])).toBe('/events: invalid')
  })

  it('says "(body)" for the body itself, and "invalid body" with no error at all', () => {
    expect(describeSchemaError([error({ keyword: 'type', message: 'must be object' })])).toBe('(body): must be object')
    expect(describeSchemaError(null)).toBe('invalid body')
    expect(describeSchemaError(undefined)).toBe('invalid body')
    expect(describeSchemaError([])).toBe('invalid body')
  })

  it('describes what the validators find in real bodies and events', () => {
    expect(validateBatch([])).toBe(false)
    expect(describeSchemaError(validateBatch.errors)).toBe('(body): must be object')
    expect(validateBatch({ events: 'x' })).toBe(false)
    expect(describeSchemaError(validateBatch.errors)).toBe('/events: must be array')
    const event = recalculationEvent({ stringId: 1 }) as { stringStatus: { translation: Record<string, unknown> } }
    event.stringStatus.translation.revision = 'two'
    expect(validateRecalculationEvent(event)).toBe(false)
    expect(describeSchemaError(validateRecalculationEvent.errors, '/events/0')).toBe('/events/0/stringStatus/translation/revision: must be integer,null')
  })
})
