// What the service sends (interface document, sections 2.5 and 2.6): the batch body and the
// recalculation event as JSON Schema, and their TypeScript types derived from those schemas
// (json-schema-to-ts), so the type says what validation let through and no more: `revision` may
// be null because the schema allows it. The schemas are strict on what routing and reporting
// depend on (ids, languages, step, module key, the source text) and open to fields we don't use,
// so a service that adds fields doesn't break delivery. Fields read only where present (a key, a
// file path, the status...) also take null: a null there must not park the string, the
// service showing some fields as null where the interface document says string (it notes
// "null seen" for several). They are compiled in src/webhooks/batch-schema.ts.
import type { FromSchema } from 'json-schema-to-ts'

export const RECALCULATION_EVENT = 'string.status_on_step.recalculation_triggered'

// Ids (and revisions) must be integers JSON numbers hold exactly: 1e400 parses to Infinity (which
// Ajv counts as an integer) and 9007199254740993 to another string's id.
const MAX_ID = Number.MAX_SAFE_INTEGER
const id = { type: 'integer', minimum: 0, maximum: MAX_ID } as const
const nonEmpty = { type: 'string', minLength: 1 } as const
/** A field read only where present: a string, or null (absent). */
const optionalText = { type: ['string', 'null'] } as const
const language = {
  type: 'object',
  required: ['id'],
  // Typed as plugins read them (a string where present).
  properties: { id: nonEmpty, locale: { type: 'string' }, textDirection: { type: 'string' } },
} as const

export const recalculationEventSchema = {
  type: 'object',
  required: ['event', 'stringStatus'],
  properties: {
    event: { const: RECALCULATION_EVENT },
    stringStatus: {
      type: 'object',
      required: ['translation', 'sourceLanguage', 'affectedLanguage', 'workflowStep'],
      properties: {
        status: optionalText,
        output: optionalText,
        originEvent: optionalText,
        organizationId: { type: ['string', 'integer', 'null'] },
        translation: {
          type: 'object',
          required: ['id', 'text', 'project'],
          properties: {
            id,
            identifier: optionalText,
            key: optionalText,
            text: { type: 'string' },
            type: optionalText,
            context: { type: ['string', 'null'] },
            maxLength: { type: ['string', 'integer', 'null'] },
            revision: { type: ['integer', 'null'], minimum: 0, maximum: MAX_ID },
            hasPlurals: { type: ['boolean', 'null'] },
            // Labels a plugin may filter on; ones that are not integers are left out (decode-batch.ts).
            labelIds: { type: ['array', 'null'] },
            file: { type: ['object', 'null'], properties: { type: optionalText, path: optionalText } },
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
              properties: { moduleKey: nonEmpty, applicationIdentifier: optionalText },
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

/** A recalculation event that passed `recalculationEventSchema`. */
export type RecalculationEvent = FromSchema<typeof recalculationEventSchema>
export type StringStatus = RecalculationEvent['stringStatus']
/** The string record of an event (section 2.6 `translation`). */
export type StringRecord = StringStatus['translation']
export type WorkflowStep = StringStatus['workflowStep']

/** Any other event a pipeline may subscribe to: only its name is known. */
export interface OtherEvent {
  event: string
  [field: string]: unknown
}

/** A batch body that passed `batchSchema`: each event is still to be checked on its own. */
export type WebhookBatch = FromSchema<typeof batchSchema>
