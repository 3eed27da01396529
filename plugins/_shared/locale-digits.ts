// Decimal digits of every script, folded to ASCII so that numbers compare across Arabic-Indic,
// Persian, Devanagari, Bengali, Thai, full-width, Adlam and other digits. Unicode lays out each
// script's digits 0-9 contiguously; these are the code points of the zeros in the BMP. Digits
// beyond it (Adlam 𞥐, Osmanya, Brahmi, Chakma, mathematical 𝟎...) are read from \p{Nd} itself.

const DIGIT_ZEROS = [
  0x0660, // Arabic-Indic
  0x06f0, // Extended Arabic-Indic (Persian, Urdu)
  0x07c0, // NKo
  0x0966, // Devanagari
  0x09e6, // Bengali
  0x0a66, // Gurmukhi
  0x0ae6, // Gujarati
  0x0b66, // Oriya
  0x0be6, // Tamil
  0x0c66, // Telugu
  0x0ce6, // Kannada
  0x0d66, // Malayalam
  0x0de6, // Sinhala
  0x0e50, // Thai
  0x0ed0, // Lao
  0x0f20, // Tibetan
  0x1040, // Myanmar
  0x1090, // Myanmar Shan
  0x17e0, // Khmer
  0x1810, // Mongolian
  0x1946, // Limbu
  0x19d0, // New Tai Lue
  0x1a80, 0x1a90, // Tai Tham
  0x1b50, // Balinese
  0x1bb0, // Sundanese
  0x1c40, // Lepcha
  0x1c50, // Ol Chiki
  0xa620, // Vai
  0xa8d0, // Saurashtra
  0xa900, // Kayah Li
  0xa9d0, // Javanese
  0xa9f0, // Myanmar Tai Laing
  0xaa50, // Cham
  0xabf0, // Meetei Mayek
  0xff10, // Full-width
]

const DIGIT_VALUE = new Map<number, string>()
for (const zero of DIGIT_ZEROS) {
  for (let d = 0; d < 10; d++) DIGIT_VALUE.set(zero + d, String(d))
}

/** Any decimal digit (of any script). */
export const ANY_DIGIT = /\p{Nd}/u
/** A decimal digit other than 0-9: text without one folds to itself. */
const NON_ASCII_DIGIT = /[^\P{Nd}0-9]/u
const NON_ASCII_DIGITS = /[^\P{Nd}0-9]/gu

/**
 * The ASCII value of the decimal digit at code point `cp`, or undefined. Outside the table, from
 * Unicode's promise that decimal digits come in runs 0-9 (runs may touch: 𝟎-𝟿 are five): the
 * value is the distance from the start of the run of \p{Nd}, modulo 10. Remembered.
 */
function valueOf(cp: number): string | undefined {
  const known = DIGIT_VALUE.get(cp)
  if (known !== undefined || cp < 0x10000) return known
  if (!ANY_DIGIT.test(String.fromCodePoint(cp))) return undefined
  let start = cp
  while (ANY_DIGIT.test(String.fromCodePoint(start - 1))) start--
  const value = String((cp - start) % 10)
  DIGIT_VALUE.set(cp, value)
  return value
}

/**
 * The text with every script's decimal digits replaced by ASCII digits. The same length, except
 * that a digit beyond the BMP (two UTF-16 code units) becomes one character: `origin` then gives,
 * for each index of the folded text (and its length), the index in `text` it came from.
 */
export function foldDigits(text: string): { text: string; origin?: Int32Array } {
  if (!NON_ASCII_DIGIT.test(text)) return { text }
  const wide: number[] = [] // where the digits of two code units start, in order
  const folded = text.replace(NON_ASCII_DIGITS, (d: string, at: number) => {
    if (d.length === 2) wide.push(at)
    return valueOf(d.codePointAt(0)!) ?? d
  })
  if (!wide.length) return { text: folded }
  const origin = new Int32Array(folded.length + 1)
  let from = 0
  let next = 0
  for (let i = 0; i < folded.length; i++) {
    origin[i] = from
    from += from === wide[next] ? (next++, 2) : 1
  }
  origin[folded.length] = text.length
  return { text: folded, origin }
}

/** The text with every script's decimal digits replaced by ASCII digits (see `foldDigits`). */
export function toAsciiDigits(text: string): string {
  return foldDigits(text).text
}

/** The ASCII value of one decimal digit character, or undefined. */
export function digitValue(ch: string): string | undefined {
  if (ch >= '0' && ch <= '9') return ch
  const cp = ch.codePointAt(0)
  return cp !== undefined && ch.length === (cp > 0xffff ? 2 : 1) ? valueOf(cp) : undefined
}
