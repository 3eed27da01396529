// Punctuation: the translation ends like the source (a question stays a question) in the target
// script's own marks, Spanish questions and exclamations open with ¿ ¡, and spacing before
// punctuation follows the target language: French puts a (narrow) no-break space before
// `: ; ! ?`, other languages put none before `. , : ; ! ?`. Languages that drop the final mark
// (Thai, Lao, Khmer, Myanmar; Chinese and Japanese UI text) are not asked for one.
import { defineMessages, definePlugin, type FindingInput, type Item } from '../../src/engine/types.js'
import { baseLanguage, regionOf } from '../_shared/language-traits.js'
import { findTags } from '../_shared/markup-tags.js'
import { maskSpans } from '../_shared/mask-spans.js'
import { findPlaceholders } from '../_shared/placeholder-patterns.js'
import { findUrls } from '../_shared/url-patterns.js'

type EndClass = 'period' | 'question' | 'exclamation' | 'colon' | 'semicolon' | 'comma' | 'ellipsis' | 'none'

// What may follow the final mark: closing quotes and brackets, spaces, and tags; and the invisible
// characters RTL and other text carries at its end: direction marks (LRM, RLM, ALM), embeddings,
// overrides and isolates (an Arabic text wrapped in RLI…PDI), zero-width spaces and joiners, the
// word joiner (U+FEFF is in `\s`).
const CLOSER = /[\s"'»”’›」』】）)\]］〕〉》\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\u061c]/u
const TAG = /^<\/?[A-Za-z][^<>]*>$/
export const MARKS: [RegExp, EndClass[]][] = [
  [/(?:\.\.\.|…|⋯|。。。|．．．)$/u, ['ellipsis']],
  [/[?？؟⸮፧\u037e][!！]?$|[!！][?？؟]$/u, ['question']],
  [/[!！՜]$/u, ['exclamation']],
  [/[.。．｡।॥۔።။។།༎܂։]$/u, ['period']],
  [/[:：፥]$/u, ['colon']],
  [/[;；؛፤·\u0387]$/u, ['semicolon']],
  [/[,，、،፣]$/u, ['comma']],
]

const DROPS_FINAL_MARK = new Set(['th', 'lo', 'km', 'my', 'bo', 'dz'])
const CJK = new Set(['zh', 'ja', 'yue', 'wuu'])
const SPANISH = new Set(['es', 'ast'])
const NO_SPACE_RULES = new Set(['fr', 'th', 'lo', 'km', 'my', 'bo', 'br'])

const NAMES: Record<EndClass, string> = {
  period: 'a full stop', question: 'a question mark', exclamation: 'an exclamation mark', colon: 'a colon',
  semicolon: 'a semicolon', comma: 'a comma', ellipsis: 'an ellipsis', none: 'no punctuation',
}

/**
 * The classes the text's final punctuation may stand for, after closing quotes, brackets, tags and
 * invisible format characters (direction marks and isolates, zero-width characters).
 */
export function endClasses(text: string, language: string): EndClass[] {
  // Closers and tags are taken off the end, from the end (a regular expression anchored at the
  // end tries every position of the text: a hot spot, bench).
  let end = text.length
  for (let before = -1; before !== end; ) {
    before = end
    while (end > 0 && CLOSER.test(text[end - 1]!)) end--
    if (end > 0 && text[end - 1] === '>') {
      const open = text.lastIndexOf('<', end - 1)
      if (open !== -1 && TAG.test(text.slice(open, end))) end = open
    }
  }
  // Every mark below is at most three characters long.
  const t = text.slice(Math.max(0, end - 3), end)
  // Greek writes the question mark as `;` (U+037E, canonically the same character).
  if (language === 'el' && /;$/.test(t)) return ['question', 'semicolon']
  // Armenian ends sentences with `։`, often typed as `:`.
  if (language === 'hy' && /[:։]$/.test(t)) return ['period', 'colon']
  for (const [re, classes] of MARKS) if (re.test(t)) return classes
  return ['none']
}

/** Placeholders and URLs blanked out, so their `:` and `?` are not punctuation. */
function maskCode(text: string): string {
  return maskSpans(text, [...findPlaceholders(text), ...findUrls(text)])
}

/** Character references: the `;` of `&amp;` or `&#160;` is not punctuation. */
const CHARACTER_REFERENCE = /&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/gi

/** Also tags and character references, for the spacing rules (`<a href="x">`, `&amp;` hold no punctuation). */
function maskMarkup(text: string, codeMasked = maskCode(text)): string {
  const references = text.includes('&') ? [...text.matchAll(CHARACTER_REFERENCE)].map((m) => ({ start: m.index, end: m.index + m[0].length })) : []
  return maskSpans(codeMasked, [...findTags(text), ...references])
}

const frenchRules = new Map<string, RegExp>()
/** A mark of `marks` right after a letter, digit or closer: French wants a space there. */
function frenchSpacing(marks: string): RegExp {
  let re = frenchRules.get(marks)
  if (!re) {
    re = new RegExp(`(?<=[\\p{L}\\p{N}»”’)\\]])[${marks}](?=[\\s!?»”"'’)]|$)`, 'gu')
    frenchRules.set(marks, re)
  }
  return re
}

const { messages, report } = defineMessages({
  'end-punctuation': {
    severity: ['error', 'warning'],
    meaning: 'The translation ends with another kind of mark than the source, in the target script\'s marks (with `endPunctuation`); a warning when an exclamation mark is involved (tone).',
    text: (d: { source: string; translation: string }) => `The source ends with ${d.source}, the translation with ${d.translation}`,
  },
  'spanish-question-mark': { severity: 'error', meaning: 'A Spanish question does not open with ¿ (with `spanishOpeningMarks`).', text: 'Spanish questions open with ¿' },
  'spanish-exclamation-mark': { severity: 'error', meaning: 'A Spanish exclamation does not open with ¡ (with `spanishOpeningMarks`).', text: 'Spanish exclamations open with ¡' },
  'french-spacing': { severity: 'warning', meaning: 'French (`frenchSpacing: required`) has no no-break space before `: ; ! ?` (only `:` in Canada, none in Switzerland).', text: (d: { mark: string }) => `French puts a no-break space before “${d.mark}”` },
  'space-before-punctuation': { severity: 'warning', meaning: 'A space stands before `. , : ; ! ?` where the language does not write one and the source does not either (with `spaceBeforePunctuation`).', text: (d: { mark: string }) => `Space before “${d.mark}”` },
})

export default definePlugin({
  name: 'punctuation',
  description: 'Ending punctuation matches the source in the target script, with the target language’s spacing rules.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      endPunctuation: { type: 'boolean', default: true, description: 'The translation ends with the same kind of punctuation as the source.' },
      spanishOpeningMarks: { type: 'boolean', default: true, description: 'Spanish questions and exclamations open with ¿ and ¡.' },
      frenchSpacing: {
        enum: ['required', 'optional'],
        default: 'required',
        description: 'French: require a space (no-break or narrow no-break) before : ; ! ? (only before : for fr-CA; never required for fr-CH). Its presence is never flagged.',
      },
      spaceBeforePunctuation: { type: 'boolean', default: true, description: 'Outside French, flag a space before . , : ; ! ? that the source does not have.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    return {
      check(item: Item) {
        const translation = item.translation ?? ''
        if (!translation.trim() || !/\p{L}/u.test(item.source)) return []
        const findings: FindingInput[] = []
        const target = baseLanguage(item.targetLanguage)
        const source = baseLanguage(item.sourceLanguage)
        const codeMasked = maskCode(translation)
        const sc = endClasses(maskCode(item.source), source)
        const tc = endClasses(codeMasked, target)

        if (options.endPunctuation && !sc.some((c) => tc.includes(c))) {
          const s = sc[0]!
          const t = tc[0]!
          const lenient =
            (DROPS_FINAL_MARK.has(target) && t === 'none' && ['period', 'question', 'exclamation'].includes(s)) ||
            (CJK.has(target) && ((['period', 'exclamation'].includes(s) && ['none', 'period'].includes(t)) || (s === 'none' && t === 'period'))) ||
            (target === 'hy' && ((s === 'question' && /՞/.test(translation)) || (s === 'exclamation' && /՜/.test(translation))))
          if (!lenient) {
            const tone = s === 'exclamation' || t === 'exclamation'
            findings.push(report('end-punctuation', { source: NAMES[s]!, translation: NAMES[t]! }, { severity: tone ? 'warning' : 'error' }))
          }
        }

        if (options.spanishOpeningMarks && SPANISH.has(target)) {
          if (tc.includes('question') && !translation.includes('¿')) findings.push(report('spanish-question-mark'))
          if (tc.includes('exclamation') && !translation.includes('¡')) findings.push(report('spanish-exclamation-mark'))
        }

        // A text ending in a placeholder ("Error: %s") ends in no punctuation: the placeholder may
        // move ("%s のエラー") and the mark before it is not final.
        const masked = maskMarkup(translation, codeMasked)
        if (target === 'fr' && options.frenchSpacing === 'required') {
          const region = regionOf(item.targetLanguage)
          const marks = region === 'CH' ? '' : region === 'CA' ? ':' : ':;!?'
          if (marks) {
            const re = frenchSpacing(marks)
            for (const m of masked.matchAll(re)) {
              findings.push(report('french-spacing', { mark: m[0] }, { span: { start: m.index, end: m.index + 1, in: 'translation' } }))
            }
          }
        } else if (options.spaceBeforePunctuation && !NO_SPACE_RULES.has(target)) {
          const re = /(?<=[\p{L}\p{N}])[ \u00a0\u202f\u2009]+([.,:;!?])(?=\s|$|["'»”’)\]])/gu
          const inSource = new Set([...maskMarkup(item.source).matchAll(re)].map((m) => m[1]))
          for (const m of masked.matchAll(re)) {
            if (inSource.has(m[1])) continue
            findings.push(report('space-before-punctuation', { mark: m[1]! }, { span: { start: m.index, end: m.index + m[0].length - 1, in: 'translation' } }))
          }
        }
        return findings
      },
    }
  },
})
