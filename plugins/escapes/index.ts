// Backslash escapes (`\n`, `\t`, `\r`, `\\`, `\"`, `\'`, `\uXXXX`, `\xNN`) in strings from files
// that use them (Android, iOS .strings, properties, JSON, PO): a lost `\n` joins lines, an added
// one breaks the layout, an unescaped quote breaks the file. Line breaks, tabs and backslashes
// must match one for one. Quotes may change: a translation may use its own quotation marks
// (« », „ “, 「 」) instead of `\"`, but a bare `"` or `'` where the source escaped it is an error.
// A `\u`/`\x` escape may be replaced by the character it stands for.
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'

type Kind = 'n' | 't' | 'r' | '\\' | '"' | "'" | 'u'
const KINDS: Kind[] = ['n', 't', 'r', '\\', '"', "'", 'u']
const NAMES: Record<Kind, string> = {
  n: 'line break (\\n)', t: 'tab (\\t)', r: 'carriage return (\\r)', '\\': 'backslash (\\\\)',
  '"': 'escaped quote (\\")', "'": "escaped apostrophe (\\')", u: 'character escape',
}

const ESCAPE = /\\(?:u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[ntr\\"'])/g

type Counted = { kind: Kind; found: number; expected: number }
const countText = (d: Counted) => `The translation has ${d.found} ${NAMES[d.kind]} where the source has ${d.expected}`
const { messages, report } = defineMessages({
  'extra-escape': { severity: 'error', meaning: 'The translation has more `\\n`, `\\t`, `\\r` or `\\\\` escapes than the source.', text: countText },
  'missing-escape': { severity: 'error', meaning: 'The translation has fewer `\\n`, `\\t`, `\\r` or `\\\\` escapes than the source.', text: countText },
  'unescaped-quote': { severity: 'error', meaning: 'The source escapes a quote (`\\"`, `\\\'`) and the translation has it bare.', text: (d: { quote: string }) => `The source escapes ${d.quote} as \\${d.quote} but the translation has an unescaped ${d.quote}` },
  'unmatched-escaped-quote': { severity: 'error', meaning: 'The translation has an odd number of `\\"` more or fewer than the source: one is left unmatched.', text: countText },
  'missing-character-escape': { severity: 'error', meaning: 'A `\\u`/`\\x` escape of the source is in the translation neither as an escape nor as its character.', text: (d: { escape: string }) => `The escape ${d.escape} of the source is missing in the translation` },
  'added-control-escape': { severity: 'error', meaning: 'The translation adds a `\\u`/`\\x` escape of a control character.', text: (d: { escape: string }) => `The translation adds the control character escape ${d.escape}` },
})

interface Escape { text: string; kind: Kind; index: number }

function escapesOf(text: string): Escape[] {
  const out: Escape[] = []
  for (const m of text.matchAll(ESCAPE)) {
    const c = m[0][1]!
    const kind: Kind = c === 'u' || c === 'x' ? 'u' : (c as Kind)
    out.push({ text: m[0], kind, index: m.index })
  }
  return out
}

/**
 * The character a `\uXXXX`, `\u{...}` or `\xNN` escape stands for; undefined for one past U+10FFFF
 * (`\u{110000}` stands for no character: `String.fromCodePoint` throws on it).
 */
function decode(escape: string): string | undefined {
  const code = parseInt(escape.slice(2).replace(/[{}]/g, ''), 16)
  return code <= 0x10ffff ? String.fromCodePoint(code) : undefined
}

/**
 * A text with its `\u`/`\x` escapes written as the characters they stand for and its other escapes
 * left out: two escapes of a surrogate pair (`\uD83D\uDE00`) become the character they make.
 */
const decoded = (text: string) => text.replace(ESCAPE, (e) => (e[1] === 'u' || e[1] === 'x' ? decode(e) ?? '' : ''))

/** Offsets of `quote` characters not preceded by a backslash escape. */
function bareQuotes(text: string, quote: string): number[] {
  const masked = text.replace(ESCAPE, (m) => ' '.repeat(m.length))
  const out: number[] = []
  for (let i = masked.indexOf(quote); i >= 0; i = masked.indexOf(quote, i + 1)) out.push(i)
  return out
}

/**
 * A text's bare quotes, and whether two of them wrap it whole (its first and last characters,
 * whitespace aside): Android's `"…"` around an entire string. Such a pair is matched with the
 * other text's as a pair, not counted with the quotes inside.
 */
function quoting(text: string, quote: string): { bare: number[]; wrapped: boolean } {
  const bare = bareQuotes(text, quote)
  const wrapped = bare.length >= 2 && bare[0] === text.search(/\S/) && bare[bare.length - 1] === text.trimEnd().length - 1
  return { bare, wrapped }
}

/**
 * How often each character occurs in a text, as `text.split(ch).length - 1` would count it for a
 * character `ch` of one or two code units: one pass, where a split per escaped character of the
 * source was quadratic. Code units are counted alone too (a lone surrogate inside a pair counts).
 */
function occurrences(text: string): Map<string, number> {
  const out = new Map<string, number>()
  const add = (k: string) => out.set(k, (out.get(k) ?? 0) + 1)
  for (let i = 0; i < text.length; i++) {
    const unit = text[i]!
    add(unit)
    const code = text.charCodeAt(i)
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1)
      if (low >= 0xdc00 && low <= 0xdfff) add(unit + text[i + 1]!)
    }
  }
  return out
}

