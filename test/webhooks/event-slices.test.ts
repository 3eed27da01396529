// A large body is cut into batches of a few events (event-slices.ts) and each is parsed alone. For
// any body, in any chunks, that must come to what a parse of the whole body gives: the same events
// in the same order when it parses, a failure when it does not (a slice that fails to parse, or a
// shape the cutter refuses and the caller parses whole).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { EventSlicer, NotSliceable, type Slice } from '../../src/webhooks/event-slices.js'

const whole = (bytes: Buffer): { events: unknown } | 'fails' => {
  try {
    return { events: (JSON.parse(bytes.toString('utf8')) as { events?: unknown }).events }
  } catch {
    return 'fails'
  }
}

/** The slices of `bytes` fed in chunks of the given sizes (cycled). */
function slice(bytes: Buffer, chunks: number[], sliceBytes: number): Slice[] {
  const slicer = new EventSlicer(sliceBytes)
  const out: Slice[] = []
  let at = 0
  for (let k = 0; at < bytes.length; k++) {
    const n = Math.max(1, chunks[k % chunks.length]!)
    out.push(...slicer.push(bytes.subarray(at, at + n)))
    at += n
  }
  out.push(...slicer.end())
  return out
}

/** What the slices parse to: the events, joined; or 'fails'; or 'whole' (not sliceable: parsed whole). */
function viaSlices(bytes: Buffer, chunks: number[], sliceBytes: number): { events: unknown } | 'fails' | 'whole' {
  let slices: Slice[]
  try {
    slices = slice(bytes, chunks, sliceBytes)
  } catch (error) {
    if (error instanceof NotSliceable) return 'whole'
    throw error
  }
  const events: unknown[] = []
  let next = 0
  for (const s of slices) {
    expect(s.first).toBe(next)
    let parsed: { events: unknown[] }
    try {
      parsed = JSON.parse(s.body.toString('utf8')) as { events: unknown[] }
    } catch {
      return 'fails'
    }
    expect(parsed.events).toHaveLength(s.events)
    events.push(...parsed.events)
    next += s.events
  }
  return { events }
}

const tricky = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('},{"', 'a},{"b', '{a},{b}', '"', '\\', '\\"', ']}', '[', '{', ',', '😀 ok', 'é'),
)
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tricky, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(tricky, tie('v'), { maxKeys: 3 })),
})).v
const event = fc.oneof(fc.record({ event: fc.string(), text: tricky, nested: fc.array(fc.dictionary(tricky, value, { maxKeys: 2 }), { maxLength: 3 }) }), fc.dictionary(tricky, value, { maxKeys: 4 }), value)
const events = fc.array(event, { maxLength: 12 })
/** A batch as JSON text: its events, other members around them, and (`indent`) any spacing. */
const members = fc.array(fc.tuple(tricky.filter((k) => k !== 'events'), value), { maxLength: 3 })
const body = fc.oneof(
  events.map((e) => Buffer.from(JSON.stringify({ events: e }))),
  fc.tuple(events, fc.constantFrom(1, 2, '\t', ' \r\n')).map(([e, indent]) => Buffer.from(JSON.stringify({ events: e }, null, indent))),
  fc.tuple(events, members, fc.nat(), fc.constantFrom('', ' ', '\n  ')).map(([e, others, at, space]) => {
    const list = others.map(([k, v]) => `${JSON.stringify(k)}${space}:${space}${JSON.stringify(v ?? null)}`)
    list.splice(at % (list.length + 1), 0, `"events":${space}${JSON.stringify(e)}`)
    return Buffer.from(`{${space}${list.join(`,${space}`)}${space}}`)
  }),
)
const damaged = fc.tuple(body, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.constantFrom('cut', 'insert', 'replace', 'comma', 'drop')).map(([b, n, bytes, how]) => {
  const at = b.length ? n % b.length : 0
  if (how === 'cut') return b.subarray(0, at)
  if (how === 'insert') return Buffer.concat([b.subarray(0, at), bytes, b.subarray(at)])
  // A comma doubled, or one before a closing bracket: an empty element, which JSON refuses.
  if (how === 'comma') {
    const comma = b.indexOf(',', at)
    const close = b.indexOf(']', at)
    const where = comma !== -1 ? comma : close
    return where === -1 ? b : Buffer.concat([b.subarray(0, where), Buffer.from(','), b.subarray(where)])
  }
  if (how === 'drop') return Buffer.concat([b.subarray(0, at), b.subarray(at + 1)])
  return Buffer.concat([b.subarray(0, at), bytes, b.subarray(at + bytes.length)])
})
const chunks = fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 5 })

