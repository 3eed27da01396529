// Inline Markdown of one string, found in one pass each, without a full CommonMark parser: code
// spans, inline links and images, link syntax broken by a space (`[text] (url)`), and emphasis
// delimiter runs. A full parser (remark, markdown-it) would build a tree for every string of a
// pipeline to answer these few questions; these scans are linear and need no dependency.
import { MASK_CHAR, maskSpans, type TextRange } from '../_shared/mask-spans.js'
import { findPlaceholders } from '../_shared/placeholder-patterns.js'
import { findUrls } from '../_shared/url-patterns.js'

export interface CodeSpan extends TextRange { code: string }
/**
 * `key` is what must match between source and translation: the URL, or the reference label
 * normalized as CommonMark matches labels (case-folded, inner whitespace collapsed), after a `!`
 * for an image (an image that became a link is not the same).
 */
export interface Link extends TextRange { url: string; image: boolean; key: string }
export interface DelimiterRun extends TextRange { char: '*' | '_' | '~'; length: number }

export interface InlineMarkdown {
  code: CodeSpan[]
  /** Inline links and images, and reference links `[text][label]` (with the label as `url`). */
  links: Link[]
  /** `[text] (url)`: a space between `]` and `(` makes it text, not a link. */
  brokenLinks: Link[]
  runs: DelimiterRun[]
}

/** An ASCII punctuation character after a backslash is literal (CommonMark 2.4, backslash escapes). */
const ESCAPED = /\\[!-/:-@[-`{-~]/g
const isAsciiPunctuation = (code: number) => (code >= 33 && code <= 47) || (code >= 58 && code <= 64) || (code >= 91 && code <= 96) || (code >= 123 && code <= 126)

/**
 * Code spans: a run of N backticks up to the next run of exactly N. An opening run never closed is
 * literal text, and so is everything after it (CommonMark would try the next run; rare enough).
 * Outside a code span a backslash escapes the next punctuation character (`` \` `` is a literal
 * backtick); inside one it is a backslash like any other character.
 */
function codeSpans(text: string): CodeSpan[] {
  const out: CodeSpan[] = []
  let open: { start: number; length: number } | undefined
  let i = 0
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (code === 92 && !open && isAsciiPunctuation(text.charCodeAt(i + 1))) {
      i += 2
      continue
    }
    if (code !== 96) {
      i++
      continue
    }
    let j = i
    while (j < text.length && text.charCodeAt(j) === 96) j++
    const length = j - i
    if (!open) open = { start: i, length }
    else if (open.length === length) {
      out.push({ start: open.start, end: j, code: text.slice(open.start + length, i).trim() })
      open = undefined
    }
    i = j
  }
  return out
}

// `](url)` or `](url "title")`; the URL has no spaces, or is in `<…>`, and holds parentheses only
// in balanced pairs (`/wiki/Unicode_(disambiguation)`, one level) or escaped (`\(`, masked before
// the scan), as CommonMark's link destination (6.3).
const DESTINATION = '(?:[^()\\s]|\\([^()\\s]*\\))'
const TITLE = `(?:\\s+(?:"[^"\\n]*"|'[^'\\n]*'))?\\)`
const LINK_TAIL = new RegExp(`\\]\\((<[^<>\\n]*>|${DESTINATION}*)${TITLE}`, 'dg')
const BROKEN_TAIL = new RegExp(`\\][ \\t\\u00A0\\u3000]+\\((<[^<>\\n]*>|${DESTINATION}+)${TITLE}`, 'dg')
const REFERENCE_TAIL = /\]\[([^[\]\n]+)\]/dg
const BROKEN_REFERENCE_TAIL = /\][ \t\u00A0\u3000]+\[([^[\]\n]+)\]/dg

/** A reference label as CommonMark matches it (4.7): case-folded, whitespace collapsed. */
const labelKey = (label: string) => label.trim().replace(/[ \t\r\n]+/g, ' ').toLowerCase().toUpperCase()

