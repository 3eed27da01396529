// Numbers: the translation carries the source's numbers, in whatever digits and separators the
// target locale writes them (٣٫٥, ३.५, ๓, １０, 1.000,5, 1 000,5, 1'000.5, 1,00,000, 1万).
// Numbers inside placeholders, URLs, tags and ICU syntax are not text and are ignored. Small
// numbers (up to `spelledOutUpTo`) may be spelled out or dropped ("1 file" -> "un fichier",
// Arabic duals), unless the translation puts a different number in their place.
import { TYPE } from '@formatjs/icu-messageformat-parser'
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { icuElements, parseIcu } from '../_shared/icu-message.js'
import { foldDigits } from '../_shared/locale-digits.js'
import { findTags } from '../_shared/markup-tags.js'
import { maskSpans, type TextRange } from '../_shared/mask-spans.js'
import { findPlaceholders, type Placeholder } from '../_shared/placeholder-patterns.js'
import { findUrls } from '../_shared/url-patterns.js'

const { messages, report } = defineMessages({
  'missing-number': { severity: 'error', meaning: 'A number of the source is not in the translation, in any digits or separators.', text: (d: { number: string }) => `Number ${d.number} is missing from the translation` },
  'extra-number': { severity: 'error', meaning: 'The translation has a number the source does not have.', text: (d: { number: string }) => `Number ${d.number} is not in the source` },
})

interface NumberToken {
  text: string
  start: number
  end: number
  /** Canonical values the token may stand for ("1,000" is 1000 in English, 1 in German). */
  values: Set<string>
}

