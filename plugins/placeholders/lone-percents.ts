// Percent signs that are neither `%%` nor the start of a placeholder. In a format string (one
// whose source escapes a literal percent as `%%`), such a `%` makes printf or Python read what
// follows as a conversion: "100% sûr" formats as "100" + `% s` + "ûr", or fails.
import type { Placeholder } from '../_shared/placeholder-patterns.js'

export function lonePercents(text: string, placeholders: readonly Placeholder[]): number[] {
  const starts = new Set<number>()
  for (const p of placeholders) starts.add(p.start)
  const out: number[] = []
  for (let i = text.indexOf('%'); i !== -1; i = text.indexOf('%', i + 1)) {
    if (text.charCodeAt(i + 1) === 37) {
      i++ // `%%`: skip both
      continue
    }
    if (!starts.has(i)) out.push(i)
  }
  return out
}
