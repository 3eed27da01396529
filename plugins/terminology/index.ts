// Glossary terms: where the source uses a term, the translation uses its approved translation
// and none of the forbidden ones. Terms come inline or from a CSV or TBX file next to the
// pipeline. Matching tolerates inflection by default (German "Datei" accepts "Dateien", Russian
// "папка" accepts "папку"), compounds and attached articles (German "Dateiname", Arabic "الملف"),
// and uses substring matching in scripts written without spaces.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { defineMessages, definePlugin, type FindingInput, type Language } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'
import { hasSpacelessScript, isSpacelessLocale } from '../_shared/language-scripts.js'
import { escapeRegExp } from '../_shared/escape-regexp.js'
import { maskNonTranslatables } from '../_shared/non-translatables.js'
import type { GlossaryEntry } from './glossary-entry.js'
import { parseGlossaryCsv } from './parse-glossary-csv.js'
import { parseTbx } from './parse-tbx.js'

type Inflection = 'exact' | 'prefix' | 'stem'

const quoted = (list: string[]) => list.map((t) => `"${t}"`).join(' or ')
const { messages, report } = defineMessages({
  'term-not-translated': { severity: 'error', meaning: 'A glossary term of the source is not translated as the glossary says.', text: (d: { term: string; targets: string[] }) => `The term "${d.term}" should be translated as ${quoted(d.targets)}` },
  'forbidden-term': { severity: 'error', meaning: 'The translation uses a term the glossary forbids (with the one to use instead, when it gives one).', text: (d: { found: string; instead: string[] }) => `"${d.found}" is a forbidden term${d.instead.length ? ` (use ${quoted(d.instead)})` : ''}` },
})

interface InlineTerm {
  source?: string
  target?: string | string[]
  forbidden?: string[]
  language?: string
  sourceLanguage?: string
  caseSensitive?: boolean
}

/** Languages that glue words into compounds or attach articles and prepositions to them. */
const AFFIXING = new Set(['de', 'nl', 'sv', 'da', 'nb', 'nn', 'no', 'fi', 'is', 'et', 'hu', 'ar', 'he', 'iw', 'ka'])
const WORD = '[\\p{L}\\p{M}\\p{N}_]'

/**
 * Invisible characters a term may be written with and still be the term: the soft hyphen (a
 * hyphenation point, "Dateiverwal\u00adtung"), zero-width space, non-joiner, joiner and word joiner.
 * Matching ignores them, in the texts and in the terms.
 */
const INVISIBLE = /[\u00ad\u200b-\u200d\u2060]/
const INVISIBLES = /[\u00ad\u200b-\u200d\u2060]/g
const withoutInvisibles = (term: string) => term.replace(INVISIBLES, '') || term

/**
 * The text without its invisible characters, and a map from an offset of that text back to the
 * text's (the first character of a match, and one past its last): the text itself when it has none.
 */
function visible(text: string): { text: string; at: (i: number) => number; end: (i: number) => number } {
  if (!INVISIBLE.test(text)) return { text, at: (i) => i, end: (i) => i }
  const origin: number[] = []
  let out = ''
  let from = 0
  for (const m of text.matchAll(INVISIBLES)) {
    for (let i = from; i < m.index; i++) origin.push(i)
    out += text.slice(from, m.index)
    from = m.index + 1
  }
  for (let i = from; i < text.length; i++) origin.push(i)
  out += text.slice(from)
  return { text: out, at: (i) => origin[i] ?? text.length, end: (i) => (i > 0 ? origin[i - 1]! + 1 : 0) }
}

/** The stem of a word: its last letters may change with case and number. */
function stem(word: string): string {
  const chars = [...word]
  if (!/\p{L}$/u.test(word)) return word
  const drop = chars.length >= 7 ? 2 : chars.length >= 4 ? 1 : 0
  return chars.slice(0, chars.length - drop).join('')
}

/**
 * A pattern for a term in a translation, as tolerant as the inflection mode and language ask;
 * `inWords`: in compounding and affixing languages the term may also end or sit inside a word.
 */
function targetPattern(written: string, mode: Inflection, locale: string, caseSensitive: boolean, inWords: boolean): RegExp {
  const term = withoutInvisibles(written)
  const flags = caseSensitive ? 'gu' : 'giu'
  if (isSpacelessLocale(locale) || hasSpacelessScript(term)) return new RegExp(escapeRegExp(term), flags)
  const words = term.trim().split(/\s+/u)
  const body = words.map((w) => {
    if (mode === 'exact') return escapeRegExp(w)
    return `${escapeRegExp(mode === 'stem' ? stem(w) : w)}[\\p{L}\\p{M}]*`
  }).join('\\s+')
  const start = inWords && mode !== 'exact' && AFFIXING.has(locale.split('-')[0]!) ? '' : `(?<!${WORD})`
  const end = mode === 'exact' ? `(?!${WORD})` : ''
  return new RegExp(`${start}${body}${end}`, flags)
}

