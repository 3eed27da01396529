import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { segmentChunked } from './segment-chunked.js'

// Characters whose segmentation depends on their neighbours: spaces, CR LF, combining marks,
// ZWJ emoji sequences, regional indicators, Hangul jamo, digits with separators, ideographs.
const PIECES = ['a', 'b', ' ', '  ', '\r', '\n', '\u0301', '\u200d', '👍', '🏽', '👨', '🇫', '🇷', '\u1100', '\u1161', '\u11a8', '1', '.', ',', "'", '-', '_', 'é', 'я', '\u0915', '\u094d', '\u00a0', '\ud83d', '!']

describe('segmentChunked', () => {
  for (const granularity of ['grapheme', 'word'] as const) {
    it(`gives the segments of the whole text (${granularity}, any chunk size)`, () => {
      const segmenter = new Intl.Segmenter('en', { granularity })
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), (pieces, chunk) => {
          const text = pieces.join('')
          const expected = [...segmenter.segment(text)].map((s) => [s.index, s.segment, s.isWordLike])
          const actual = [...segmentChunked(segmenter, text, chunk, 8)].map((s) => [s.index, s.segment, s.isWordLike])
          expect(actual).toEqual(expected)
        }),
        { numRuns: 2000, seed: 17 },
      )
    })
  }
})
