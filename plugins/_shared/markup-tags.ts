// HTML/XML tags in a text: opening, closing and self-closing, with their attributes. A `<` that
// does not start a tag-shaped token (`a < b`, `<3`) is plain text. Numeric names (`<0>`, `</1>`,
// `<2/>`, as react-i18next's Trans uses) are tags too, without attributes.
import { keepRecentScans } from './recent-scans.js'

export interface TagAttribute { name: string; value?: string }

export interface MarkupTag {
  text: string
  start: number
  end: number
  name: string
  kind: 'open' | 'close' | 'self'
  attributes: TagAttribute[]
}

export const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr'])

const TAG = /<(\/?)([A-Za-z][\w:.-]*|\d+)((?:\s+[^\s<>"'=/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>/g
const ATTRIBUTE = /([^\s=/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g
const COMMENTS = [['<!--', '-->'], ['<![CDATA[', ']]>']] as const

/**
 * Comments and CDATA sections, as [start, end) in order. By hand rather than with a lazy regex:
 * `<!--[\s\S]*?-->` searches to the end of the text from every unclosed `<!--` (quadratic), while
 * here an opener with no closer after it ends the search for that kind.
 */
function commentRanges(text: string): Array<readonly [number, number]> {
  const out: Array<readonly [number, number]> = []
  let at = 0
  const open = COMMENTS.map(([o]) => text.indexOf(o))
  while (true) {
    // The earlier opener wins, as the alternation of a regex would.
    let k = -1
    for (let i = 0; i < COMMENTS.length; i++) if (open[i]! !== -1 && (k === -1 || open[i]! < open[k]!)) k = i
    if (k === -1) return out
    const [o, c] = COMMENTS[k]!
    const close = text.indexOf(c, open[k]! + o.length)
    if (close === -1) {
      open[k] = -1
      continue
    }
    const start = open[k]!
    at = close + c.length
    out.push([start, at])
    for (let i = 0; i < COMMENTS.length; i++) if (open[i]! !== -1 && open[i]! < at) open[i] = text.indexOf(COMMENTS[i]![0], at)
  }
}

/**
 * The tags of a text, in order. The answer for a long text is kept for the next check that asks
 * (recent-scans.ts): frozen, never to be changed.
 */
export const findTags: (text: string) => ReadonlyArray<Readonly<MarkupTag>> = keepRecentScans(scanTags, { max: 32, minLength: 1024 })

function scanTags(text: string): MarkupTag[] {
  if (!text.includes('<')) return []
  const skipped = commentRanges(text)
  let next = 0 // both lists are in text order: one pass over the comments
  const out: MarkupTag[] = []
  for (const m of text.matchAll(TAG)) {
    const start = m.index
    while (next < skipped.length && skipped[next]![1] <= start) next++
    if (next < skipped.length && start >= skipped[next]![0]) continue
    const [whole, slash, name, rawAttributes = '', selfSlash] = m
    if (/^\d+$/.test(name!) && rawAttributes.trim()) continue
    if (slash && (selfSlash || rawAttributes.trim())) continue
    const attributes: TagAttribute[] = []
    for (const a of rawAttributes.matchAll(ATTRIBUTE)) {
      attributes.push({ name: a[1]!, value: a[2] ?? a[3] ?? a[4] })
    }
    const kind = slash ? 'close' : selfSlash || VOID_ELEMENTS.has(name!.toLowerCase()) ? 'self' : 'open'
    out.push({ text: whole, start, end: start + whole.length, name: name!, kind, attributes })
  }
  return out
}

/** A nesting problem: `tag` has no opening tag, is closed by `before` (another element's closing tag), or is never closed. */
export interface TagProblem { kind: 'unopened' | 'crossed' | 'unclosed'; tag: MarkupTag; before?: MarkupTag }

/** Nesting problems: closing tags without an opening one, tags closed out of order, unclosed tags. */
export function tagNestingProblems(tags: readonly MarkupTag[]): TagProblem[] {
  const problems: TagProblem[] = []
  const stack: MarkupTag[] = []
  const open = new Map<string, number>()
  for (const tag of tags) {
    if (tag.kind === 'self') continue
    if (tag.kind === 'open') {
      stack.push(tag)
      open.set(tag.name, (open.get(tag.name) ?? 0) + 1)
      continue
    }
    if (VOID_ELEMENTS.has(tag.name.toLowerCase())) continue // `</br>`: browsers read it as <br>
    // Open tags by name: a closing tag whose name is not open is known at once, and the pops
    // down to its opening tag are paid for by the pushes (linear).
    if (!open.get(tag.name)) {
      problems.push({ kind: 'unopened', tag })
      continue
    }
    for (let t = stack.pop()!; ; t = stack.pop()!) {
      open.set(t.name, open.get(t.name)! - 1)
      if (t.name === tag.name) break
      problems.push({ kind: 'crossed', tag: t, before: tag })
    }
  }
  for (const unclosed of stack) problems.push({ kind: 'unclosed', tag: unclosed })
  return problems.sort((a, b) => a.tag.start - b.tag.start)
}
