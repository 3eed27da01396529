// From the model's MQM verdict to findings: severity by the `errorAt` threshold, the span found by
// searching the erroneous text in the translation, the fix as the suggestion.
import type { FindingInput, Severity, Span } from '../../src/engine/types.js'
import { MQM_SEVERITIES, type MqmCategory, type MqmSeverity, type Verdict } from './prompt.js'

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

/** Where the model's span text is in the translation: exact first, then ignoring case. */
export function locateSpan(translation: string, text: string): Span | undefined {
  if (!text) return undefined
  let start = translation.indexOf(text)
  if (start < 0) start = translation.toLocaleLowerCase().indexOf(text.toLocaleLowerCase())
  // Lower-casing can change lengths (rare: İ); a span that would not fit is better left out.
  if (start < 0 || start + text.length > translation.length) return undefined
  return { start, end: start + text.length, in: 'translation' }
}

export interface FindingOptions { errorAt: MqmSeverity; minScore: number }

export function verdictToFindings(verdict: Verdict, translation: string, options: FindingOptions): FindingInput[] {
  const findings: FindingInput[] = verdict.errors.map((e) => {
    const finding: FindingInput = {
      severity: severityFor(e.severity, options.errorAt),
      message: `${categoryLabel(e.category)} (${e.severity}): ${e.explanation}`,
    }
    const span = locateSpan(translation, e.span)
    if (span) finding.span = span
    if (e.suggestion && e.suggestion !== e.span) finding.suggestion = e.suggestion
    return finding
  })
  if (options.minScore > 0 && verdict.score < options.minScore) {
    findings.push({ severity: 'error', message: `score ${verdict.score} is below the minimum of ${options.minScore}` })
  }
  return findings
}