/** A pattern for a term in the source: the whole word, plus an English plural or possessive. */
function sourcePattern(written: string, caseSensitive: boolean): RegExp {
  const term = withoutInvisibles(written)
  const flags = caseSensitive ? 'gu' : 'giu'
  if (hasSpacelessScript(term)) return new RegExp(escapeRegExp(term), flags)
  const body = term.trim().split(/\s+/u).map(escapeRegExp).join('\\s+')
  const suffix = /[a-z]$/i.test(term) ? "(?:s|es|'s|’s)?" : ''
  return new RegExp(`(?<!${WORD})${body}${suffix}(?!${WORD})`, flags)
}

/** The codes a language may be named by in a glossary, lower-case, `-` separated. */
function codesOf(language: Language): string[] {
  return [localeOf(language), language.id, language.locale, language.editorCode, language.twoLettersCode, language.threeLettersCode]
    .filter((c): c is string => !!c)
    .map((c) => c.toLowerCase().replace(/_/g, '-'))
}

/**
 * Does a glossary's language code cover this language? `de` covers `de-AT`; `de-DE` covers a
 * target named just `de`; `pt-BR` does not cover `pt-PT`.
 */
function covers(code: string | undefined, language: Language): boolean {
  if (!code) return true
  const want = code.toLowerCase().replace(/_/g, '-')
  const codes = codesOf(language)
  // A regional code (de-DE) covers a target named by its language alone (de), not another region
  // of it: pt-PT is also named `pt` (its two-letter code), which must not let pt-BR in.
  const bare = !codes.some((c) => c.includes('-'))
  return codes.some((c) => c === want || c.startsWith(`${want}-`) || (bare && want.startsWith(`${c}-`)))
}

async function loadFile(file: string, dir: string): Promise<GlossaryEntry[]> {
  const full = path.resolve(dir, file)
  let text: string
  try {
    text = await readFile(full, 'utf8')
  } catch (error) {
    throw new Error(`terminology: cannot read the glossary ${full}: ${(error as Error).message}`)
  }
  try {
    if (/\.(tbx|xml)$/i.test(file) || /^\s*(<\?xml|<martif|<tbx)/i.test(text)) return parseTbx(text)
    return parseGlossaryCsv(text, /\.tsv$/i.test(file) ? '\t' : undefined)
  } catch (error) {
    throw new Error(`terminology: cannot parse the glossary ${full}: ${(error as Error).message}`)
  }
}

/**
 * Is [start, end) inside one of the spans? Spans sorted by start with the furthest end so far:
 * a binary search per question, where testing every span per match was quadratic.
 */
function containment(spans: Array<[number, number]>): (start: number, end: number) => boolean {
  const sorted = [...spans].sort((a, b) => a[0] - b[0])
  const starts = sorted.map(([s]) => s)
  const reach: number[] = []
  for (const [, e] of sorted) reach.push(Math.max(e, reach[reach.length - 1] ?? -Infinity))
  return (start, end) => {
    let lo = 0
    let hi = starts.length // first span starting after `start`
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (starts[mid]! <= start) lo = mid + 1
      else hi = mid
    }
    return lo > 0 && reach[lo - 1]! >= end
  }
}

interface Rule extends GlossaryEntry {
  sourceRe?: RegExp
}

