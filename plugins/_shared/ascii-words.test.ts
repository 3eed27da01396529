import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { agreesWithIcu, asciiSegments, isAscii } from './ascii-words.js'
import { eachWord, segmentWords } from './segment-words.js'

// Every word-break class of ASCII, and characters of none (tab, quote, hyphen, a control).
const PIECES = ['a', 'Z', 'q', '0', '9', '_', ':', '.', "'", ',', ';', '"', ' ', '  ', '\t', '\r', '\n', '\r\n', '\v', '\f', '-', '!', '(', '@', '\x01', 'e.g.', '1,000.5', "it's"]
const LOCALES = ['en', 'de', 'fr', 'it', 'nl', 'sv', 'fi', 'tr', 'ja', 'zh', 'th', 'he', 'ar', 'ru', 'und', 'en-US-POSIX']
const icu = (text: string, locale: string) => [...new Intl.Segmenter(locale, { granularity: 'word' }).segment(text)].map((s) => [s.index, s.segment, !!s.isWordLike])

describe('asciiSegments', () => {
  it('gives what Intl.Segmenter gives, for every locale it agrees with on the calibration texts', () => {
    const agreeing = LOCALES.filter((l) => agreesWithIcu(new Intl.Segmenter(l, { granularity: 'word' })))
    // The root rules hold for nearly every locale; a test that checked none would prove nothing.
    expect(agreeing.length).toBeGreaterThanOrEqual(LOCALES.length - 2)
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }), fc.constantFrom(...agreeing), (pieces, locale) => {
        const text = pieces.join('')
        expect(asciiSegments(text).map((s) => [s.index, s.segment, s.isWordLike])).toEqual(icu(text, locale))
      }),
      { numRuns: 5000, seed: 29 },
    )
  })

  it('is refused for a locale whose rules differ for ASCII (en-US-POSIX keeps ":" and "." out of words)', () => {
    const posix = new Intl.Segmenter('en-US-POSIX', { granularity: 'word' })
    // Refused exactly when ICU tailors it (it does today: "a", ":", "b").
    const tailored = icu('a:b', 'en-US-POSIX').length > 1
    expect(agreesWithIcu(posix)).toBe(!tailored)
    expect(segmentWords('a:b e.g.', 'en-US-POSIX').map((s) => s.text)).toEqual([...posix.segment('a:b e.g.')].map((s) => s.segment))
  })

  it('segments 40,000 words of ASCII as the segmenter would, without calling it', () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment')
    const text = 'word '.repeat(40_000)
    const words = [...eachWord(text, 'de')]
    expect(words).toHaveLength(40_000)
    expect(words[39_999]).toEqual({ text: 'word', index: 199_995, end: 199_999, isWordLike: true })
    // The locale's calibration may call it, once; the text itself never.
    expect(segment.mock.calls.filter(([text]) => text.length > 1_000)).toEqual([])
    segment.mockRestore()
  })

  it('tells ASCII from the rest', () => {
    expect(isAscii('plain text, 100%')).toBe(true)
    expect(isAscii('')).toBe(true)
    expect(isAscii('café')).toBe(false)
    expect(isAscii('a\u0080')).toBe(false)
  })
})

describe('segmentWords and eachWord', () => {
  it('give the segmenter\'s words for any text, ASCII or not', () => {
    const pieces = [...PIECES, 'é', 'я', '日本', '\u0301', '\u00a0', '👍']
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }), fc.constantFrom(...LOCALES), (parts, locale) => {
        const text = parts.join('')
        const expected = icu(text, locale)
        expect(segmentWords(text, locale).map((s) => [s.index, s.text, s.isWordLike])).toEqual(expected)
        expect([...eachWord(text, locale)].map((s) => [s.index, s.text, true])).toEqual(expected.filter((s) => s[2]))
      }),
      { numRuns: 3000, seed: 31 },
    )
  })
})