describe('EventSlicer', () => {
  it('gives the events a whole parse gives, in any chunks and slice sizes, or fails where it fails', () => {
    fc.assert(
      fc.property(fc.oneof(body, damaged), chunks, fc.integer({ min: 1, max: 400 }), (bytes, sizes, sliceBytes) => {
        const expected = whole(bytes)
        const got = viaSlices(bytes, sizes, sliceBytes)
        if (got === 'whole') return // parsed whole by the caller: its answer is the whole parse's
        if (expected === 'fails') expect(got).toBe('fails')
        else expect(got).toEqual(expected)
      }),
      { numRuns: 4000 },
    )
  })

  it('slices every batch, whatever its spacing and other members, and only what it can vouch for', () => {
    fc.assert(
      fc.property(body, chunks, (bytes, sizes) => {
        expect(viaSlices(bytes, sizes, 100)).toEqual(whole(bytes))
      }),
      { numRuns: 1000 },
    )
    const sliceable = ['{"events":[],"more":1}', '{"more":{"a":[1,{"b":"]}"}]},"events":[{"x":1}]}', '{ "events" : [ 1 , 2 ] , "n" : null }', '{"\\u0065vents":[3]}', '{"a\\"},{\\"":1,"events":[4]}']
    for (const text of sliceable) expect(viaSlices(Buffer.from(text), [3], 10), text).toEqual(whole(Buffer.from(text)))
    const others = ['{"events":{}}', '[]', '{"events":[1]} x', '{"events":[1]', '{"event":[]}', '{"a\nb":1,"events":[]}', '{"a\\x":1,"events":[]}', '{}', '{"events":[],"events":[1]}', '{"events":[1,,2]}', '{"events":[1,]}', '{"events":[,1]}', '{"a":,"events":[]}', '{"a":nul,"events":[]}', '{"events":[]"a":1}']
    for (const other of others) {
      expect(() => slice(Buffer.from(other), [3], 10), other).toThrow(NotSliceable)
    }
  })

  it('refuses an empty element next to an event as large as a slice (alone in its slice, it would be a valid empty batch)', () => {
    const big = JSON.stringify({ event: 'x', text: 'y'.repeat(200) })
    for (const text of [`{"events":[${big},]}`, `{"events":[${big},,${big}]}`, `{"events":[,${big}]}`]) {
      expect(() => slice(Buffer.from(text), [64], 100), text).toThrow(NotSliceable)
      expect(whole(Buffer.from(text))).toBe('fails')
    }
  })

  it('cuts near the slice size: events are never split, a large one is a slice alone', () => {
    const e = (n: number) => ({ event: 'x', text: 'y'.repeat(n) })
    const list = [e(10), e(10), e(10), e(500), e(10), e(10)]
    const slices = slice(Buffer.from(JSON.stringify({ events: list })), [7], 80)
    expect(slices.map((s) => [s.first, s.events])).toEqual([[0, 2], [2, 1], [3, 1], [4, 2]])
    for (const s of slices) expect(JSON.parse(s.body.toString()).events).toEqual(list.slice(s.first, s.first + s.events))
    expect(slice(Buffer.from('{"events":[]}'), [1], 80)).toEqual([])
  })
})
