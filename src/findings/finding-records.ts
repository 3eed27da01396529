// A finding as people see it after the run: what the check said, with the text its span points at
// quoted (the span's offsets mean nothing once the text has changed). The issue text, the findings
// log and the identity (its hash) are all made from these records.
import { createHash } from 'node:crypto'
import type { Finding } from '../engine/types.js'
import type { FindingRecord } from '../protocol/findings.js'

const MAX_QUOTE = 80
const CONTEXT = 12

function clip(text: string, max = MAX_QUOTE): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** The text a span covers; an empty or blank span is shown with what surrounds it. */
export function quoteSpan(text: string, start: number, end: number): string | undefined {
  if (!(start >= 0 && end >= start && end <= text.length)) return undefined
  const covered = text.slice(start, end)
  if (covered.trim()) return clip(covered)
  const before = text.slice(Math.max(0, start - CONTEXT), start)
  const after = text.slice(end, end + CONTEXT)
  if (!before && !after && !covered) return undefined
  return clip(`${start - CONTEXT > 0 ? '…' : ''}${before}${covered}${after}${end + CONTEXT < text.length ? '…' : ''}`, MAX_QUOTE + 2)
}

export function toFindingRecords(findings: Finding[], texts: { source: string; translation?: string }): FindingRecord[] {
  return findings.map((f) => {
    const record: FindingRecord = { check: f.check, severity: f.severity, message: f.message }
    if (f.code) record.code = f.code
    if (f.span) {
      const where = f.span.in ?? 'translation'
      const text = where === 'source' ? texts.source : texts.translation
      const quote = text === undefined ? undefined : quoteSpan(text, f.span.start, f.span.end)
      if (quote !== undefined) {
        record.quote = quote
        record.in = where
      }
    }
    return record
  })
}

/** Identity of a set of findings, whatever their order: the same findings give the same hash. */
export function findingsHash(records: FindingRecord[]): string {
  const lines = records.map((r) => JSON.stringify([r.check, r.severity, r.code ?? '', r.message, r.in ?? '', r.quote ?? ''])).sort()
  return createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)
}
