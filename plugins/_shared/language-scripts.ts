// Which writing systems a language is written in, from CLDR's likely-subtags data
// (Intl.Locale#maximize), as Unicode Script property values usable in `\p{Script_Extensions=...}`.
// Only the few ISO 15924 codes that name a combination of scripts need a table.

/** ISO 15924 codes that stand for several Unicode scripts. */
const COMBINED: Record<string, string[]> = {
  Jpan: ['Hani', 'Hira', 'Kana'],
  Kore: ['Hang', 'Hani'],
  Hans: ['Hani'],
  Hant: ['Hani', 'Bopo'],
  Hrkt: ['Hira', 'Kana'],
}

/** Scripts written without spaces between words: word boundaries there are not spaces. */
const SPACELESS = new Set(['Hani', 'Hira', 'Kana', 'Thai', 'Laoo', 'Khmr', 'Mymr', 'Tibt', 'Bopo', 'Yiii'])

/** The Unicode script codes of a BCP 47 locale (`ru` -> Cyrl, `ja` -> Hani Hira Kana); [] when unknown. */
export function scriptsOfLocale(locale: string): string[] {
  let script: string | undefined
  try {
    script = new Intl.Locale(locale).maximize().script
  } catch {
    return []
  }
  if (!script) return []
  return COMBINED[script] ?? [script]
}

/** Is the language written without spaces between words (Chinese, Japanese, Thai, ...)? */
export function isSpacelessLocale(locale: string): boolean {
  const scripts = scriptsOfLocale(locale)
  return scripts.length > 0 && scripts.every((s) => SPACELESS.has(s))
}

const spacelessChar = new RegExp(`[${[...SPACELESS].map((s) => `\\p{scx=${s}}`).join('')}]`, 'u')

/** Does the text contain a character of a script written without spaces? */
export function hasSpacelessScript(text: string): boolean {
  return spacelessChar.test(text)
}

/** The English name of a script code, for messages. */
export function scriptName(code: string): string {
  return NAMES[code] ?? code
}

const NAMES: Record<string, string> = {
  Latn: 'Latin', Cyrl: 'Cyrillic', Grek: 'Greek', Arab: 'Arabic', Hebr: 'Hebrew', Hani: 'Han',
  Hira: 'Hiragana', Kana: 'Katakana', Hang: 'Hangul', Bopo: 'Bopomofo', Thai: 'Thai', Deva: 'Devanagari',
  Beng: 'Bengali', Guru: 'Gurmukhi', Gujr: 'Gujarati', Taml: 'Tamil', Telu: 'Telugu', Knda: 'Kannada',
  Mlym: 'Malayalam', Sinh: 'Sinhala', Orya: 'Oriya', Geor: 'Georgian', Armn: 'Armenian', Ethi: 'Ethiopic',
  Khmr: 'Khmer', Laoo: 'Lao', Mymr: 'Myanmar', Tibt: 'Tibetan', Thaa: 'Thaana', Mong: 'Mongolian',
}

const DETECT = Object.keys(NAMES).map((code) => [code, new RegExp(`\\p{sc=${code}}`, 'u')] as const)

/** The script of one character (by Script, not Script_Extensions); undefined for Common/Inherited or unlisted. */
export function scriptOfChar(ch: string): string | undefined {
  for (const [code, re] of DETECT) if (re.test(ch)) return code
  return undefined
}
