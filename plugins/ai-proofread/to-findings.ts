// From the model's MQM verdict to findings: severity by the `errorAt` threshold, the span found by
// searching the erroneous text in the translation, the fix as the suggestion.
import { defineMessages, type FindingInput, type Severity, type Span } from '../../src/engine/types.js'
import { MQM_SEVERITIES, type MqmCategory, type MqmSeverity, type Verdict } from './prompt.js'

type ModelError = { category: MqmCategory; severity: MqmSeverity; explanation: string }
const mqm = (d: ModelError) => `${categoryLabel(d.category)} (${d.severity}): ${d.explanation}`
const BY_ERRORAT = ['error', 'warning', 'info'] as const
/** One code per MQM category: the model's error of that category, its severity by `errorAt`. */
export const { messages, report } = defineMessages({
  accuracy: { severity: BY_ERRORAT, meaning: 'The model found an accuracy error (mistranslation, omission, addition); error, warning or info by `errorAt`.', text: mqm },
  fluency: { severity: BY_ERRORAT, meaning: 'The model found a fluency error (grammar, spelling, punctuation); error, warning or info by `errorAt`.', text: mqm },
  terminology: { severity: BY_ERRORAT, meaning: 'The model found a terminology error (a glossary term not followed); error, warning or info by `errorAt`.', text: mqm },
  style: { severity: BY_ERRORAT, meaning: 'The model found a style error (register, awkward wording); error, warning or info by `errorAt`.', text: mqm },
  'locale-conventions': { severity: BY_ERRORAT, meaning: 'The model found a locale convention error (dates, numbers, quotes); error, warning or info by `errorAt`.', text: mqm },
  'design-markup': { severity: BY_ERRORAT, meaning: 'The model found a design or markup error (tags, placeholders, length); error, warning or info by `errorAt`.', text: mqm },
  'below-min-score': { severity: 'error', meaning: 'The model\'s score of the translation is below `minScore`.', text: (d: { score: number; min: number }) => `score ${d.score} is below the minimum of ${d.min}` },
  'no-verdict': { severity: 'error', meaning: 'The model gave no verdict for the string, asked in its batch and then alone twice.', text: (d: { attempts: number }) => `no verdict: the model gave none for this string in ${d.attempts} attempts` },
  'too-long-to-review': { severity: 'error', meaning: 'The string was not sent: alone it would exceed `maxInputTokens` (less the system prompt and the instructions).', text: (d: { tokens: number; max: number }) => `not reviewed: the string is too long to review by AI (about ${d.tokens} tokens; a request under maxInputTokens leaves room for ${d.max})` },
})

/** At or above the threshold: error; one level below: warning; further below: info. */
export function severityFor(mqm: MqmSeverity, errorAt: MqmSeverity): Severity {
  const below = MQM_SEVERITIES.indexOf(errorAt) - MQM_SEVERITIES.indexOf(mqm)
  return below <= 0 ? 'error' : below === 1 ? 'warning' : 'info'
}

export function categoryLabel(category: MqmCategory): string {
  switch (category) {
    case 'accuracy': return 'accuracy'
    case 'fluency': return 'fluency'
    case 'terminology': return 'terminology'
    case 'style': return 'style'
    case 'locale-conventions': return 'locale conventions'
    case 'design-markup': return 'design/markup'
    default: {
      const never: never = category
      return String(never)
    }
  }
}

const escapeRegExp = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')
const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Where the model's span text is in the translation: exact first, then ignoring case; whole characters. */
export function locateSpan(translation: string, text: string): Span | undefined {
  if (!text) return undefined
  let start = translation.indexOf(text)
  let end = start + text.length
  if (start < 0) {
    // The original text searched, not a lower-cased copy: lower-casing can change lengths (İ), and offsets with it.
    const match = new RegExp(escapeRegExp(text), 'iu').exec(translation)
    if (!match) return undefined
    start = match.index
    end = start + match[0].length
  }
  // A span starting or ending inside a surrogate pair takes in the whole character.
  if (isLow(translation.charCodeAt(start)) && isHigh(translation.charCodeAt(start - 1))) start--
  if (isLow(translation.charCodeAt(end)) && isHigh(translation.charCodeAt(end - 1))) end++
  return { start, end, in: 'translation' }
}

export interface FindingOptions { errorAt: MqmSeverity; minScore: number }

export function verdictToFindings(verdict: Verdict, translation: string, options: FindingOptions): FindingInput[] {
  const findings: FindingInput[] = verdict.errors.map((e) => {
    const finding = report(e.category, e, { severity: severityFor(e.severity, options.errorAt) })
    const span = locateSpan(translation, e.span)
    if (span) finding.span = span
    if (e.suggestion && e.suggestion !== e.span) finding.suggestion = e.suggestion
    return finding
  })
  if (options.minScore > 0 && verdict.score < options.minScore) {
    findings.push(report('below-min-score', { score: verdict.score, min: options.minScore }))
  }
  return findings
}
