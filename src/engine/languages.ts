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

// Intl.getCanonicalLocales is slow and checks call this for every string; tags are few.
const canonical = new Map<string, string>()

/** The BCP 47 tag of a language record, for Intl APIs. */
export function localeOf(language: Language): string {
  const tag = language.locale || language.id || language.twoLettersCode || 'en'
  const key = `${tag}\u0000${language.twoLettersCode ?? ''}`
  let result = canonical.get(key)
  if (result === undefined) {
    try {
      result = Intl.getCanonicalLocales(tag.replace('_', '-'))[0] ?? 'en'
    } catch {
      result = language.twoLettersCode || 'en'
    }
    if (canonical.size > 1000) canonical.clear()
    canonical.set(key, result)
  }
  return result
}
