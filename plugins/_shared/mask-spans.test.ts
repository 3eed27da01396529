import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MASK_CHAR, maskSpans } from './mask-spans.js'

// The plain definition: every code unit inside any range becomes the filler.
const reference = (text: string, ranges: Array<{ start: number; end: number }>) =>
  [...text.split('').keys()].map((i) => (ranges.some((r) => i >= r.start && i < r.end) ? MASK_CHAR : text[i])).join('')

describe('maskSpans', () => {
  it('masks exactly the code units inside any range, overlapping or out of bounds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.array(fc.record({ start: fc.integer({ min: -3, max: 40 }), end: fc.integer({ min: -3, max: 40 }) }), { maxLength: 5 }), (text, ranges) => {
        const masked = maskSpans(text, ranges)
        expect(masked).toBe(reference(text, ranges))
        expect(masked.length).toBe(text.length)
      }),
      { numRuns: 3000, seed: 7 },
    )
  })
})
