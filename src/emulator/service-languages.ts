// Full language records as the service sends them (section 2.6): the emulator puts these in
// `sourceLanguage` / `affectedLanguage` of every event.
import type { Language } from '../protocol/language.js'

type FullLanguage = Required<Omit<Language, 'dialectOf'>> & { dialectOf: string | null }

function record(id: string, name: string, three: string, locale: string, android: string, rtl = false): FullLanguage {
  return {
    id,
    name,
    editorCode: id,
    twoLettersCode: id,
    threeLettersCode: three,
    locale,
    androidCode: android,
    osxCode: `${id}.lproj`,
    osxLocale: id,
    textDirection: rtl ? 'rtl' : 'ltr',
    dialectOf: null,
  }
}

export const SERVICE_LANGUAGES: Readonly<Record<string, FullLanguage>> = {
  en: record('en', 'English', 'eng', 'en-US', 'en-rUS'),
  de: record('de', 'German', 'deu', 'de-DE', 'de-rDE'),
  fr: record('fr', 'French', 'fra', 'fr-FR', 'fr-rFR'),
  ja: record('ja', 'Japanese', 'jpn', 'ja-JP', 'ja-rJP'),
  ar: record('ar', 'Arabic', 'ara', 'ar-SA', 'ar-rSA', true),
  ru: record('ru', 'Russian', 'rus', 'ru-RU', 'ru-rRU'),
}

/** The record of a language the emulator has translations for; throws on any other code. */
export function serviceLanguage(code: string): FullLanguage {
  const found = SERVICE_LANGUAGES[code]
  if (!found) {
    throw new Error(`emulator: no sample translations for language "${code}"; use one of ${Object.keys(SERVICE_LANGUAGES).filter((c) => c !== 'en').join(', ')}`)
  }
  return found
}
