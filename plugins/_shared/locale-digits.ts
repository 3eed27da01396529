// Decimal digits of every script the service's languages use, folded to ASCII so that numbers
// compare across Arabic-Indic, Persian, Devanagari, Bengali, Thai, full-width and other digits.
// Unicode lays out each script's digits 0-9 contiguously; these are the code points of the zeros.

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

const DIGIT_VALUE = new Map<string, string>()
for (const zero of DIGIT_ZEROS) {
  for (let d = 0; d < 10; d++) DIGIT_VALUE.set(String.fromCodePoint(zero + d), String(d))
}

/** Any decimal digit (of any script). */
export const ANY_DIGIT = /\p{Nd}/u

/** The text with every known script's decimal digits replaced by ASCII digits (same length). */
export function toAsciiDigits(text: string): string {
  let out = ''
  for (const ch of text) out += DIGIT_VALUE.get(ch) ?? ch
  return out
}

/** The ASCII value of one decimal digit character, or undefined. */
export function digitValue(ch: string): string | undefined {
  if (ch >= '0' && ch <= '9') return ch
  return DIGIT_VALUE.get(ch)
}