export default definePlugin({
  name: 'terminology',
  description: 'Glossary terms in the source are translated with their approved terms, and forbidden terms are not used.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      terms: {
        type: 'array',
        default: [],
        description: 'Glossary entries written in the pipeline.',
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            source: { type: 'string', minLength: 1, description: 'The source term.' },
            target: {
              anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 }],
              description: 'The approved translation, or several accepted ones.',
            },
            forbidden: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Translations that must not be used.' },
            language: { type: 'string', description: 'Target language code (`de`, `pt-BR`); every language when left out.' },
            sourceLanguage: { type: 'string', description: 'Source language code; any when left out.' },
            caseSensitive: { type: 'boolean', description: 'Match this term with case; overrides the plugin option.' },
          },
          anyOf: [{ required: ['source'] }, { required: ['forbidden'] }],
        },
      },
      file: { type: 'string', minLength: 1, description: 'A CSV or TBX glossary, relative to the pipeline file.' },
      inflection: {
        enum: ['exact', 'prefix', 'stem'], default: 'stem',
        description: 'How a target term may be inflected: exact word, word plus endings, or stem plus endings.',
      },
      caseSensitive: { type: 'boolean', default: false, description: 'Match terms with case.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  async create(options, context) {
    const entries: GlossaryEntry[] = options.terms.map((t) => ({
      source: t.source,
      sourceLanguage: t.sourceLanguage,
      language: t.language,
      targets: t.target === undefined ? [] : Array.isArray(t.target) ? t.target : [t.target],
      forbidden: t.forbidden ?? [],
      caseSensitive: t.caseSensitive,
    }))
    if (options.file) entries.push(...(await loadFile(options.file, context.pipelineDir)))
    const rules: Rule[] = entries.map((e) => ({
      ...e,
      sourceRe: e.source ? sourcePattern(e.source, e.caseSensitive ?? options.caseSensitive) : undefined,
    }))
    // Target patterns depend on the target language; compiled on first use, then kept.
    const patterns = new Map<string, RegExp>()
    const patternFor = (term: string, mode: Inflection, locale: string, caseSensitive: boolean, inWords: boolean) => {
      const key = `${mode}\u0000${locale}\u0000${caseSensitive}\u0000${inWords}\u0000${term}`
      let re = patterns.get(key)
      if (!re) patterns.set(key, (re = targetPattern(term, mode, locale, caseSensitive, inWords)))
      return re
    }

    return {
      check(item): FindingInput[] {
        const translation = item.translation
        if (!translation || rules.length === 0) return []
        const locale = localeOf(item.targetLanguage)
        // Terms inside placeholders, tags and URLs (`{file}`, `/files/`) are not prose. Invisible
        // characters are taken out (spans map back to the texts).
        const sourceSeen = visible(maskNonTranslatables(item.source))
        const targetSeen = visible(maskNonTranslatables(translation))
        const source = sourceSeen.text
        const text = targetSeen.text
        const findings: FindingInput[] = []
        // Rules for the same source term (homonyms, several TBX concepts) share their targets.
        const required = new Map<string, { term: string; span: { start: number; end: number }; targets: Set<string>; caseSensitive: boolean }>()
        const forbidden: { term: string; instead: string[]; caseSensitive: boolean }[] = []
        for (const rule of rules) {
          if (!covers(rule.language, item.targetLanguage) || !covers(rule.sourceLanguage, item.sourceLanguage)) continue
          const caseSensitive = rule.caseSensitive ?? options.caseSensitive
          if (rule.sourceRe) {
            rule.sourceRe.lastIndex = 0
            const m = rule.sourceRe.exec(source)
            if (!m) continue
            if (rule.targets.length) {
              const key = caseSensitive ? rule.source! : rule.source!.toLowerCase()
              const known = required.get(key)
              if (known) rule.targets.forEach((t) => known.targets.add(t))
              else required.set(key, { term: rule.source!, span: { start: sourceSeen.at(m.index), end: sourceSeen.end(m.index + m[0].length) }, targets: new Set(rule.targets), caseSensitive })
            }
          }
          for (const term of rule.forbidden) forbidden.push({ term, instead: rule.targets, caseSensitive })
        }

        const targetSpans: [number, number][] = []
        for (const r of required.values()) {
          let found = false
          for (const target of r.targets) {
            const re = patternFor(target, options.inflection, locale, r.caseSensitive, true)
            for (const m of text.matchAll(re)) {
              found = true
              targetSpans.push([m.index, m.index + m[0].length])
            }
          }
          if (!found) {
            findings.push(report('term-not-translated', { term: r.term, targets: [...r.targets] }, { span: { ...r.span, in: 'source' } }))
          }
        }
        const reported = new Set<string>()
        let inTarget: ((start: number, end: number) => boolean) | undefined
        for (const f of forbidden) {
          // Forbidden terms: endings tolerated, but only at a word start (no "Ordner" in "Unterordner").
          const re = patternFor(f.term, options.inflection === 'exact' ? 'exact' : 'prefix', locale, f.caseSensitive, false)
          for (const m of text.matchAll(re)) {
            const start = m.index
            const end = start + m[0].length
            // Part of an approved term ("Dateiordner" approved, "Ordner" forbidden): fine.
            if ((inTarget ??= containment(targetSpans))(start, end)) continue
            const key = `${start}:${end}`
            if (reported.has(key)) continue
            reported.add(key)
            findings.push(report('forbidden-term', { found: m[0], instead: f.instead }, { span: { start: targetSeen.at(start), end: targetSeen.end(end) } }))
          }
        }
        return findings
      },
    }
  },
})
