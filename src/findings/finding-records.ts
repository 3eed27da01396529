// A finding as people see it after the run: what the check said, with the text its span points at
// quoted (the span's offsets mean nothing once the text has changed). The issue text, the findings
// log and the identity (its hash) are all made from these records.
import { createHash } from 'node:crypto'
import type { Finding } from '../engine/types.js'
import type { FindingRecord } from '../protocol/findings.js'

const MAX_QUOTE = 80
/** A finding's message, at most: one may quote the translator's text whole (a regex's `{match}`). */
export const MAX_MESSAGE = 500
const CONTEXT = 12

/** Is code unit `i` of `text` the second half of a surrogate pair (a cut there would split a character)? */
const insidePair = (text: string, i: number) => i > 0 && i < text.length && isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1))
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff

/** `text` cut to `max` code units at most, never inside a character's surrogate pair (a lone half is no text). */
function clip(text: string, max = MAX_QUOTE): string {
  if (text.length <= max) return text
  let end = max - 1
  if (insidePair(text, end)) end--
  return `${text.slice(0, end)}…`
}

/** The text a span covers; an empty or blank span is shown with what surrounds it. */
export function quoteSpan(text: string, start: number, end: number): string | undefined {
  if (!(start >= 0 && end >= start && end <= text.length)) return undefined
  // A span's own ends inside a pair (a check's offset off by one unit) take the whole character;
  // an empty span there stays empty, before it.
  if (start === end && insidePair(text, start)) end = --start
  else {
    if (insidePair(text, start)) start--
    if (insidePair(text, end)) end++
  }
  const covered = text.slice(start, end)
  if (covered.trim()) return clip(covered)
  let from = Math.max(0, start - CONTEXT)
  if (insidePair(text, from)) from++
  let to = Math.min(text.length, end + CONTEXT)
  if (insidePair(text, to)) to++
  const before = text.slice(from, start)
  const after = text.slice(end, to)
  if (!before && !after && !covered) return undefined
  return clip(`${from > 0 ? '…' : ''}${before}${covered}${after}${to < text.length ? '…' : ''}`, MAX_QUOTE + 2)
}

export function toFindingRecords(findings: Finding[], texts: { source: string; translation?: string }): FindingRecord[] {
  return findings.map((f) => {
    const record: FindingRecord = { check: f.check, severity: f.severity, message: clip(f.message, MAX_MESSAGE) }
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
