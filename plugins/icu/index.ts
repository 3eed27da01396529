// ICU MessageFormat: the translation parses, uses the source's arguments, and each plural or
// selectordinal has the categories the target language needs. Applies only when the source is
// ICU with at least one argument; plain text is left alone.
import { TYPE, type PluralElement, type SelectElement } from '@formatjs/icu-messageformat-parser'
import { defineMessages, definePlugin, type FindingInput, type Item } from '../../src/engine/types.js'
import { icuArgumentNames, icuPluralsAndSelects, parseIcu, usesIcuSyntax } from '../_shared/icu-message.js'
import { localeTag } from '../_shared/language-traits.js'
import { pluralRulesOf } from '../_shared/plural-rules.js'
import { argumentTypeChanges, icuArgumentTypes } from './argument-types.js'
import { rewriteIcu4jArguments } from './icu4j-arguments.js'

// A category is required when an integer in this range falls into it. Categories reached only by
// fractions (Lithuanian `many`) or by millions (French, Spanish, Italian `many`) are optional:
// translators rarely write them and a message without them still formats through `other`.
const SAMPLE_LIMIT = 1000

const CLDR_ORDER = ['zero', 'one', 'two', 'few', 'many', 'other']

const { messages, report } = defineMessages({
  'invalid-icu': { severity: 'error', meaning: 'The translation does not parse as ICU MessageFormat.', text: (d: { error: string; hint: string }) => `The translation is not valid ICU MessageFormat: ${d.error}${d.hint}` },
  'missing-argument': { severity: 'error', meaning: 'An argument of the source is not in the translation.', text: (d: { name: string; hint: string }) => `Missing ICU argument {${d.name}}${d.hint}` },
  'extra-argument': { severity: 'error', meaning: 'The translation has an argument the source does not have.', text: (d: { name: string }) => `ICU argument {${d.name}} is not in the source` },
  'argument-type-changed': {
    severity: ['error', 'warning'],
    meaning: 'An argument has another type or style in the translation (`number` for `plural`); a warning when only a date or time style, or an ICU4J rule set (`%spellout-ordinal`) of a spellout, ordinal or duration, changed.',
    text: (d: { name: string; source: string[]; translation: string[] }) => {
      const list = (xs: string[]) => xs.join(' and ') || `{${d.name}} as well`
      return `ICU argument {${d.name}} is ${list(d.source)} in the source but ${list(d.translation)} in the translation`
    },
  },
  'unknown-select-key': { severity: 'error', meaning: 'A select of the translation has a key the source\'s select does not have (never chosen).', text: (d: { name: string; keys: string[] }) => `Select {${d.name}} has keys the source does not have: ${d.keys.join(', ')}` },
  'missing-plural-categories': { severity: 'error', meaning: 'A plural or selectordinal lacks categories the target language needs (with `checkPluralCategories`).', text: (d: { kind: string; name: string; locale: string; missing: string[] }) => `${d.kind} {${d.name}} lacks the categories ${d.locale} needs: ${d.missing.join(', ')}` },
})

interface CategoryNeeds { categories: string[]; samples: Map<string, number[]> }

function categoryNeeds(locale: string, type: 'cardinal' | 'ordinal'): CategoryNeeds {
  // A language without plural rules (in CLDR or the runtime) has CLDR's root rules: only `other`.
  const rules = pluralRulesOf(locale, type)
  const samples = new Map<string, number[]>()
  for (let n = 0; n <= SAMPLE_LIMIT; n++) {
    const c = rules ? rules.select(n) : 'other'
    const list = samples.get(c)
    if (list) list.push(n)
    else samples.set(c, [n])
  }
  const categories = (rules ? rules.resolvedOptions().pluralCategories : ['other'])
    .filter((c) => c === 'other' || samples.has(c))
    .sort((a, b) => CLDR_ORDER.indexOf(a) - CLDR_ORDER.indexOf(b))
  return { categories, samples }
}

function spanOf(el: { location?: { start: { offset: number }; end: { offset: number } } }) {
  return el.location ? { start: el.location.start.offset, end: el.location.end.offset, in: 'translation' as const } : undefined
}

