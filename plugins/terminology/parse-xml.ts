// A small, strict-enough XML reader for glossaries (TBX). Written by hand because TBX needs only
// elements, attributes, text, CDATA and the predefined and numeric entities; a full XML library
// would be a dependency for a page of code. DTDs are skipped, never fetched or expanded.
export interface XmlElement {
  /** Local name (any `prefix:` removed). */
  name: string
  /** Attributes by their qualified name (`xml:lang`, `type`). */
  attrs: Record<string, string>
  children: XmlNode[]
}
export type XmlNode = XmlElement | string

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** Is this code point a character XML 1.0 allows (its `Char`: no surrogate, no C0 control but tab and line ends, none past U+10FFFF)? */
const isXmlChar = (cp: number) =>
  cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff)

/**
 * Decode the predefined entities and character references of `text`, found at offset `at` of the
 * document (for the error). A reference to no character XML allows (`&#xD800;`, `&#99999999;`) is
 * not well-formed XML: it throws, located, as other malformed XML does. An unknown named entity (one
 * a DTD would declare, which is never read) stays as written.
 */
export function decodeXmlEntities(text: string, at = 0): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (whole, ref: string, offset: number) => {
    if (!ref.startsWith('#')) return ENTITIES[ref] ?? whole
    const cp = ref.startsWith('#x') ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
    if (!isXmlChar(cp)) throw new Error(`XML: ${whole} is not a character XML allows (offset ${at + offset})`)
    return String.fromCodePoint(cp)
  })
}

const TOKEN = /<!--[\s\S]*?-->|<!\[CDATA\[([\s\S]*?)\]\]>|<\?[\s\S]*?\?>|<!DOCTYPE(?:[^>[]|\[[\s\S]*?\])*>|<\/([^\s>]+)\s*>|<([^\s/>!?]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|[^<]+|</g
const ATTR = /([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g

const localName = (qname: string) => qname.slice(qname.indexOf(':') + 1)

/** Parse an XML document; throws on mismatched or unclosed elements. */
export function parseXml(text: string): XmlElement {
  const root: XmlElement = { name: '#document', attrs: {}, children: [] }
  const stack: XmlElement[] = [root]
  const stackNames: string[] = ['#document']
  for (const m of text.matchAll(TOKEN)) {
    const top = stack[stack.length - 1]!
    const [whole, cdata, closing, opening, attrText, selfClosing] = m
    if (cdata !== undefined) top.children.push(cdata)
    else if (closing !== undefined) {
      if (stackNames[stackNames.length - 1] !== closing) {
        throw new Error(`XML: </${closing}> does not close <${stackNames[stackNames.length - 1]}> (offset ${m.index})`)
      }
      stack.pop()
      stackNames.pop()
    } else if (opening !== undefined) {
      const attrs: Record<string, string> = {}
      // The attributes follow `<name`; each value ends before its closing quote.
      const attrsAt = m.index + 1 + opening.length
      for (const a of (attrText ?? '').matchAll(ATTR)) {
        const value = a[2] ?? a[3] ?? ''
        attrs[a[1]!] = decodeXmlEntities(value, attrsAt + a.index + a[0].length - 1 - value.length)
      }
      const element: XmlElement = { name: localName(opening), attrs, children: [] }
      top.children.push(element)
      if (!selfClosing) {
        stack.push(element)
        stackNames.push(opening)
      }
    } else if (whole === '<') {
      throw new Error(`XML: stray "<" at offset ${m.index}`)
    } else if (!whole.startsWith('<')) {
      top.children.push(decodeXmlEntities(whole, m.index))
    }
  }
  if (stack.length > 1) throw new Error(`XML: <${stackNames[stackNames.length - 1]}> is not closed`)
  return root
}

/** All descendants named `name`, in document order (not descending into matches). */
export function findAll(element: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = []
  for (const child of element.children) {
    if (typeof child === 'string') continue
    if (child.name === name) out.push(child)
    else out.push(...findAll(child, name))
  }
  return out
}

/** The text content of an element, whitespace collapsed. */
export function textOf(element: XmlElement): string {
  const parts: string[] = []
  const walk = (e: XmlElement) => {
    for (const c of e.children) typeof c === 'string' ? parts.push(c) : walk(c)
  }
  walk(element)
  return parts.join('').replace(/\s+/g, ' ').trim()
}
