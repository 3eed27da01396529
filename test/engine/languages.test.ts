// Language records from a code (src/engine/languages.ts), as `switchyard try` and PluginTester
// build them, and the locale a check hands to Intl.
import { describe, expect, it } from 'vitest'
import { languageFromCode, localeOf } from '../../src/engine/languages.js'
import type { Language } from '../../src/engine/types.js'

describe('languageFromCode', () => {
  it('fills in every code form from a code with a region', () => {
    expect(languageFromCode('pt-BR')).toEqual({
      id: 'pt-BR', name: 'pt-BR', editorCode: 'pt-BR', twoLettersCode: 'pt', threeLettersCode: 'pt', locale: 'pt-BR',
      androidCode: 'pt-rBR', osxCode: 'pt_BR', osxLocale: 'pt_BR', textDirection: 'ltr', dialectOf: null,
    })
  })

  it('the base language is the part before - or _, lower-cased; it decides the text direction', () => {
    expect(languageFromCode('fr')).toMatchObject({ twoLettersCode: 'fr', androidCode: 'fr', osxCode: 'fr', textDirection: 'ltr' })
    expect(languageFromCode('sr_Latn')).toMatchObject({ twoLettersCode: 'sr', osxCode: 'sr_Latn' })
    expect(languageFromCode('AR-eg')).toMatchObject({ twoLettersCode: 'ar', textDirection: 'rtl' })
    for (const rtl of ['he', 'fa-IR', 'ur', 'ckb']) expect(languageFromCode(rtl).textDirection, rtl).toBe('rtl')
    expect(languageFromCode('arn').textDirection).toBe('ltr')
  })
})

describe('localeOf', () => {
  const lang = (fields: Partial<Language>) => ({ ...languageFromCode('xx'), ...fields }) as Language
  it('the canonical BCP 47 tag of the locale, else of the id, else the two-letter code, else en', () => {
    expect(localeOf(lang({ locale: 'en_us' }))).toBe('en-US')
    expect(localeOf(lang({ locale: 'zh-hant-tw' }))).toBe('zh-Hant-TW')
    expect(localeOf(lang({ locale: '', id: 'de-at' }))).toBe('de-AT')
    expect(localeOf(lang({ locale: '', id: '', twoLettersCode: 'it' }))).toBe('it')
    expect(localeOf(lang({ locale: '', id: '', twoLettersCode: '' }))).toBe('en')
  })

  it('a tag Intl refuses: the two-letter code, else en', () => {
    expect(localeOf(lang({ locale: 'not a tag!', twoLettersCode: 'nl' }))).toBe('nl')
    expect(localeOf(lang({ locale: 'not a tag!', twoLettersCode: '' }))).toBe('en')
    // The same tag with another fallback is another answer (not the first one remembered).
    expect(localeOf(lang({ locale: 'not a tag!', twoLettersCode: 'sv' }))).toBe('sv')
  })
})
