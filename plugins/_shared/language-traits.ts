// What checks need to know about a language or a piece of text's script: whether it separates
// words with spaces, whether it is much denser than Latin text, whether it is right-to-left.
// Decided from the language code first and from the text's letters when the code says nothing.
import type { Language } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'

/** Scripts written without spaces between words. */
export const SPACELESS_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u
/** Scripts whose text is much shorter than the same message in Latin letters. */
export const DENSE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
/** Right-to-left letters. */
export const RTL_SCRIPT = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Adlam}]/u

const SPACELESS_LANGUAGES = new Set(['zh', 'ja', 'th', 'lo', 'km', 'my', 'bo', 'dz', 'yue', 'wuu', 'lzh'])
const DENSE_LANGUAGES = new Set(['zh', 'ja', 'ko', 'yue', 'wuu', 'lzh'])
const RTL_LANGUAGES = new Set(['ar', 'he', 'iw', 'fa', 'ur', 'ps', 'sd', 'yi', 'dv', 'ug', 'ckb', 'syr', 'arc'])

/** The BCP 47 tag of a language record (for Intl). */
export function localeTag(language: Language): string {
  return localeOf(language)
}

// Several checks ask for every string; a batch's records are shared objects (interned at intake).
const bases = new WeakMap<Language, string>()

/** Lower-case base language: `fr` for `fr-CA`, `zh` for `zh-Hant-TW`. */
export function baseLanguage(language: Language): string {
  let base = bases.get(language)
  if (base === undefined) {
    base = localeTag(language).split('-')[0]!.toLowerCase()
    bases.set(language, base)
  }
  return base
}

/** Region subtag in upper case (`CA` for `fr-CA`), or ''. */
export function regionOf(language: Language): string {
  const parts = localeTag(language).split('-').slice(1)
  return parts.find((p) => /^[A-Za-z]{2}$|^\d{3}$/.test(p))?.toUpperCase() ?? ''
}

const LETTER = /\p{L}/u
// Every script SPACELESS_SCRIPT and DENSE_SCRIPT name (Thai, Lao, Khmer, Myanmar, Tibetan, Han,
// kana, Hangul) lies at U+0E00 or above: a text with no code unit there shares nothing with them.
const FROM_THAI_UP = /[\u0E00-\uFFFF]/

function share(text: string, re: RegExp): number {
  if (!FROM_THAI_UP.test(text)) return 0
  let letters = 0
  let hits = 0
  for (const ch of text) {
    if (!LETTER.test(ch)) continue
    letters++
    if (re.test(ch)) hits++
  }
  return letters ? hits / letters : 0
}

/** True when the language (or, failing that, the text) is written without spaces between words. */
export function isSpaceless(language: Language, text = ''): boolean {
  return SPACELESS_LANGUAGES.has(baseLanguage(language)) || share(text, SPACELESS_SCRIPT) > 0.5
}

/** True when the language (or the text) is a dense East Asian script: Han, kana, Hangul. */
export function isDense(language: Language, text = ''): boolean {
  return DENSE_LANGUAGES.has(baseLanguage(language)) || share(text, DENSE_SCRIPT) > 0.5
}

export function isRtl(language: Language, text = ''): boolean {
  return language.textDirection === 'rtl' || RTL_LANGUAGES.has(baseLanguage(language)) || RTL_SCRIPT.test(text)
}
