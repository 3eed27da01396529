// Blank out ranges of a text (placeholders, URLs, tags) so a later scan ignores them while
// offsets stay the same. The filler is a control character that no check treats as a digit,
// a space, a bracket or punctuation.

export interface TextRange { start: number; end: number }

export const MASK_CHAR = '\u0001'

export function maskSpans(text: string, ranges: readonly TextRange[]): string {
  if (!ranges.length) return text
  // Slices and runs of the filler, in order; overlapping ranges merge. One filler per UTF-16 code
  // unit, so offsets stay. (Splitting into an array of characters was a hot spot: bench.)
  const sorted = ranges.length === 1 ? ranges : [...ranges].sort((a, b) => a.start - b.start)
  let out = ''
  let at = 0
  for (const { start, end } of sorted) {
    const from = Math.max(at, start, 0)
    const to = Math.min(end, text.length)
    if (to <= from) continue
    out += text.slice(at, from) + MASK_CHAR.repeat(to - from)
    at = to
  }
  return out + text.slice(at)
}
