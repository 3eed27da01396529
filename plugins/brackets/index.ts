// Brackets: the translation's brackets balance (when the source's do: "1) Open 2) Save" and
// emoticons are not pairs) and it has as many of each kind as the source. Full-width and ASCII
// forms are the same kind: ( = （, [ = ［ = 【 = 〔, { = ｛. CJK quotation and title marks 「」『』《》〈〉
// must balance but are not counted against the source, since they stand for quotes and italics.
// Quotes are not brackets. Braces of placeholders and ICU syntax are ignored.
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { maskSpans } from '../_shared/mask-spans.js'
import { findPlaceholders } from '../_shared/placeholder-patterns.js'
import { findUrls } from '../_shared/url-patterns.js'

interface Family { name: string; open: string; close: string; counted: boolean }

const FAMILIES: Family[] = [
  { name: 'parentheses', open: '(（', close: ')）', counted: true },
  { name: 'square brackets', open: '[［【〔〖〘', close: ']］】〕〗〙', counted: true },
  { name: 'braces', open: '{｛', close: '}｝', counted: true },
  { name: 'corner brackets', open: '「｢', close: '」｣', counted: false },
  { name: 'white corner brackets', open: '『', close: '』', counted: false },
  { name: 'double angle brackets', open: '《', close: '》', counted: false },
  { name: 'angle brackets', open: '〈', close: '〉', counted: false },
]
const FAMILY_OF = new Map<string, { family: Family; opens: boolean }>()
for (const family of FAMILIES) {
  for (const ch of family.open) FAMILY_OF.set(ch, { family, opens: true })
  for (const ch of family.close) FAMILY_OF.set(ch, { family, opens: false })
}
// The same by UTF-16 code unit (every bracket is in the BMP): ASCII from a dense table, the rest
// from a map, so that the scans below make no one-character strings (a text of 48,000 brackets
// spent most of its time there: issue 17's bench).
type Hit = { family: Family; opens: boolean }
const ASCII_HIT: Array<Hit | undefined> = Array.from({ length: 128 }, (_, code) => FAMILY_OF.get(String.fromCharCode(code)))
const WIDE_HIT = new Map([...FAMILY_OF].filter(([ch]) => ch.charCodeAt(0) >= 128).map(([ch, hit]) => [ch.charCodeAt(0), hit]))
const hitAt = (text: string, i: number): Hit | undefined => {
  const code = text.charCodeAt(i)
  return code < 128 ? ASCII_HIT[code] : WIDE_HIT.get(code)
}
// Any character of any family: most texts have none, and masking them first is the dear part.
const ANY_BRACKET = new RegExp(`[${[...FAMILY_OF.keys()].map((ch) => (/[\\\]\[^-]/.test(ch) ? `\\${ch}` : ch)).join('')}]`, 'u')
const EMOTICON = /(?<![\p{L}\p{N}])[:;=8xX]['-]?[()[\]DPp](?![\p{L}\p{N}])|\([:;]|\^\^?\)/gu

const { messages, report } = defineMessages({
  'unopened-bracket': { severity: 'error', meaning: 'A closing bracket of the translation has no opening one.', text: (d: { bracket: string }) => `Closing “${d.bracket}” has no opening bracket` },
  'crossed-brackets': { severity: 'error', meaning: 'A bracket of the translation is closed by a bracket of another kind.', text: (d: { bracket: string; before: string }) => `“${d.bracket}” is not closed before “${d.before}”` },
  'unclosed-bracket': { severity: 'error', meaning: 'An opening bracket of the translation is never closed.', text: (d: { bracket: string }) => `“${d.bracket}” is not closed` },
  'bracket-count': {
    severity: ['error', 'warning'],
    meaning: 'The translation has another number of pairs of a kind of bracket than the source: an error, a warning when a plural marker or another bracket kind explains it (`countSeverity`).',
    text: (d: { family: string; source: number; translation: number }) => `The source has ${d.source} pair${d.source === 1 ? '' : 's'} of ${d.family}, the translation ${d.translation}`,
  },
})

type BalanceCode = 'unopened-bracket' | 'crossed-brackets' | 'unclosed-bracket'
interface Problem { family: Family; code: BalanceCode; bracket: string; before: string; at: number }

/**
 * The text with placeholders, URLs and emoticons blanked out. An emoticon that ends in a closing
 * bracket (`8)`, `x]`, `:)`) is kept as that bracket when a bracket of its kind is open before it
 * and the rest of the text would not close that one: "(maximal 8)", "[x](url)", but "(great :))".
 */
function mask(text: string): string {
  const masked = maskSpans(text, [...findPlaceholders(text), ...findUrls(text)])
  const found = [...masked.matchAll(EMOTICON)]
  if (!found.length) return masked
  const endOf = (k: number) => found[k]!.index + found[k]![0].length
  const closes = found.map((m, k) => {
    const hit = hitAt(masked, endOf(k) - 1)
    return hit && !hit.opens ? hit.family : undefined
  })
  // Backwards: of the text after each emoticon, the most closing brackets of a kind in excess of
  // opening ones that any beginning of it has, i.e. how many brackets open before it it closes.
  // Other emoticons count as no brackets.
  const excess = new Map<Family, number>()
  const closedLater: number[] = []
  let end = masked.length
  for (let k = found.length - 1; ; k--) {
    const from = k >= 0 ? endOf(k) : 0
    for (let i = end - 1; i >= from; i--) {
      const hit = hitAt(masked, i)
      if (hit) excess.set(hit.family, Math.max(0, (excess.get(hit.family) ?? 0) + (hit.opens ? -1 : 1)))
    }
    if (k < 0) break
    closedLater[k] = excess.get(closes[k]!) ?? 0
    end = found[k]!.index
  }
  // Forwards: the brackets open before each emoticon; the ones it closes are kept.
  const open = new Map<Family, number>()
  let out = ''
  let at = 0
  for (const [k, m] of found.entries()) {
    for (let i = at; i < m.index; i++) {
      const hit = hitAt(masked, i)
      if (hit) open.set(hit.family, Math.max(0, (open.get(hit.family) ?? 0) + (hit.opens ? 1 : -1)))
    }
    const family = closes[k]
    const depth = family ? open.get(family) ?? 0 : 0
    if (family && depth > closedLater[k]!) {
      open.set(family, depth - 1)
      out += masked.slice(at, endOf(k))
    } else {
      out += masked.slice(at, m.index) + '\u0001'.repeat(m[0].length)
    }
    at = endOf(k)
  }
  return out + masked.slice(at)
}

function balanceProblems(text: string): Problem[] {
  const stack: { family: Family; ch: string; at: number }[] = []
  // How many of each family are open on the stack: a closing bracket with none open is known at
  // once, and otherwise the pops down to its opening one are paid for by the pushes (linear).
  const open = new Map<Family, number>()
  const problems: Problem[] = []
  for (let i = 0; i < text.length; i++) {
    const hit = hitAt(text, i)
    if (!hit) continue
    if (hit.opens) {
      stack.push({ family: hit.family, ch: text[i]!, at: i })
      open.set(hit.family, (open.get(hit.family) ?? 0) + 1)
      continue
    }
    if (!open.get(hit.family)) {
      problems.push({ family: hit.family, code: 'unopened-bracket', bracket: text[i]!, before: '', at: i })
      continue
    }
    for (let s = stack.pop()!; ; s = stack.pop()!) {
      open.set(s.family, open.get(s.family)! - 1)
      if (s.family === hit.family) break
      problems.push({ family: s.family, code: 'crossed-brackets', bracket: s.ch, before: text[i]!, at: s.at })
    }
  }
  for (const s of stack) problems.push({ family: s.family, code: 'unclosed-bracket', bracket: s.ch, before: '', at: s.at })
  return problems.sort((a, b) => a.at - b.at)
}

function counts(text: string): Map<Family, { open: number; close: number }> {
  const out = new Map<Family, { open: number; close: number }>()
  for (const family of FAMILIES) out.set(family, { open: 0, close: 0 })
  for (let i = 0; i < text.length; i++) {
    const hit = hitAt(text, i)
    if (hit) out.get(hit.family)![hit.opens ? 'open' : 'close']++
  }
  return out
}

export default definePlugin({
  name: 'brackets',
  description: 'Brackets in the translation balance and match the source’s in number (full-width and ASCII alike).',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      compareCounts: { type: 'boolean', default: true, description: 'Require as many brackets of each kind as the source has.' },
      countSeverity: { enum: ['auto', 'error', 'warning'], default: 'auto', description: 'Severity of a count mismatch. `auto`: a pair of the source lost in the translation is an error, unless it was a plural marker such as file(s), the source does not balance that kind (list markers 1) 2)), or the translation has more pairs of another kind (（…） for 「…」); a pair the translation adds (Japanese explanatory （…）) is a warning. Unbalanced brackets are always errors.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    return {
      check(item) {
        const translation = item.translation ?? ''
        // Masking only blanks characters out: without a bracket before, there is none after.
        if (!ANY_BRACKET.test(item.source) && !ANY_BRACKET.test(translation)) return []
        const source = mask(item.source)
        const target = mask(translation)
        if (!ANY_BRACKET.test(source) && !ANY_BRACKET.test(target)) return []
        const findings: FindingInput[] = []
        const reported = new Set<Family>()
        const sourceProblems = new Set(balanceProblems(source).map((p) => p.family))
        for (const p of balanceProblems(target)) {
          if (sourceProblems.has(p.family)) continue
          reported.add(p.family)
          findings.push(report(p.code, { bracket: p.bracket, before: p.before }, { span: { start: p.at, end: p.at + 1, in: 'translation' } }))
        }
        if (options.compareCounts) {
          const cs = counts(source)
          const ct = counts(target)
          for (const family of FAMILIES) {
            if (!family.counted || reported.has(family)) continue
            const s = cs.get(family)!
            const t = ct.get(family)!
            if (s.open !== t.open || s.close !== t.close) {
              const n = (c: { open: number; close: number }) => Math.max(c.open, c.close)
              const severity = options.countSeverity !== 'auto' ? options.countSeverity
                : lostPairSeverity(family, n(s) - n(t), { source, sourceCounts: cs, targetCounts: ct, sourceUnbalanced: sourceProblems.has(family) })
              findings.push(report('bracket-count', { family: family.name, source: n(s), translation: n(t) }, { severity }))
            }
          }
        }
        return findings
      },
    }
  },
})

// `file(s)`, `Datei(en)`, `utilisateur(s)`: a plural marker a translation may rightly drop.
const PLURAL_MARKER = /\p{L}[(（]\p{Ll}{1,3}[)）]/gu

/**
 * How sure a count mismatch is a mistake: a pair the source has and the translation lost, `lost`
 * pairs in all, is an error where nothing explains it; a pair the translation adds is a warning.
 */
function lostPairSeverity(
  family: Family,
  lost: number,
  c: { source: string; sourceCounts: ReturnType<typeof counts>; targetCounts: ReturnType<typeof counts>; sourceUnbalanced: boolean },
): 'error' | 'warning' {
  if (lost <= 0 || c.sourceUnbalanced) return 'warning'
  if (family.name === 'parentheses' && (c.source.match(PLURAL_MARKER)?.length ?? 0) >= lost) return 'warning'
  const pairs = (x: { open: number; close: number }) => Math.max(x.open, x.close)
  for (const other of FAMILIES) {
    if (other !== family && pairs(c.targetCounts.get(other)!) > pairs(c.sourceCounts.get(other)!)) return 'warning'
  }
  return 'error'
}
