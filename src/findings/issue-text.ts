// The issue a translator reads beside a string that was sent back: the findings in plain words,
// the offending text quoted, errors first. The last line carries a reference (the findings' hash)
// by which the worker recognises its own open issues when it has forgotten raising them.
import type { FindingRecord } from '../protocol/findings.js'

export type IssueType = 'translation_mistake' | 'source_mistake'

/** Findings that go into an issue: errors and warnings (info is left to the findings log). */
export function issueFindings(records: FindingRecord[]): FindingRecord[] {
  return records.filter((r) => r.severity === 'error' || r.severity === 'warning')
}

/** `source_mistake` when every finding is about the source text, else `translation_mistake`. */
export function issueTypeOf(records: FindingRecord[]): IssueType {
  return records.length > 0 && records.every((r) => r.in === 'source') ? 'source_mistake' : 'translation_mistake'
}

export const REFERENCE = /\[switchyard:([0-9a-f]{16})\]/

/** The last line of every issue the worker writes (issueText), reference included. */
const CLOSING = /(?:^|\n)This issue is resolved by itself once the string passes the check again\. \[switchyard:([0-9a-f]{16})\]\s*$/
/**
 * Its opening: "<pipeline> sent this string back." (not quoted: no leading `>`), within the first
 * 300 characters: earlier versions wrote a pipeline's name as it was, line breaks included.
 */
const OPENING = /^(?!\s*>)[\s\S]{0,300}? sent this string back\.[ \t]*(?:\r?\n|$)/

/**
 * The findings hash of an issue this worker wrote, read from its text, or undefined for any other
 * text: the reference alone is not enough, as a reviewer's issue may quote it ("see [switchyard:…]",
 * or the worker's last line after a `>`): such an issue is a person's, and stays open.
 */
export function ownReference(text: string): string | undefined {
  if (!OPENING.test(text)) return undefined
  return CLOSING.exec(text)?.[1]
}

export function referenceOf(hash: string): string {
  return `[switchyard:${hash}]`
}

/** Every line break a text may hold (one list line per finding, whatever the translator typed). */
const LINE_BREAK = /\r\n|[\r\n\u2028\u2029\u0085\v\f]/g
/** Half of a surrogate pair standing alone: no character (a strict JSON reader may refuse it). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** A text as one line of the list: its line breaks shown, never a lone half of a surrogate pair. */
function oneLine(text: string): string {
  return text.replace(LINE_BREAK, '⏎').replace(LONE_SURROGATE, '\ufffd')
}

/** Quote in curly quotes, with line breaks and tabs shown rather than breaking the list. */
function quoted(text: string): string {
  return `“${oneLine(text).replace(/\t/g, '⇥')}”`
}

function line(r: FindingRecord): string {
  const message = oneLine(r.message.trim()).replace(/\.$/, '')
  const where = r.quote === undefined ? '' : ` — in the ${r.in === 'source' ? 'source' : 'translation'}: ${quoted(r.quote)}`
  return `- ${message}${where} (${r.check})`
}

/** Findings listed at most; a string with more says how many more (the findings log has them all). */
export const MAX_LISTED = 20

export function issueText(records: FindingRecord[], o: { pipelineName: string; hash: string }): string {
  const errors = records.filter((r) => r.severity === 'error')
  const others = records.filter((r) => r.severity !== 'error')
  const listedErrors = errors.slice(0, MAX_LISTED)
  const listedOthers = others.slice(0, Math.max(0, MAX_LISTED - listedErrors.length))
  // One line, whatever the pipeline's name holds: the worker knows its issues by their first and last lines (ownReference).
  const parts = [`${o.pipelineName.replace(/\s+/g, ' ').trim()} sent this string back.`]
  if (errors.length) parts.push('', errors.length === 1 ? 'To fix:' : `To fix (${errors.length}):`, ...listedErrors.map(line))
  if (listedOthers.length) parts.push('', 'Also worth a look:', ...listedOthers.map(line))
  const more = records.length - listedErrors.length - listedOthers.length
  if (more > 0) parts.push('', `… and ${more} more (the operator's findings log lists them all).`)
  parts.push('', `This issue is resolved by itself once the string passes the check again. ${referenceOf(o.hash)}`)
  return parts.join('\n')
}