const count = (list: Escape[], kind: Kind) => list.filter((e) => e.kind === kind)

export default definePlugin({
  name: 'escapes',
  description: 'Backslash escapes of the source (\\n, \\t, \\r, \\\\, \\", \\uXXXX) are kept in the translation, and none added.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      kinds: {
        type: 'array',
        items: { enum: KINDS },
        uniqueItems: true,
        default: KINDS,
        description: 'Escapes to check: n, t, r, \\ (backslash), " (quote), \' (apostrophe), u (\\uXXXX and \\xNN).',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const kinds = new Set(options.kinds)
    return {
      check(item): FindingInput[] {
        const translation = item.translation
        if (translation === undefined || translation === '') return []
        const source = escapesOf(item.source)
        const target = escapesOf(translation)
        if (source.length === 0 && target.length === 0) return []
        const findings: FindingInput[] = []

        for (const kind of ['n', 't', 'r', '\\'] as const) {
          if (!kinds.has(kind)) continue
          const s = count(source, kind)
          const t = count(target, kind)
          if (t.length > s.length) {
            const extra = t[s.length]!
            findings.push(report('extra-escape', { kind, found: t.length, expected: s.length }, { span: { start: extra.index, end: extra.index + 2 } }))
          } else if (t.length < s.length) {
            const missing = s[t.length]!
            findings.push(report('missing-escape', { kind, found: t.length, expected: s.length }, { span: { start: missing.index, end: missing.index + 2, in: 'source' } }))
          }
        }

        for (const [kind, quote] of [['"', '"'], ["'", "'"]] as const) {
          if (!kinds.has(kind)) continue
          const s = count(source, kind)
          const t = count(target, kind)
          const bare = s.length ? quoting(translation, quote) : undefined
          if (bare?.bare.length) {
            // As many bare ones as the source has are the source's own (Android's quotes around a
            // whole string, or around a part): only more than that are the translator's. A pair
            // wrapping the whole source stands for the pair wrapping the whole translation, not
            // for two inside it: `"Tap \"Next\""` → `Tippe "Weiter"` unescaped the inner ones.
            const source = quoting(item.source, quote)
            const own = source.wrapped ? source.bare.length - 2 : source.bare.length
            const counted = source.wrapped && bare.wrapped ? bare.bare.slice(1, -1) : bare.bare
            if (counted.length > own) {
              const at = counted[own]!
              findings.push(report('unescaped-quote', { quote }, { span: { start: at, end: at + 1 } }))
              continue
            }
          }
          // Fewer or more: fine when the translator used other quotation marks (none left) or
          // quoted a word more (pairs added); an odd difference leaves a quote unmatched.
          if (kind === '"' && t.length !== 0 && Math.abs(s.length - t.length) % 2 === 1) {
            findings.push(report('unmatched-escaped-quote', { kind, found: t.length, expected: s.length }))
          }
        }

        if (kinds.has('u')) {
          const s = count(source, 'u')
          const t = count(target, 'u')
          const byChar = (list: Escape[]) => {
            const map = new Map<string, Escape[]>()
            for (const e of list) {
              // An escape that stands for no character is kept only as itself.
              const ch = decode(e.text) ?? e.text
              const same = map.get(ch)
              if (same) same.push(e)
              else map.set(ch, [e])
            }
            return map
          }
          const targetByChar = byChar(t)
          // The character an escape stands for, typed or escaped in either form (\u{1F600} or
          // \uD83D\uDE00), keeps it.
          const characters = occurrences(decoded(translation))
          const sourceByChar = byChar(s)
          for (const [ch, list] of sourceByChar) {
            const kept = ch.length > 2 ? (targetByChar.get(ch)?.length ?? 0) : (characters.get(ch) ?? 0)
            if (kept < list.length) {
              findings.push(report('missing-character-escape', { escape: list[0]!.text }, { span: { start: list[0]!.index, end: list[0]!.index + list[0]!.text.length, in: 'source' } }))
            }
          }
          // Added escapes of visible characters or spaces are a way of typing them; added control
          // characters are not.
          for (const [ch, list] of targetByChar) {
            if (!/\p{Cc}/u.test(ch)) continue
            const inSource = sourceByChar.get(ch)?.length ?? 0
            if (list.length > inSource) {
              const e = list[inSource]!
              findings.push(report('added-control-escape', { escape: e.text }, { span: { start: e.index, end: e.index + e.text.length } }))
            }
          }
        }
        return findings
      },
    }
  },
})
