// The end of a text is read from the end (bench: the anchored regular expressions it replaced
// tried every position). It must read exactly as they did: checked here against them.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { endClasses, MARKS } from './index.js'
import { edgeWhitespace } from '../whitespace/index.js'

// Direction marks, isolates and zero-width characters after the final mark are looked through
// too (they were not: "נשמר.\u200f" read as ending with no punctuation).
const CLOSERS = /[\s"'»”’›」』】）)\]］〕〉》\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\u061c]+$|<\/?[A-Za-z][^<>]*>$/u
// The marks themselves are shared: what changed is how the end is found.
function oracle(text: string, language: string): string[] {
  let t = text
  for (let prev = ''; prev !== t; ) {
    prev = t
    t = t.replace(CLOSERS, '')
  }
  if (language === 'el' && /;$/.test(t)) return ['question', 'semicolon']
  if (language === 'hy' && /[:։]$/.test(t)) return ['period', 'colon']
  for (const [re, classes] of MARKS) if (re.test(t)) return classes
  return ['none']
}

const piece = fc.constantFrom('Save', '.', '...', '…', '。。。', '?', '!', '?!', '！？', ':', ';', ',', '、', '։', '\u037e', ' ', '\u00a0', '\n', '"', '»', '」', ')', '）', '<b>', '</b>', '<a href="x">', '<br/>', '<', '>', '< b>', '😀', '\ufeff', 'a', '\u200f', '\u200e', '\u2067', '\u2069', '\u200b', '\u2060', '\u061c', '\u202c')
const text = fc.array(piece, { maxLength: 8 }).map((p) => p.join(''))

describe('reading the end of a text', () => {
  it('gives the classes the anchored expressions gave', () => {
    fc.assert(fc.property(text, fc.constantFrom('en', 'el', 'hy', 'fr'), (t, lang) => {
      expect(endClasses(t, lang)).toEqual(oracle(t, lang))
    }), { numRuns: 5000 })
  })

  it('finds the leading and trailing whitespace the anchored expressions found', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(edgeWhitespace(t, 'Leading')).toBe(/^[^\S\ufeff]*/.exec(t)![0])
        expect(edgeWhitespace(t, 'Trailing')).toBe(/[^\S\ufeff]*$/.exec(t)![0])
      }),
      { numRuns: 5000 },
    )
  })
})
