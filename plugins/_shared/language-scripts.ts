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

/**
 * Languages commonly written in more than one script, where a code without a script subtag
 * (`uz`, `sr`) does not say which: the likely script comes from CLDR, these are the others.
 */
const ALSO_WRITTEN_IN: Record<string, string[]> = {
  sr: ['Latn'], bs: ['Cyrl'], uz: ['Cyrl', 'Arab'], az: ['Cyrl', 'Arab'], kk: ['Latn'], ky: ['Latn'],
  tk: ['Cyrl'], tt: ['Latn'], ug: ['Cyrl', 'Latn'], mn: ['Mong'], pa: ['Arab'], sd: ['Deva'],
  ks: ['Deva'], ku: ['Arab'], ckb: ['Latn'], ha: ['Arab'], ms: ['Arab'], be: ['Latn'], tg: ['Arab'],
  shi: ['Latn'], zgh: ['Latn'], ber: ['Latn'], sat: ['Deva'], ff: ['Adlm'], vai: ['Latn'],
}

/** The Unicode script codes of a BCP 47 locale (`ru` -> Cyrl, `ja` -> Hani Hira Kana); [] when unknown. */
export function scriptsOfLocale(locale: string): string[] {
  let script: string | undefined
  let language = ''
  let explicit = false
  try {
    const parsed = new Intl.Locale(locale)
    explicit = !!parsed.script
    language = parsed.language
    script = parsed.maximize().script
  } catch {
    return []
  }
  if (!script) return []
  const scripts = COMBINED[script] ?? [script]
  return explicit ? scripts : [...scripts, ...(ALSO_WRITTEN_IN[language] ?? [])]
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
