// The batch body (section 2.5) and the recalculation event (2.6) as JSON Schema, compiled once.
// Strict on what routing and reporting depend on (ids, languages, step, module key, the source
// text); open to fields we don't use, so a service that adds fields doesn't break delivery.
import { Ajv, type ErrorObject } from 'ajv'
import { RECALCULATION_EVENT } from './event-types.js'

const id = { type: 'integer', minimum: 0 }
const nonEmpty = { type: 'string', minLength: 1 }
const language = {
  type: 'object',
  required: ['id'],
  properties: { id: nonEmpty, locale: { type: 'string' }, textDirection: { type: 'string' } },
}

export const recalculationEventSchema = {
  type: 'object',
  required: ['event', 'stringStatus'],
  properties: {
    event: { const: RECALCULATION_EVENT },
    stringStatus: {
      type: 'object',
      required: ['status', 'translation', 'sourceLanguage', 'affectedLanguage', 'workflowStep'],
      properties: {
        status: { type: 'string' },
        output: { type: 'string' },
        originEvent: { type: 'string' },
        organizationId: { type: ['string', 'integer'] },
        translation: {
          type: 'object',
          required: ['id', 'text', 'project'],
          properties: {
            id,
            identifier: { type: 'string' },
            key: { type: 'string' },
            text: { type: 'string' },
            type: { type: 'string' },
            context: { type: ['string', 'null'] },
            maxLength: { type: ['string', 'integer', 'null'] },
            revision: { type: ['integer', 'null'] },
            hasPlurals: { type: 'boolean' },
            labelIds: { type: 'array', items: { type: 'integer' } },
            file: { type: ['object', 'null'], properties: { type: { type: 'string' }, path: { type: 'string' } } },
            project: { type: 'object', required: ['id'], properties: { id } },
          },
        },
        sourceLanguage: language,
        affectedLanguage: language,
        workflowStep: {
          type: 'object',
          required: ['id', 'applicationModule'],
          properties: {
            id,
            applicationModule: {
              type: 'object',
              required: ['moduleKey'],
              properties: { moduleKey: nonEmpty, applicationIdentifier: { type: 'string' } },
            },
          },
        },
      },
    },
  },
} as const

export const batchSchema = {
  type: 'object',
  required: ['events'],
  properties: {
    // Each event is checked on its own (decode-batch.ts): one unusable event costs no other.
    events: { type: 'array' },
  },
} as const

const ajv = new Ajv({ allErrors: false, strict: false })
export const validateBatch = ajv.compile(batchSchema)
export const validateRecalculationEvent = ajv.compile(recalculationEventSchema)

/** One line a client can act on: where in the body, and what is wrong. */
export function describeSchemaError(errors: ErrorObject[] | null | undefined, prefix = ''): string {
  const e = errors?.[0]
  if (!e) return 'invalid body'
  const where = `${prefix}${e.instancePath}` || '(body)'
  if (e.keyword === 'required') return `${where}: missing field "${(e.params as { missingProperty: string }).missingProperty}"`
  if (e.keyword === 'const') return `${where}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`
  return `${where}: ${e.message ?? 'invalid'}`
}
