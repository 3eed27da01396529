// The small shared helpers on their own: URLs and e-mail addresses in running text, what a language
// or a text's script says about spaces, density and direction, digits of every script, and
// escaping for regular expressions. The plugins' tests reach them only through their own cases.
import { describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { escapeRegExp } from './escape-regexp.js'
import { isSpacelessLocale, scriptName, scriptOfChar, scriptsOfLocale } from './language-scripts.js'
import { baseLanguage, isDense, isRtl, isSpaceless, regionOf } from './language-traits.js'
import { segmentWords, wordsOf } from './segment-words.js'
import { digitValue, foldDigits, toAsciiDigits } from './locale-digits.js'
import { findUrls } from './url-patterns.js'

const texts = (text: string) => findUrls(text).map((u) => [u.kind, u.text, u.start, u.end])

describe('findUrls', () => {
  it('leaves sentence punctuation and unbalanced closing brackets out of a URL', () => {
    expect(texts('See https://example.com/a_(b).')).toEqual([['url', 'https://example.com/a_(b)', 4, 29]])
    expect(texts('(see https://example.com/x)')).toEqual([['url', 'https://example.com/x', 5, 26]])
    expect(texts('Open https://example.com/x)).')).toEqual([['url', 'https://example.com/x', 5, 26]])
    expect(texts('Link: https://example.com/[a]!')).toEqual([['url', 'https://example.com/[a]', 6, 29]])
    // Punctuation, then a bracket, then punctuation again: stripped until nothing changes.
    expect(texts('at https://x.com/a.).')).toEqual([['url', 'https://x.com/a', 3, 18]])
    expect(texts('at https://x.com/a]).')).toEqual([['url', 'https://x.com/a', 3, 18]])
  })

  it('skips a bare scheme, and stops a URL at CJK text', () => {
    expect(texts('Type https:// then the host')).toEqual([])
    expect(texts('Type https://. then the host')).toEqual([])
    expect(texts('请访问https://example.com/帮助')).toEqual([['url', 'https://example.com/', 3, 23]])
  })

  it('ends a URL at an invisible format character: bidi mark or isolate, zero-width character, word joiner, soft hyphen', () => {
    for (const ch of ['\u2069', '\u200f', '\u200e', '\u061c', '\u202c', '\u200b', '\u200d', '\u2060', '\u2064', '\u00ad', '\ufeff']) {
      expect(texts(`\u2066https://example.com/path${ch}.`)).toEqual([['url', 'https://example.com/path', 1, 25]])
    }
  })

  it('finds e-mail addresses outside URLs, everything in text order', () => {
    expect(texts('Visit https://example.com/help or write to support@example.com')).toEqual([
      ['url', 'https://example.com/help', 6, 30],
      ['email', 'support@example.com', 43, 62],
    ])
    expect(texts('Write to support@example.com or visit https://example.com/help')).toEqual([
      ['email', 'support@example.com', 9, 28],
      ['url', 'https://example.com/help', 38, 62],
    ])
    expect(texts('https://user@example.com/path')).toEqual([['url', 'https://user@example.com/path', 0, 29]])
    expect(texts('No link here.')).toEqual([])
  })
})

describe('language traits', () => {
  it('reads the base language and the region of a tag', () => {
    expect(baseLanguage(languageFromCode('zh-Hant-TW'))).toBe('zh')
    expect(regionOf(languageFromCode('zh-Hant-TW'))).toBe('TW')
    expect(regionOf(languageFromCode('es-419'))).toBe('419')
    expect(regionOf(languageFromCode('fr-CA'))).toBe('CA')
    expect(regionOf(languageFromCode('sr-Latn'))).toBe('')
    expect(regionOf(languageFromCode('de'))).toBe('')
  })

  it('tells spaceless text by the share of its letters, digits and spaces aside', () => {
    const en = languageFromCode('en')
    expect(isSpaceless(languageFromCode('ja'), 'abc')).toBe(true)
    expect(isSpaceless(en, 'ไทย 123 !!!')).toBe(true)
    expect(isSpaceless(en, 'ไทย abc')).toBe(false) // half: not more than half
    expect(isSpaceless(en, 'ไทยไทย abc')).toBe(true)
    expect(isSpaceless(en, 'Save the file')).toBe(false)
    expect(isSpaceless(en)).toBe(false)
  })

  it('tells dense text by language or letters', () => {
    const en = languageFromCode('en')
    expect(isDense(languageFromCode('ko'), 'abc')).toBe(true)
    expect(isDense(en, '한국어 텍스트')).toBe(true)
    expect(isDense(en, 'ไทย')).toBe(false) // spaceless, not dense
    expect(isDense(en, '한국 abcd')).toBe(false)
    expect(isDense(en)).toBe(false)
  })

  it('tells right-to-left by direction, language or letters', () => {
    const en = languageFromCode('en')
    expect(isRtl({ ...languageFromCode('xx'), textDirection: 'rtl' })).toBe(true)
    expect(isRtl({ ...languageFromCode('fa'), textDirection: 'ltr' })).toBe(true)
    expect(isRtl(en, 'Open שלום')).toBe(true)
    expect(isRtl(en, 'Open')).toBe(false)
    expect(isRtl(en)).toBe(false)
  })
})

describe('digits of every script', () => {
  it('folds digits to ASCII and reads one digit', () => {
    expect(toAsciiDigits('١٢٣ ๔๕ ０９ ۷ १०')).toBe('123 45 09 7 10')
    expect(['7', '0', '9', '٣', '０', '/', ':', 'a'].map(digitValue)).toEqual(['7', '0', '9', '3', '0', undefined, undefined, undefined])
  })

  it('folds digits beyond the BMP, one character each, saying where each came from', () => {
    expect(toAsciiDigits('𞥒𞥕 𑄷𑄸 𝟏𝟐 𝟗𝟘')).toBe('25 12 12 90') // Adlam, Chakma, mathematical bold and double-struck
    expect(['𞥕', '𝟿', '𐒩', '𞤐', '𞥒𞥕'].map(digitValue)).toEqual(['5', '9', '9', undefined, undefined])
    const { text, origin } = foldDigits('a 𞥒𞥕 b')
    expect(text).toBe('a 25 b')
    expect([...origin!]).toEqual([0, 1, 2, 4, 6, 7, 8])
    expect(foldDigits('plain 42').origin).toBeUndefined()
  })
  it('folds every decimal digit of Unicode to its value', () => {
    let run = 0
    for (let cp = 0; cp < 0x110000; cp++) {
      const ch = String.fromCodePoint(cp)
      if (!/\p{Nd}/u.test(ch)) { run = 0; continue }
      expect(toAsciiDigits(ch)).toBe(String(run++ % 10))
    }
  })
})

describe('escapeRegExp', () => {
  it('makes every special character literal, valid with the u flag', () => {
    const text = 'a.b*c+d?e^f$g{h}i(j)k|l[m]n\\o'
    expect(new RegExp(`^${escapeRegExp(text)}$`, 'u').test(text)).toBe(true)
    expect(new RegExp(escapeRegExp('1+1'), 'u').test('11')).toBe(false)
  })
})

describe('scripts of a locale', () => {
  it('gives the likely script, the other scripts of languages written in several, none for an unknown one', () => {
    expect(scriptsOfLocale('ru')).toEqual(['Cyrl'])
    expect(scriptsOfLocale('ja')).toEqual(['Hani', 'Hira', 'Kana'])
    expect(scriptsOfLocale('sr')).toEqual(['Cyrl', 'Latn'])
    expect(scriptsOfLocale('sr-Latn')).toEqual(['Latn'])
    expect(scriptsOfLocale('zh-Hant')).toEqual(['Hani', 'Bopo'])
    expect(scriptsOfLocale('xx')).toEqual([])
    expect(scriptsOfLocale('not a locale!!')).toEqual([])
  })

  it('calls a locale spaceless only when all its scripts are', () => {
    expect(['ja', 'th', 'zh-Hant', 'ko', 'en', 'xx'].map(isSpacelessLocale)).toEqual([true, true, true, false, false, false])
  })

  it('names scripts and finds the script of a character', () => {
    expect([scriptName('Cyrl'), scriptName('Zzzz')]).toEqual(['Cyrillic', 'Zzzz'])
    expect(['a', 'я', 'あ', '1', '.'].map(scriptOfChar)).toEqual(['Latn', 'Cyrl', 'Hira', undefined, undefined])
  })
})

describe('word segments', () => {
  it('gives every segment with offsets, and the words alone, for any locale string', () => {
    expect(segmentWords('Hi, Bob!', 'en')).toEqual([
      { text: 'Hi', index: 0, end: 2, isWordLike: true },
      { text: ',', index: 2, end: 3, isWordLike: false },
      { text: ' ', index: 3, end: 4, isWordLike: false },
      { text: 'Bob', index: 4, end: 7, isWordLike: true },
      { text: '!', index: 7, end: 8, isWordLike: false },
    ])
    expect(wordsOf('Hi, Bob!', 'bad locale!!').map((w) => w.text)).toEqual(['Hi', 'Bob'])
  })
})
