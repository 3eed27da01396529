// HTML/XML tags in a text: opening, closing and self-closing, with their attributes. A `<` that
// does not start a tag-shaped token (`a < b`, `<3`) is plain text. Numeric names (`<0>`, `</1>`,
// `<2/>`, as react-i18next's Trans uses) are tags too, without attributes.

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
const COMMENT = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>/g

export function findTags(text: string): MarkupTag[] {
  if (!text.includes('<')) return []
  const skipped = [...text.matchAll(COMMENT)].map((m) => [m.index, m.index + m[0].length] as const)
  const out: MarkupTag[] = []
  for (const m of text.matchAll(TAG)) {
    const start = m.index
    if (skipped.some(([a, b]) => start >= a && start < b)) continue
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

export interface TagProblem { tag: MarkupTag; message: string }

/** Nesting problems: closing tags without an opening one, tags closed out of order, unclosed tags. */
export function tagNestingProblems(tags: readonly MarkupTag[]): TagProblem[] {
  const problems: TagProblem[] = []
  const stack: MarkupTag[] = []
  for (const tag of tags) {
    if (tag.kind === 'self') continue
    if (tag.kind === 'open') {
      stack.push(tag)
      continue
    }
    if (VOID_ELEMENTS.has(tag.name.toLowerCase())) continue // `</br>`: browsers read it as <br>
    const at = stack.map((t) => t.name).lastIndexOf(tag.name)
    if (at === -1) {
      problems.push({ tag, message: `Closing tag ${tag.text} has no opening tag` })
      continue
    }
    for (const unclosed of stack.splice(at).slice(1)) {
      problems.push({ tag: unclosed, message: `Tag ${unclosed.text} is not closed before ${tag.text}` })
    }
  }
  for (const unclosed of stack) problems.push({ tag: unclosed, message: `Tag ${unclosed.text} is not closed` })
  return problems.sort((a, b) => a.tag.start - b.tag.start)
}