export default definePlugin({
  name: 'icu',
  description: 'ICU MessageFormat translations parse, keep the source’s arguments and have the plural categories the target language needs.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      checkPluralCategories: { type: 'boolean', default: true, description: 'Require the plural categories of the target language.' },
      checkSelectKeys: { type: 'boolean', default: true, description: 'Report select keys the source does not have (renamed or misspelt, such as `femal`): such a branch is never chosen.' },
      simpleArguments: { type: 'boolean', default: false, description: 'Also check sources whose only ICU syntax is simple `{name}` arguments. Off by default: the placeholders check covers those, and ICU apostrophe quoting would flag correct elisions such as French `l’{item}` written with a straight apostrophe.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const needsCache = new Map<string, CategoryNeeds>()
    const needsFor = (locale: string, type: 'cardinal' | 'ordinal') => {
      const k = `${locale}/${type}`
      let n = needsCache.get(k)
      if (!n) needsCache.set(k, (n = categoryNeeds(locale, type)))
      return n
    }
    return {
      check(item: Item) {
        if (!item.source.includes('{')) return []
        const sourceIcu4j = rewriteIcu4jArguments(item.source)
        const source = parseIcu(sourceIcu4j.text)
        if (!source.ok) return []
        const sourceNames = icuArgumentNames(source.elements)
        if (!sourceNames.size) return []
        if (!options.simpleArguments && !usesIcuSyntax(source.elements) && !sourceIcu4j.shapes.size) return []
        const translation = item.translation ?? ''
        const targetIcu4j = rewriteIcu4jArguments(translation)
        const target = parseIcu(targetIcu4j.text)
        const quoteHint = /'[{}]/.test(translation) ? ' (an apostrophe before a brace quotes it in ICU: write ’ or \'\')' : ''
        if (!target.ok) {
          return [report('invalid-icu', { error: target.message, hint: quoteHint }, { span: { start: target.offset, end: Math.min(translation.length, target.offset + ((translation.codePointAt(target.offset) ?? 0) > 0xffff ? 2 : 1)), in: 'translation' } })]
        }
        const findings: FindingInput[] = []
        const targetNames = icuArgumentNames(target.elements)
        for (const name of sourceNames) if (!targetNames.has(name)) findings.push(report('missing-argument', { name, hint: quoteHint }))
        for (const name of targetNames) if (!sourceNames.has(name)) findings.push(report('extra-argument', { name }))

        const locale = localeTag(item.targetLanguage)
        const singleCategory = needsFor(locale, 'cardinal').categories.length === 1
        for (const c of argumentTypeChanges(icuArgumentTypes(source.elements, sourceIcu4j.shapes), icuArgumentTypes(target.elements, targetIcu4j.shapes), singleCategory)) {
          findings.push(report('argument-type-changed', { name: c.name, source: c.source, translation: c.translation }, { severity: c.severity }))
        }
        const sourceSelects = icuPluralsAndSelects(source.elements)
        let sourceKeys: Map<string, Set<string>> | undefined
        for (const el of icuPluralsAndSelects(target.elements)) {
          if (el.type === TYPE.plural && options.checkPluralCategories) {
            const f = missingCategories(el, locale, needsFor)
            if (f) findings.push(f)
          } else if (el.type === TYPE.select && options.checkSelectKeys) {
            const known = (sourceKeys ??= selectKeys(sourceSelects)).get(el.value) ?? new Set<string>()
            if (!known.size) continue
            const unknown = Object.keys(el.options).filter((k) => !known.has(k))
            // A key the source does not have is never chosen: a renamed or misspelt key (`femal`).
            if (unknown.length) findings.push(report('unknown-select-key', { name: el.value, keys: unknown }, { span: spanOf(el) }))
          }
        }
        return findings
      },
    }
  },
})

/** The keys of the source's selects, by argument name (one pass, not a search per target select). */
function selectKeys(elements: (PluralElement | SelectElement)[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  for (const s of elements) {
    if (s.type !== TYPE.select) continue
    let keys = out.get(s.value)
    if (!keys) out.set(s.value, (keys = new Set()))
    for (const k of Object.keys(s.options)) keys.add(k)
  }
  return out
}

function missingCategories(el: PluralElement, locale: string, needsFor: (l: string, t: 'cardinal' | 'ordinal') => CategoryNeeds): FindingInput | undefined {
  const type = el.pluralType === 'ordinal' ? 'ordinal' : 'cardinal'
  const needs = needsFor(locale, type)
  const present = new Set(Object.keys(el.options))
  const missing = needs.categories.filter((c) => {
    if (present.has(c)) return false
    // `=1` stands in for `one` where `one` means exactly 1 (English, German), and so on.
    const samples = needs.samples.get(c) ?? []
    return !(samples.length && samples.every((n) => present.has(`=${n + el.offset}`)))
  })
  if (!missing.length) return undefined
  const kind = type === 'ordinal' ? 'selectordinal' : 'plural'
  return report('missing-plural-categories', { kind, name: el.value, locale, missing }, { span: spanOf(el) })
}
