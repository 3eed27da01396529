import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { maskOpaque } from './index.js'

// The one regex maskOpaque stands for (quadratic on long words without `=`).
const REFERENCE = /<[^<>]+>|&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);|\b(?:https?|ftp|mailto):[^\s<>"]+|\$\{[^{}]*\}|\{[^{}]*\}|%\([^()]+\)[a-z]|\S+=\S*/gi
const PIECES = ['a', 'B', '=', ' ', '\n', '<', '>', '&', ';', '#', 'x', '1', '{', '}', '$', '%', '(', ')', 'http:', '_', '"', 'amp']

describe('maskOpaque', () => {
  it('masks what the single regex masks', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }), (pieces) => {
        const text = pieces.join('')
        expect(maskOpaque(text)).toBe(text.replace(REFERENCE, (m) => '\u0000'.repeat(m.length)))
      }),
      { numRuns: 5000, seed: 11 },
    )
  })
})
