// Plural strings: every plural category the target language distinguishes for whole numbers
// (CLDR, through Intl.PluralRules) has a non-empty form; `other` always. Russian needs one/few/many/other, Arabic
// zero/one/two/few/many/other, Japanese only other. Extra categories are harmless and allowed.
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'
import { isBlank } from '../_shared/blank-text.js'
import { pluralRulesOf } from '../_shared/plural-rules.js'

const forms = (list: string[]) => `Plural form${list.length > 1 ? 's' : ''} ${list.map((c) => `"${c}"`).join(', ')}`
const { messages, report } = defineMessages({
  'missing-plural-forms': { severity: 'error', meaning: 'The translation lacks plural forms the target language needs (not those in `ignore`).', text: (d: { missing: string[]; needs: string }) => `${forms(d.missing)} missing (${d.needs})` },
  'empty-plural-forms': { severity: 'error', meaning: 'Plural forms the target language needs are empty or blank.', text: (d: { empty: string[] }) => `${forms(d.empty)} empty` },
})

const ORDER = ['zero', 'one', 'two', 'few', 'many', 'other']
const byCldrOrder = (a: string, b: string) => ORDER.indexOf(a) - ORDER.indexOf(b)

/**
 * The categories a locale needs, `other` included, in CLDR order: those some whole number up to
 * 1000 falls in. CLDR also has categories only millions or decimals reach (French, Spanish,
 * Italian "many" for 1 000 000; Czech, Lithuanian "many" for fractions) that gettext, Android
 * and most editors do not ask translators for: requiring them would fail correct translations.
 */
function requiredCategories(locale: string): string[] {
  const categories = new Set(['other'])
  // A language without plural rules (in CLDR or the runtime): only `other` is certain.
  const rules = pluralRulesOf(locale)
  if (rules) for (let n = 0; n <= 1000; n++) categories.add(rules.select(n))
  return [...categories].sort(byCldrOrder)
}

export default definePlugin({
  name: 'plurals',
  description: 'A plural string has a non-empty form for every plural category of the target language.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ignore: {
        type: 'array',
        items: { enum: ['zero', 'one', 'two', 'few', 'many'] },
        uniqueItems: true,
        default: [],
        description: 'Categories not to require (a project that never shows them, such as "zero" in Latvian).',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const ignore = new Set<string>(options.ignore)
    const cache = new Map<string, string[]>()
    return {
      check(item): FindingInput[] {
        // Plural forms are known only for plural strings whose translation was fetched.
        if (!item.plurals || item.plurals.length === 0) return []
        const locale = localeOf(item.targetLanguage)
        let required = cache.get(locale)
        if (!required) cache.set(locale, (required = requiredCategories(locale)))
        // Loops, not callbacks made for each string (compiled again after each full GC).
        const forms = new Map<string, string>()
        for (const p of item.plurals) forms.set(p.plural, p.text)
        const missing: typeof required = []
        const empty: typeof required = []
        for (const c of required) {
          if (ignore.has(c)) continue
          if (!forms.has(c)) missing.push(c)
          else if (isBlank(forms.get(c)!)) empty.push(c)
        }
        const findings: FindingInput[] = []
        const needs = `${locale} needs ${required.join(', ')}`
        if (missing.length) {
          findings.push(report('missing-plural-forms', { missing, needs }))
        }
        if (empty.length) {
          findings.push(report('empty-plural-forms', { empty }))
        }
        return findings
      },
    }
  },
})
