// Inline Markdown of one string, found in one pass each, without a full CommonMark parser: code
// spans, inline links and images, link syntax broken by a space (`[text] (url)`), and emphasis
// delimiter runs. A full parser (remark, markdown-it) would build a tree for every string of a
// pipeline to answer these few questions; these scans are linear and need no dependency.
import { maskSpans, type TextRange } from '../_shared/mask-spans.js'
import { findPlaceholders } from '../_shared/placeholder-patterns.js'
import { findUrls } from '../_shared/url-patterns.js'

export interface CodeSpan extends TextRange { code: string }
export interface Link extends TextRange { url: string; image: boolean }
export interface DelimiterRun extends TextRange { char: '*' | '_' | '~'; length: number }

export interface InlineMarkdown {
  code: CodeSpan[]
  /** Inline links and images, and reference links `[text][label]` (with the label as `url`). */
  links: Link[]
  /** `[text] (url)`: a space between `]` and `(` makes it text, not a link. */
  brokenLinks: Link[]
  runs: DelimiterRun[]
}

/**
 * Code spans: a run of N backticks up to the next run of exactly N. An opening run never closed is
 * literal text, and so is everything after it (CommonMark would try the next run; rare enough).
 */
function codeSpans(text: string): CodeSpan[] {
  const out: CodeSpan[] = []
  let open: { start: number; length: number } | undefined
  let i = 0
  while (i < text.length) {
    if (text.charCodeAt(i) !== 96) {
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

// `](url)` or `](url "title")`; the URL has no spaces or parentheses, or is in `<…>`.
const LINK_TAIL = /\]\((<[^<>\n]*>|[^()\s]*)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\)/g
const BROKEN_TAIL = /\][ \t\u00A0\u3000]+\((<[^<>\n]*>|[^()\s]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\)/g
const REFERENCE_TAIL = /\]\[([^[\]\n]+)\]/g
const BROKEN_REFERENCE_TAIL = /\][ \t\u00A0\u3000]+\[([^[\]\n]+)\]/g

function links(masked: string, re: RegExp): Link[] {
  const out: Link[] = []
  re.lastIndex = 0
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const url = m[1]!.replace(/^<|>$/g, '')
    out.push({ start: m.index, end: m.index + m[0].length, url, image: false })
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

export function inlineMarkdown(text: string): InlineMarkdown {
  if (!/[`*_~\]]/.test(text)) return { code: [], links: [], brokenLinks: [], runs: [] }
  const code = codeSpans(text)
  const withoutCode = maskSpans(text, code)
  const found = links(withoutCode, LINK_TAIL)
  const brokenLinks = links(withoutCode, BROKEN_TAIL)
  // Reference links count by their label: `[Docs][docs]` must keep `[docs]`.
  for (const l of links(withoutCode, REFERENCE_TAIL)) found.push({ ...l, url: `[${l.url}]` })
  for (const l of found) l.image = isImage(withoutCode, l.start)
  const masked = maskSpans(withoutCode, [...found, ...brokenLinks, ...findPlaceholders(text), ...findUrls(text)])
  return { code, links: found, brokenLinks, runs: delimiterRuns(masked) }
}

/** `[text] [label]` in a text whose source has reference links: a space breaks them too. */
export function brokenReferences(text: string): Link[] {
  return links(text, BROKEN_REFERENCE_TAIL).map((l) => ({ ...l, url: `[${l.url}]` }))
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
