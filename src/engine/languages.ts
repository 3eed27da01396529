// Language records for local use (tests, `switchyard try`): the service sends full records; a
// dry run or a plugin test names a language by code, and this fills in the rest.
import type { Language } from './types.js'

const RTL = new Set(['ar', 'he', 'iw', 'fa', 'ur', 'ps', 'sd', 'yi', 'dv', 'ug', 'ckb'])

/** A language record from a code such as `fr`, `pt-BR`, `zh-CN` or `sr-Latn`. */
export function languageFromCode(code: string): Language {
  const base = code.split(/[-_]/)[0]!.toLowerCase()
  return {
    id: code,
    name: code,
    editorCode: code,
    twoLettersCode: base,
    threeLettersCode: base,
    locale: code,
    androidCode: code.replace('-', '-r'),
    osxCode: code.replace('-', '_'),
    osxLocale: code.replace('-', '_'),
    textDirection: RTL.has(base) ? 'rtl' : 'ltr',
    dialectOf: null,
  }
}

/** The BCP 47 tag of a language record, for Intl APIs. */
export function localeOf(language: Language): string {
  const tag = language.locale || language.id || language.twoLettersCode || 'en'
  try {
    return Intl.getCanonicalLocales(tag.replace('_', '-'))[0] ?? 'en'
  } catch {
    return language.twoLettersCode || 'en'
  }
}