const TOKEN = /\d+(?:(?:[.,'’\u00a0\u202f\u2009\u066b\u066c]| (?=\d{3}(?!\d)))\d+)*/g
const GROUPING_ONLY = /['’\u00a0\u202f\u2009\u066c ]/
const MULTIPLIERS: Record<string, number> = { 万: 4, 萬: 4, 만: 4, 億: 8, 亿: 8, 억: 8 }

function canonical(int: string, frac = ''): string {
  const i = int.replace(/^0+(?=\d)/, '')
  // Trailing zeros by hand: /0+$/ retries from every zero of a long run followed by another digit.
  let end = frac.length
  while (end > 0 && frac[end - 1] === '0') end--
  const f = frac.slice(0, end)
  return f ? `${i}.${f}` : i
}

function validGrouping(groups: string[]): boolean {
  if (groups.length < 2 || !/^\d{1,3}$/.test(groups[0]!) || !/^\d{3}$/.test(groups[groups.length - 1]!)) return false
  const middle = groups.slice(1, -1)
  // Western 1,000,000 or Indian 10,00,000.
  return middle.every((g) => g.length === 3) || middle.every((g) => g.length === 2)
}

/** The whole token as one number (module-level: a closure made per token is compiled again after each full GC). */
function whole(raw: string, start: number, values: string[]): NumberToken[] {
  return [{ text: raw, start, end: start + raw.length, values: new Set(values) }]
}

/** One token of digits and separators as one or more numbers. */
function parseToken(raw: string, start: number): NumberToken[] {
  const seps: string[] = raw.match(/[^\d]/g) ?? []
  const groups = raw.split(/[^\d]/)
  if (!seps.length) return whole(raw, start, [canonical(raw)])
  const kinds = [...new Set(seps)]
  if (kinds.length === 1) {
    const sep = kinds[0]!
    if (seps.length === 1) {
      const [left, right] = groups as [string, string]
      if (GROUPING_ONLY.test(sep)) {
        if (validGrouping(groups)) return whole(raw, start, [canonical(left + right)])
      } else if (validGrouping(groups) && left !== '0') {
        return whole(raw, start, [canonical(left + right), canonical(left, right)])
      } else {
        return whole(raw, start, [canonical(left, right)])
      }
    } else if (validGrouping(groups)) {
      return whole(raw, start, [canonical(groups.join(''))])
    }
  } else if (kinds.length === 2 && seps.lastIndexOf(seps[seps.length - 1]!) === seps.length - 1 && seps.indexOf(seps[seps.length - 1]!) === seps.length - 1) {
    const int = groups.slice(0, -1)
    if (validGrouping(int) || int.length === 1) return whole(raw, start, [canonical(int.join(''), groups[groups.length - 1])])
  }
  // Versions, dates, IP addresses: each part on its own.
  const out: NumberToken[] = []
  let offset = start
  for (const [i, g] of groups.entries()) {
    out.push({ text: g, start: offset, end: offset + g.length, values: new Set([canonical(g)]) })
    offset += g.length + (seps[i]?.length ?? 0)
  }
  return out
}

const ICU_SELECT = /^\{\s*[^\s,{}]+\s*,\s*(?:plural|selectordinal|select)\s*,/

/**
 * What of a placeholder to mask: all of it, but of an ICU plural or select argument only its
 * syntax (name, selectors, `#`, nested arguments): the text of its branches, `{n, plural, other
 * {# of 25 files}}`, is text whose numbers count.
 */
function placeholderMask(p: Placeholder): TextRange[] {
  if (p.format !== 'brace' || !ICU_SELECT.test(p.text)) return [p]
  const parsed = parseIcu(p.text)
  if (!parsed.ok) return [p]
  const out: TextRange[] = []
  let at = p.start
  for (const el of icuElements(parsed.elements)) {
    if (el.type !== TYPE.literal || !el.location) continue
    const start = p.start + el.location.start.offset
    if (start > at) out.push({ start: at, end: start })
    at = Math.max(at, p.start + el.location.end.offset)
  }
  if (at < p.end) out.push({ start: at, end: p.end })
  return out
}

// A character reference stands for one character (HTML, XML): the digits of `&#160;` (a no-break
// space) or `&#x2026;` (…) and the name of `&frac12;` are not numbers of the text.
const CHARACTER_REFERENCE = /&(?:#\d+|#[xX][\dA-Fa-f]+|[A-Za-z][A-Za-z\d]*);/g

function characterReferences(text: string): TextRange[] {
  if (!text.includes('&')) return []
  const out: TextRange[] = []
  for (const m of text.matchAll(CHARACTER_REFERENCE)) out.push({ start: m.index, end: m.index + m[0].length })
  return out
}

/** Numbers of a text, ignoring placeholders, URLs, tags, character references and ICU syntax such as `=0`. */
export function findNumbers(text: string): NumberToken[] {
  if (!/\p{Nd}/u.test(text)) return []
  // Masked first, then folded: the ranges are the text's, and a digit beyond the BMP (Adlam 𞥒)
  // folds from two code units to one, `origin` mapping the offsets back.
  const folded = foldDigits(maskSpans(text, [...findPlaceholders(text).flatMap(placeholderMask), ...findUrls(text), ...findTags(text), ...characterReferences(text)]))
  const masked = folded.text.replace(/=\d+(?=\s*\{)|offset:\s*\d+/g, (m) => '\u0001'.repeat(m.length))
  const origin = folded.origin
  const out: NumberToken[] = []
  for (const m of masked.matchAll(TOKEN)) {
    const tokens = parseToken(m[0], m.index)
    const last = tokens[tokens.length - 1]!
    const power = MULTIPLIERS[masked[last.end] ?? '']
    if (power && tokens.length === 1) {
      for (const v of [...last.values]) {
        const [i, f = ''] = v.split('.')
        const shifted = (i! + f.padEnd(power, '0')).slice(0, i!.length + power)
        const rest = f.slice(power)
        last.values.add(canonical(shifted, rest))
      }
    }
    for (const t of tokens) {
      if (origin) [t.start, t.end] = [origin[t.start]!, origin[t.end]!]
      out.push({ ...t, text: text.slice(t.start, t.end) }) // no spread: a token may hold 50,000 numbers
    }
  }
  return out
}

/** Indexes of tokens by a key, in order, each list with a cursor past the indexes already used. */
class IndexQueue {
  private readonly lists = new Map<string, { at: number; indexes: number[] }>()
  add(key: string, index: number): void {
    const list = this.lists.get(key)
    if (list) list.indexes.push(index)
    else this.lists.set(key, { at: 0, indexes: [index] })
  }
  /** The first index under `key` not marked in `used`; -1 when none. */
  first(key: string, used: Uint8Array): number {
    const list = this.lists.get(key)
    if (!list) return -1
    while (list.at < list.indexes.length && used[list.indexes[list.at]!]) list.at++
    return list.at < list.indexes.length ? list.indexes[list.at]! : -1
  }
}

export default definePlugin({
  name: 'numbers',
  description: 'The translation has the same numbers as the source, in any script’s digits and any locale’s separators.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      spelledOutUpTo: {
        type: 'integer',
        minimum: -1,
        default: 10,
        description: 'Numbers up to this value may be spelled out or left out in the translation, as long as no other number takes their place; -1 to require every number.',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const small = (t: NumberToken) => [...t.values].every((v) => /^\d+$/.test(v) && Number(v) <= options.spelledOutUpTo)
    return {
      check(item) {
        const source = findNumbers(item.source)
        const target = findNumbers(item.translation ?? '')
        if (!source.length && !target.length) return []
        // Each source number takes the first unused target number written the same, else the
        // first unused one with a value in common. Indexes by text and by value, each with a
        // cursor past the used ones, keep this linear (a search and splice per number was not).
        const used = new Uint8Array(target.length)
        const byText = new IndexQueue()
        const byValue = new IndexQueue()
        target.forEach((t, i) => {
          byText.add(t.text, i)
          for (const v of t.values) byValue.add(v, i)
        })
        const missing: NumberToken[] = []
        for (const s of source) {
          let j = byText.first(s.text, used)
          if (j === -1) {
            for (const v of s.values) {
              const k = byValue.first(v, used)
              if (k !== -1 && (j === -1 || k < j)) j = k
            }
          }
          if (j === -1) missing.push(s)
          else used[j] = 1
        }
        // Repeating a number of the source ("24/7" -> "24 h/24, 7 j/7") adds nothing new.
        const sourceValues = new Set(source.flatMap((s) => [...s.values]))
        const extra = target.filter((t, i) => !used[i] && ![...t.values].some((v) => sourceValues.has(v)))
        const both = missing.length > 0 && extra.length > 0
        const findings: FindingInput[] = []
        for (const s of missing) {
          if (!both && small(s)) continue
          findings.push(report('missing-number', { number: s.text }, { span: { start: s.start, end: s.end, in: 'source' } }))
        }
        for (const t of extra) {
          if (!both && small(t)) continue
          findings.push(report('extra-number', { number: t.text }, { span: { start: t.start, end: t.end, in: 'translation' } }))
        }
        return findings
      },
    }
  },
})
