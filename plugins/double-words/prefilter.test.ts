// The cheap pre-filter of double-words must never hide a repeat the segmenter would find.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { repeats } from './index.js'
import { segmentWords } from '../_shared/segment-words.js'

const words = ['the', 'The', 'THE', 'a', 'file', 'Datei', 'на', 'На', 'το', 'Το', 'ΟΔΟΣ', 'οδός', 'שלום', 'مرحبا', 'नमस्ते', 'don\'t', 'l\'eau', 'İstanbul', 'istanbul', 'ß', 'SS', '東京', 'ภาษา', '42', 'x-y', 'テスト', 'files', 'saved', 'x²', 'Ａ', 'cafe\u0301', '１', 'abc', 'bc', 'c', 'Straße', 'STRASSE', 'Ǆ', 'ǆ', 'K', '\u212a']
const gaps = [' ', '  ', '\u00A0', '\u202F', ', ', '. ', ' (', ') ', '', '\n', ' - ', '\ufeff', ' \u202F']
const locales = ['en', 'de', 'ru', 'el', 'he', 'ar', 'hi', 'fr', 'tr', 'ja', 'th']

describe('double-words pre-filter', () => {
  it('never rejects a text in which the segmenter finds a repeat', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(...gaps)), { minLength: 1, maxLength: 8 }), fc.constantFrom(...locales), (parts, locale) => {
        const text = parts.map(([w, g]) => w + g).join('')
        expect(repeats(text, locale, true)).toEqual(repeats(text, locale, false))
      }),
      { numRuns: 10000, seed: 1121 },
    )
  })

  it('lets through words the segmenter joins across a narrow no-break space', () => {
    // UAX #29: U+202F joins letters (ExtendNumLet), so "files\u202Fsaved" is one word, and here repeated.
    for (const text of ['files\u202Fsaved files\u202Fsaved', 'le\u202Fmot le\u202Fmot.', '東京\u202F東京']) {
      expect(repeats(text, 'en', false)).not.toEqual([])
      expect(repeats(text, 'en', true)).toEqual(repeats(text, 'en', false))
    }
  })

  it('finds the repeats of the plain rule: neighbouring words, only whitespace between, equal once lowered', () => {
    // The reference lowers both words of every pair; repeats() lowers each word once and none
    // that repeats as written.
    const reference = (text: string, locale: string) => {
      const out: Array<[number, number]> = []
      let previous: { text: string; index: number } | undefined
      let gap = ''
      for (const s of segmentWords(text, locale)) {
        if (!s.isWordLike) {
          gap += s.text
          continue
        }
        if (previous && /^[\s\u00A0\u202F]+$/u.test(gap) && previous.text.toLocaleLowerCase(locale) === s.text.toLocaleLowerCase(locale)) out.push([previous.index, s.index])
        previous = s
        gap = ''
      }
      return out
    }
    const pairs = (text: string, locale: string) => repeats(text, locale, false).map((r) => [r.first.index, r.second.index])
    expect(pairs('The The the', 'en')).toEqual([[0, 4], [4, 8]])
    expect(pairs('Hello hello hello, hello', 'en')).toEqual([[0, 6], [6, 12]])
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(...gaps)), { minLength: 1, maxLength: 8 }), fc.constantFrom(...locales), (parts, locale) => {
        const text = parts.map(([w, g]) => w + g).join('')
        expect(pairs(text, locale)).toEqual(reference(text, locale))
      }),
      { numRuns: 10000, seed: 1123 },
    )
  })
})
