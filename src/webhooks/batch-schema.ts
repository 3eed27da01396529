// The batch body (section 2.5) and the recalculation event (2.6), their schemas
// (src/protocol/service-events.ts) compiled once, and the one line a refusal says about them.
import { Ajv, type ErrorObject } from 'ajv'
import { batchSchema, recalculationEventSchema } from '../protocol/service-events.js'

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
