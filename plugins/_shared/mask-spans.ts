// Blank out ranges of a text (placeholders, URLs, tags) so a later scan ignores them while
// offsets stay the same. The filler is a control character that no check treats as a digit,
// a space, a bracket or punctuation.

export interface TextRange { start: number; end: number }

export const MASK_CHAR = '\u0001'

export function maskSpans(text: string, ranges: readonly TextRange[]): string {
  if (!ranges.length) return text
  const chars = text.split('')
  for (const { start, end } of ranges) {
    for (let i = Math.max(0, start); i < Math.min(end, chars.length); i++) chars[i] = MASK_CHAR
  }
  return chars.join('')
}