/** The links whose tail `re` finds in `masked`; URLs and labels are read from `text` (same offsets). */
function links(masked: string, re: RegExp, text: string, reference = false): Link[] {
  const out: Link[] = []
  re.lastIndex = 0
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const [from, to] = m.indices![1]!
    const written = text.slice(from, to)
    const url = reference ? `[${written}]` : written.replace(/^<|>$/g, '')
    out.push({ start: m.index, end: m.index + m[0].length, url, image: false, key: reference ? `[${labelKey(written)}]` : `(${url})` })
  }
  return out
}

const WHITESPACE = /\s/u

/**
 * Runs of `*`, `_` or `~~` that can open or close emphasis: not surrounded by whitespace on both
 * sides (a list bullet `* item`, `5 * 3`), and for `_` not inside a word (`snake_case`).
 */
function delimiterRuns(masked: string): DelimiterRun[] {
  const out: DelimiterRun[] = []
  let i = 0
  while (i < masked.length) {
    const ch = masked[i]!
    if (ch !== '*' && ch !== '_' && ch !== '~') {
      i++
      continue
    }
    let j = i
    while (j < masked.length && masked[j] === ch) j++
    const length = j - i
    const before = i > 0 ? masked[i - 1]! : ' '
    const after = j < masked.length ? masked[j]! : ' '
    const left = !WHITESPACE.test(after)
    const right = !WHITESPACE.test(before)
    const intraword = ch === '_' && /[\p{L}\p{N}]/u.test(before) && /[\p{L}\p{N}]/u.test(after)
    if ((left || right) && !intraword && (ch !== '~' || length === 2)) out.push({ start: i, end: j, char: ch, length: Math.min(length, 3) })
    i = j
  }
  return out
}

/** The text with backslash-escaped punctuation (`\*`, `\_`, `\[`, `\(`) blanked out: literal, never syntax. */
const withoutEscapes = (text: string) => (text.includes('\\') ? text.replace(ESCAPED, MASK_CHAR + MASK_CHAR) : text)

export function inlineMarkdown(text: string): InlineMarkdown {
  if (!/[`*_~\]]/.test(text)) return { code: [], links: [], brokenLinks: [], runs: [] }
  const code = codeSpans(text)
  const withoutCode = withoutEscapes(maskSpans(text, code))
  const found = links(withoutCode, LINK_TAIL, text)
  const brokenLinks = links(withoutCode, BROKEN_TAIL, text)
  // Reference links count by their label: `[Docs][docs]` must keep `[docs]` (or `[DOCS]`).
  for (const l of links(withoutCode, REFERENCE_TAIL, text, true)) found.push(l)
  for (const l of [...found, ...brokenLinks]) {
    l.image = isImage(withoutCode, l.start)
    if (l.image) l.key = `!${l.key}`
  }
  const masked = maskSpans(withoutCode, [...found, ...brokenLinks, ...findPlaceholders(text), ...findUrls(text)])
  return { code, links: found, brokenLinks, runs: delimiterRuns(masked) }
}

/** `[text] [label]` in a text whose source has reference links: a space breaks them too. */
export function brokenReferences(text: string): Link[] {
  const masked = withoutEscapes(maskSpans(text, codeSpans(text)))
  const out = links(masked, BROKEN_REFERENCE_TAIL, text, true)
  for (const l of out) if (isImage(masked, l.start)) l.key = `!${l.key}`
  return out
}

/** Is the `[` that opens the link text just after a `!`? Looks back on the line only, bounded. */
function isImage(text: string, closeAt: number): boolean {
  const from = Math.max(0, closeAt - 200)
  for (let k = closeAt - 1; k >= from; k--) if (text[k] === '[') return k > 0 && text[k - 1] === '!'
  return false
}

/** Does the text use Markdown: a code span, a link, or a balanced pair of emphasis markers? */
export function usesMarkdown(md: InlineMarkdown): boolean {
  if (md.code.length || md.links.length) return true
  const counts = runCounts(md.runs)
  for (const n of counts.values()) if (n >= 2 && n % 2 === 0) return true
  return false
}

/** Delimiter runs by kind: `*1` `*2` `_1` `~2`… */
export function runCounts(runs: readonly DelimiterRun[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const r of runs) {
    const k = `${r.char}${r.length}`
    out.set(k, (out.get(k) ?? 0) + 1)
  }
  return out
}
