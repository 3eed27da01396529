// Length: the translation fits the string's limit (the service's maxLength, or the option), and
// its length compared with the source's stays within generous ratios. Lengths are user-perceived
// characters (grapheme clusters), so "é" written as e + accent, an emoji family or a Devanagari
// conjunct count once. Ratios, as in Okapi CheckMate, are looser for short strings and skipped
// for very short ones; CJK text is naturally far shorter than Latin text, so a dense target is
// never "too short" and a dense source never makes the target "too long".
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { segmentChunked } from '../_shared/segment-chunked.js'
import { isDense, isSpaceless, localeTag } from '../_shared/language-traits.js'

const { messages, report } = defineMessages({
  'over-limit': { severity: 'error', meaning: 'The translation, or a plural form, has more characters (graphemes) than the string\'s limit or `maxLength`.', text: (d: { which: string; length: number; limit: number }) => `${d.which} is ${d.length} characters long; the limit is ${d.limit}` },
  'too-long': { severity: 'warning', meaning: 'The translation is more than `maxRatio` (`maxRatioShort` for a short source) times as long as the source.', text: (d: { ratio: number; target: number; source: number; max: number }) => `The translation is ${d.ratio.toFixed(1)} times as long as the source (${d.target} vs ${d.source} characters; at most ${d.max})` },
  'too-short': { severity: 'warning', meaning: 'The translation is shorter than `minRatio` of the source (not for dense or spaceless scripts).', text: (d: { ratio: number; target: number; source: number; min: number }) => `The translation is only ${Math.round(d.ratio * 100)}% of the source’s length (${d.target} vs ${d.source} characters; at least ${Math.round(d.min * 100)}%)` },
})

/** The first 20 characters of a plural form, for its message: by code point (no emoji cut in half), its line breaks shown as ⏎, `…` only when cut. */
function beginning(text: string): string {
  const points = Array.from(text.slice(0, 40)).slice(0, 20)
  const shown = points.join('')
  return `${shown.replace(/\r\n|[\r\n\u2028\u2029\u0085\v\f]/g, '⏎')}${shown.length < text.length ? '…' : ''}`
}

export default definePlugin({
  name: 'length',
  description: 'The translation respects the length limit and stays within a ratio of the source length.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      maxLength: { type: 'integer', minimum: 0, default: 0, description: 'Longest translation in characters; 0 for none. The string’s own limit from the service applies too (the smaller wins).' },
      maxRatio: { type: 'number', exclusiveMinimum: 0, default: 2, description: 'Longest translation, as a multiple of the source length, for sources longer than shortSource.' },
      maxRatioShort: { type: 'number', exclusiveMinimum: 0, default: 3, description: 'Longest translation as a multiple of the source, for short sources.' },
      minRatio: { type: 'number', minimum: 0, default: 0.3, description: 'Shortest translation as a multiple of the source, for sources longer than shortSource; 0 to disable. Never applied to CJK or Thai targets.' },
      shortSource: { type: 'integer', minimum: 0, default: 30, description: 'Sources of at most this many characters are short: maxRatioShort applies, minRatio does not.' },
      minSource: { type: 'integer', minimum: 0, default: 5, description: 'Sources of at most this many characters are not ratio-checked at all ("OK", "Undo").' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const segmenters = new Map<string, Intl.Segmenter>()
    const segmenterFor = (locale: string): Intl.Segmenter => {
      let s = segmenters.get(locale)
      if (!s) {
        try {
          s = new Intl.Segmenter(locale, { granularity: 'grapheme' })
        } catch {
          s = new Intl.Segmenter('en', { granularity: 'grapheme' })
        }
        segmenters.set(locale, s)
      }
      return s
    }
    /** How many graphemes `text` has, and where its grapheme number `limit` (0-based) starts: one pass, no array of segments. */
    const overLimit = (text: string, locale: string, limit: number): { length: number; start: number } => {
      if (SIMPLE.test(text)) return { length: text.length, start: limit }
      let n = 0
      let start = text.length
      for (const g of segmentChunked(segmenterFor(locale), text)) {
        if (n === limit) start = g.index
        n++
      }
      return { length: n, start }
    }
    // Counting is the common case: no Segment objects for it, and none at all for text in which
    // every code unit is its own grapheme cluster (Latin-1 and common punctuation, no CR, which
    // joins a following LF, and no combining marks, which are outside these ranges).
    const SIMPLE = /^[\n\t\x20-\x7E\xA0-\xFF\u2010-\u2027\u2030-\u205E\u20A0-\u20C0]*$/
    const graphemeCount = (text: string, locale: string): number => {
      if (SIMPLE.test(text)) return text.length
      let n = 0
      for (const _ of segmentChunked(segmenterFor(locale), text)) n++
      return n
    }
    return {
      check(item) {
        const translation = item.translation ?? ''
        const locale = localeTag(item.targetLanguage)
        const findings: FindingInput[] = []

        // A limit that is not a whole number (a local `try` file's 2.5) counts whole characters.
        const limits = [item.maxLength, options.maxLength].map(Math.floor).filter((n) => n > 0)
        if (limits.length) {
          const limit = Math.min(...limits)
          // A form the service sent without its text (null) is empty, not a crash.
          const texts = new Set([translation, ...(item.plurals ?? []).map((p) => p.text ?? '')])
          for (const text of texts) {
            if (text.length <= limit) continue // never more graphemes than code units
            const { length, start } = overLimit(text, locale, limit)
            if (length > limit) {
              const which = text === translation ? 'The translation' : `Plural form "${beginning(text)}"`
              findings.push(report('over-limit', { which, length, limit }, {
                span: text === translation ? { start, end: text.length, in: 'translation' } : undefined,
              }))
            }
          }
        }

        const sourceLength = graphemeCount(item.source.trim(), localeTag(item.sourceLanguage))
        const targetLength = graphemeCount(translation.trim(), locale)
        if (sourceLength <= options.minSource || !targetLength) return findings
        const ratio = targetLength / sourceLength
        const short = sourceLength <= options.shortSource
        const maxRatio = short ? options.maxRatioShort : options.maxRatio
        const denseSource = isDense(item.sourceLanguage, item.source)
        const denseTarget = isDense(item.targetLanguage, translation)
        if (ratio > maxRatio && !(denseSource && !denseTarget)) {
          findings.push(report('too-long', { ratio, target: targetLength, source: sourceLength, max: maxRatio }))
        }
        const compactTarget = denseTarget || isSpaceless(item.targetLanguage, translation)
        if (!short && options.minRatio > 0 && ratio < options.minRatio && !compactTarget) {
          findings.push(report('too-short', { ratio, target: targetLength, source: sourceLength, min: options.minRatio }))
        }
        return findings
      },
    }
  },
})
