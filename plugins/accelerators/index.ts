// Menu accelerators (mnemonics): `&File` on Windows/Qt, `_File` in GTK, `~File` in LibreOffice.
// A translation keeps exactly as many as its source has, on a letter of its own choice; the
// CJK convention of appending the key, `ファイル(&F)`, counts like any other. Not accelerators:
// `&&` (a literal ampersand), entities (`&amp;`), `&` before a space ("Tom & Jerry"),
// abbreviations between capitals ("R&D", "AT&T"), and markers inside URLs, tags and placeholders.
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'

const { messages, report } = defineMessages({
  'missing-accelerator': {
    severity: 'error',
    meaning: 'The source has an accelerator marker and the translation has none.',
    text: (d: { accelerator: string }) => `The source has the accelerator "${d.accelerator}" but the translation has none`,
  },
  'extra-accelerator': {
    severity: 'error',
    meaning: 'The translation has more accelerator markers than the source.',
    text: (d: { found: string[]; expected: number }) => `The translation has ${d.found.length} accelerators (${d.found.join(', ')}) where the source has ${d.expected}`,
  },
  'accelerator-count': {
    severity: 'error',
    meaning: 'The translation has fewer accelerator markers than the source, but at least one.',
    text: (d: { found: number; expected: number }) => `The translation has ${d.found} accelerator${d.found === 1 ? '' : 's'} where the source has ${d.expected}`,
  },
})

interface Accelerator { index: number; text: string }

/** Markup, URLs and placeholders, where a marker character means something else. */
const OPAQUE = /<[^<>]+>|&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);|\b(?:https?|ftp|mailto):[^\s<>"]+|\$\{[^{}]*\}|\{[^{}]*\}|%\([^()]+\)[a-z]/gi
const SPACE = /\s/

/**
 * The text with markup, URLs, placeholders and `key=value` words blanked out, as one global
 * regex `OPAQUE|\S+=\S*` would (leftmost match, OPAQUE first on a tie), in linear time. That
 * regex retried `\S+=` from every character of a word without `=` (quadratic on 50 KB of
 * letters); here where a `key=value` match may start is known from each word's last `=`.
 */
export function maskOpaque(text: string): string {
  const n = text.length
  // runEnd[i]: end of the run of non-space characters at i; lastEq[i]: its last `=`, or -1;
  // nextKv[i]: the first run start at or after i from which `\S+=\S*` matches, or -1.
  const runEnd = new Int32Array(n + 1)
  const lastEq = new Int32Array(n + 1).fill(-1)
  const nextKv = new Int32Array(n + 1).fill(-1)
  for (let i = n - 1; i >= 0; i--) {
    const space = SPACE.test(text[i]!)
    runEnd[i] = space ? i : i + 1 < n && !SPACE.test(text[i + 1]!) ? runEnd[i + 1]! : i + 1
    lastEq[i] = space ? -1 : i + 1 < runEnd[i]! && lastEq[i + 1]! !== -1 ? lastEq[i + 1]! : text[i] === '=' ? i : -1
    const runStart = !space && (i === 0 || SPACE.test(text[i - 1]!))
    nextKv[i] = runStart && lastEq[i]! > i ? i : nextKv[i + 1]!
  }
  const kvFrom = (p: number) => (p < n && !SPACE.test(text[p]!) && lastEq[p]! > p ? p : nextKv[p]!)
  const ranges: Array<[number, number]> = []
  let pos = 0
  let code: RegExpExecArray | null | undefined
  while (pos < n) {
    // OPAQUE's next match is reused while it lies ahead: each stretch of text is searched once.
    if (code === undefined || (code && code.index < pos)) {
      OPAQUE.lastIndex = pos
      code = OPAQUE.exec(text)
    }
    const kv = kvFrom(pos)
    if (code && (kv === -1 || code.index <= kv)) {
      ranges.push([code.index, code.index + code[0].length])
      pos = code.index + code[0].length
      code = undefined
    } else if (kv !== -1) {
      ranges.push([kv, runEnd[kv]!])
      pos = runEnd[kv]!
    } else {
      break
    }
  }
  let out = ''
  let at = 0
  for (const [a, b] of ranges) {
    out += text.slice(at, a) + '\u0000'.repeat(b - a)
    at = b
  }
  return out + text.slice(at)
}

/** For each offset: is there a `_` from there to the next whitespace? (One pass, not a split per marker.) */
function underscoresAhead(text: string): Uint8Array {
  const out = new Uint8Array(text.length + 1)
  for (let i = text.length - 1; i >= 0; i--) out[i] = SPACE.test(text[i]!) ? 0 : text[i] === '_' ? 1 : out[i + 1]!
  return out
}

function acceleratorsOf(text: string, marker: string): Accelerator[] {
  // Masking only blanks characters out: a text without the marker has no accelerator (and most
  // texts have none; on 48,000 characters the mask costs milliseconds).
  if (!text.includes(marker)) return []
  const masked = maskOpaque(text)
  let underscoreAhead: Uint8Array | undefined
  const out: Accelerator[] = []
  for (let i = 0; i < masked.length; i++) {
    if (masked[i] !== marker) continue
    if (masked[i + 1] === marker) { i++; continue } // doubled: the literal character
    const next = String.fromCodePoint(masked.codePointAt(i + 1) ?? 32)
    if (!/[\p{L}\p{N}]/u.test(next)) continue
    const previous = masked[i - 1] ?? ''
    if (marker === '&' && /\p{Lu}/u.test(previous) && /\p{Lu}/u.test(next)) continue // R&D, AT&T
    if (marker === '_' && /[\p{L}\p{N}]/u.test(previous) && (underscoreAhead ??= underscoresAhead(masked))[i + 1]) continue // snake_case_name
    out.push({ index: i, text: marker + next })
  }
  return out
}

export default definePlugin({
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
  } as const,
  messages,
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
            findings.push(report('missing-accelerator', { accelerator: first.text }, { span: { start: first.index, end: first.index + first.text.length, in: 'source' } }))
          } else if (target.length > source.length) {
            const extra = target[source.length]!
            findings.push(report('extra-accelerator', { found: target.map((a) => a.text), expected: source.length }, { span: { start: extra.index, end: extra.index + extra.text.length } }))
          } else {
            findings.push(report('accelerator-count', { found: target.length, expected: source.length }))
          }
        }
        return findings
      },
    }
  },
})
