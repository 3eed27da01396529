// Menu accelerators (mnemonics): `&File` on Windows/Qt, `_File` in GTK, `~File` in LibreOffice.
// A translation keeps exactly as many as its source has, on a letter of its own choice; the
// CJK convention of appending the key, `ファイル(&F)`, counts like any other. Not accelerators:
// `&&` (a literal ampersand), entities (`&amp;`), `&` before a space ("Tom & Jerry"),
// abbreviations between capitals ("R&D", "AT&T"), and markers inside URLs, tags and placeholders.
import { definePlugin, type FindingInput } from '../../src/engine/types.js'

interface Options {
  markers: string[]
}

interface Accelerator { index: number; text: string }

/** Markup, URLs and placeholders, where a marker character means something else. */
const OPAQUE = /<[^<>]+>|&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);|\b(?:https?|ftp|mailto):[^\s<>"]+|\$\{[^{}]*\}|\{[^{}]*\}|%\([^)]+\)[a-z]|\S+=\S*/gi

function acceleratorsOf(text: string, marker: string): Accelerator[] {
  const masked = text.replace(OPAQUE, (m) => '\u0000'.repeat(m.length))
  const out: Accelerator[] = []
  for (let i = 0; i < masked.length; i++) {
    if (masked[i] !== marker) continue
    if (masked[i + 1] === marker) { i++; continue } // doubled: the literal character
    const next = String.fromCodePoint(masked.codePointAt(i + 1) ?? 32)
    if (!/[\p{L}\p{N}]/u.test(next)) continue
    const previous = masked[i - 1] ?? ''
    if (marker === '&' && /\p{Lu}/u.test(previous) && /\p{Lu}/u.test(next)) continue // R&D, AT&T
    if (marker === '_' && /[\p{L}\p{N}]/u.test(previous) && /_/.test(masked.slice(i + 1).split(/\s/)[0]!)) continue // snake_case_name
    out.push({ index: i, text: marker + next })
  }
  return out
}

export default definePlugin<Options>({
  name: 'accelerators',
  description: 'The translation has as many menu accelerator markers (&File) as the source.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      markers: {
        type: 'array',
        items: { type: 'string', minLength: 1, maxLength: 1 },
        minItems: 1,
        uniqueItems: true,
        default: ['&'],
        description: 'The characters that mark an accelerator key: "&" (Windows, Qt), "_" (GTK), "~" (LibreOffice).',
      },
    },
  },
  needs: ['translation'],
  create(options) {
    return {
      check(item): FindingInput[] {
        const translation = item.translation
        if (!translation) return []
        const findings: FindingInput[] = []
        for (const marker of options.markers) {
          const source = acceleratorsOf(item.source, marker)
          if (source.length === 0) continue
          const target = acceleratorsOf(translation, marker)
          if (target.length === source.length) continue
          if (target.length === 0) {
            const first = source[0]!
            findings.push({
              message: `The source has the accelerator "${first.text}" but the translation has none`,
              span: { start: first.index, end: first.index + first.text.length, in: 'source' },
            })
          } else if (target.length > source.length) {
            const extra = target[source.length]!
            findings.push({
              message: `The translation has ${target.length} accelerators (${target.map((a) => a.text).join(', ')}) where the source has ${source.length}`,
              span: { start: extra.index, end: extra.index + extra.text.length },
            })
          } else {
            findings.push({ message: `The translation has ${target.length} accelerator${target.length === 1 ? '' : 's'} where the source has ${source.length}` })
          }
        }
        return findings
      },
    }
  },
})
