// The event-by-event parse of a webhook body (decode-batch.ts, issue 9) must be JSON.parse of the
// whole body in every case: the same value, or the same error. The fast path must also really be
// taken for a batch as the service sends it, or the bench's gain would be an accident.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseBatchJson, parseEventwise } from '../../src/webhooks/decode-batch.js'
import { recalculationEvent } from '../support/events.js'

const whole = (bytes: Buffer): { value: unknown } | { error: string } => {
  try {
    return { value: JSON.parse(bytes.toString('utf8')) }
  } catch (error) {
    return { error: (error as Error).message }
  }
}
const ours = (bytes: Buffer): { value: unknown } | { error: string } => {
  try {
    return { value: parseBatchJson(bytes) }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

// Strings that land on the cut (`},{"`), non-ASCII text, astral characters, escapes.
const tricky = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('},{"', 'a},{"b', '{a},{b}', 'Save {n} files…', '😀 ok', '\\', '"', '\u2028', 'é', '\u00e9\\u00e9', ']}'),
)
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tricky,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(tricky, tie('v'), { maxKeys: 3 }),
  ),
})).v
const event = fc.oneof(
  fc.record({ event: fc.string(), text: tricky, nested: fc.array(fc.dictionary(tricky, value, { maxKeys: 2 }), { maxLength: 3 }) }),
  fc.dictionary(tricky, value, { maxKeys: 4 }),
  value,
)
const canonical = fc.array(event, { maxLength: 6 }).map((events) => Buffer.from(JSON.stringify({ events })))

/** Damage a body: cut it, splice in bytes (invalid UTF-8 among them), or change its spacing. */
const damaged = fc.tuple(canonical, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.constantFrom('cut', 'insert', 'replace', 'space')).map(([body, n, bytes, how]) => {
  const at = body.length ? n % body.length : 0
  if (how === 'cut') return body.subarray(0, at)
  if (how === 'insert') return Buffer.concat([body.subarray(0, at), bytes, body.subarray(at)])
  if (how === 'replace') return Buffer.concat([body.subarray(0, at), bytes, body.subarray(at + bytes.length)])
  return Buffer.from(body.toString('utf8').replace('},{', '}, {'))
})

describe('parseBatchJson', () => {
  it('gives what JSON.parse of the whole body gives, value or error, for any body', () => {
    fc.assert(
      fc.property(fc.oneof(canonical, damaged, fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a))), (bytes) => {
        expect(ours(bytes)).toEqual(whole(bytes))
      }),
      { numRuns: 3000 },
    )
  })

  it('parses a batch as the service sends it event by event, non-ASCII text included', () => {
    const events = Array.from({ length: 50 }, (_, i) => recalculationEvent({ stringId: i + 1, text: i % 7 ? `Save ${i} files` : `Connection lost. Retrying… ${i} 😀` }))
    const bytes = Buffer.from(JSON.stringify({ events }))
    expect(parseEventwise(bytes)).toEqual({ events })
    expect(parseEventwise(Buffer.from('{"events":[]}'))).toEqual({ events: [] })
  })

  it('falls back to a whole parse where a cut lands inside an event or the spacing differs', () => {
    const nested = Buffer.from(JSON.stringify({ events: [{ event: 'x', list: [{ a: 1 }, { b: 2 }] }, { event: 'y' }] }))
    const spaced = Buffer.from(JSON.stringify({ events: [{ event: 'x' }, { event: 'y' }] }, null, 1))
    const inText = Buffer.from(JSON.stringify({ events: [{ event: 'x', text: 'a},{' }, { event: 'y' }] }))
    for (const bytes of [nested, spaced, inText]) {
      expect(parseEventwise(bytes)).toBeUndefined()
      expect(parseBatchJson(bytes)).toEqual(JSON.parse(bytes.toString('utf8')))
    }
  })

  it('decodes invalid UTF-8 in an event as a whole decode does (U+FFFD)', () => {
    const bytes = Buffer.concat([Buffer.from('{"events":[{"t":"a'), Buffer.from([0xe2, 0x80]), Buffer.from('"},{"t":"'), Buffer.from([0xff, 0xc3]), Buffer.from('x"}]}')])
    expect(parseEventwise(bytes)).toEqual({ events: [{ t: 'a\ufffd' }, { t: '\ufffd\ufffdx' }] })
    expect(parseBatchJson(bytes)).toEqual(JSON.parse(bytes.toString('utf8')))
  })
})
