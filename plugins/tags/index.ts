// HTML/XML tags: the translation's tags are well formed (when the source's are: a fragment of a
// larger text may open a tag it does not close) and the same as the source's, in any order.
// Attributes that carry human text may be translated; the others must be kept as they are.
// Names compare with case (XML) or without (`markup: html`); character references in values decoded.
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { findTags, tagNestingProblems, type MarkupTag } from '../_shared/markup-tags.js'
import { multisetDiff } from '../_shared/multiset-diff.js'

const { messages, report } = defineMessages({
  'unopened-tag': { severity: 'error', meaning: 'A closing tag of the translation has no opening tag (with `checkNesting`, when the source nests well).', text: (d: { tag: string }) => `Closing tag ${d.tag} has no opening tag` },
  'crossed-tags': { severity: 'error', meaning: 'A tag of the translation is closed after another element\'s closing tag (`<b><i></b></i>`).', text: (d: { tag: string; before: string }) => `Tag ${d.tag} is not closed before ${d.before}` },
  'unclosed-tag': { severity: 'error', meaning: 'An opening tag of the translation is never closed.', text: (d: { tag: string }) => `Tag ${d.tag} is not closed` },
  'changed-attributes': { severity: 'error', meaning: 'A tag of the source is in the translation with other values of attributes that are not translatable.', text: (d: { tag: string; changed: string[]; found: string }) => `Attributes of ${d.tag} changed in the translation (${d.changed.join(', ')}): ${d.found}` },
  'missing-tag': { severity: 'error', meaning: 'A tag of the source is not in the translation.', text: (d: { tag: string }) => `Missing tag ${d.tag}` },
  'extra-tag': { severity: 'error', meaning: 'The translation has a tag the source does not have.', text: (d: { tag: string }) => `Tag ${d.tag} is not in the source` },
})
const NESTING = { unopened: 'unopened-tag', crossed: 'crossed-tags', unclosed: 'unclosed-tag' } as const

// XML's five named references and numeric ones name the same character in XML and in HTML:
// `&amp;`, `&#38;` and `&#x26;` in an `href` are one URL. HTML's other names (`&nbsp;`) would need
// HTML's whole table; they are compared as written.
const XML_NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const REFERENCE = /&(?:#(\d+)|#[xX]([\dA-Fa-f]+)|(amp|lt|gt|quot|apos));/g

function decodeReferences(value: string): string {
  if (!value.includes('&')) return value
  return value.replace(REFERENCE, (whole, dec?: string, hex?: string, named?: string) => {
    if (named) return XML_NAMED[named]!
    const code = dec ? Number(dec) : parseInt(hex!, 16)
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole
  })
}

/** A tag as compared: values decoded; in HTML, tag and attribute names without case (HTML ignores it, XML does not). */
function comparable(tag: MarkupTag, html: boolean): MarkupTag {
  const name = (n: string) => (html ? n.toLowerCase() : n)
  return { ...tag, name: name(tag.name), attributes: tag.attributes.map((a) => ({ name: name(a.name), value: a.value === undefined ? undefined : decodeReferences(a.value) })) }
}

export default definePlugin({
  name: 'tags',
  description: 'HTML/XML tags in the translation are well formed and the same as in the source.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      translatableAttributes: {
        type: 'array',
        items: { type: 'string' },
        default: ['title', 'alt', 'placeholder', 'aria-label', 'aria-description', 'aria-placeholder', 'aria-roledescription', 'aria-valuetext', 'label', 'value', 'summary', 'abbr'],
        description: 'Attributes whose values are text for people and may differ from the source.',
      },
      localeAttributes: {
        type: 'array',
        items: { type: 'string' },
        default: ['lang', 'xml:lang', 'dir'],
        description: 'Attributes that name the language or direction of the text, and change with it (`lang="en"` becomes `lang="ar"`, `dir="ltr"` becomes `dir="rtl"`).',
      },
      checkNesting: { type: 'boolean', default: true, description: 'Report unbalanced or badly nested tags in the translation.' },
      markup: {
        enum: ['xml', 'html'],
        default: 'xml',
        description: 'How tag and attribute names compare: `xml` with case (`<B>` is not `<b>`), `html` without, as HTML reads them. Attribute values keep their case in both; character references in them (`&amp;`, `&#38;`) are decoded in both.',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const html = options.markup === 'html'
    const translatable = new Set(options.translatableAttributes.map((a) => a.toLowerCase()))
    // A right-to-left translation adds `dir="rtl"`; one that is no longer in English drops `lang="en"`.
    const locale = new Set(options.localeAttributes.map((a) => a.toLowerCase()))
    const compared = (tag: MarkupTag) => tag.attributes.filter((a) => !locale.has(a.name.toLowerCase()))
    const signature = (tag: MarkupTag): string => {
      if (tag.kind === 'close') return `</${tag.name}>`
      const attributes = compared(tag)
        .map((a) => (translatable.has(a.name.toLowerCase()) || a.value === undefined ? a.name : `${a.name}=${JSON.stringify(a.value)}`))
        .sort()
      return `<${[tag.name, ...attributes].join(' ')}${tag.kind === 'self' ? '/' : ''}>`
    }
    return {
      check(item) {
        const translation = item.translation ?? ''
        const found = findTags(item.source)
        const foundTarget = findTags(translation)
        if (!found.length && !foundTarget.length) return []
        const source = found.map((t) => comparable(t, html))
        const target = foundTarget.map((t) => comparable(t, html))
        const findings: FindingInput[] = []
        if (options.checkNesting && !tagNestingProblems(source).length) {
          for (const p of tagNestingProblems(target)) {
            findings.push(report(NESTING[p.kind], { tag: p.tag.text, before: p.before?.text ?? '' }, { span: { start: p.tag.start, end: p.tag.end, in: 'translation' } }))
          }
        }
        const diff = multisetDiff(source, target, signature)
        // The extra tags by element, to pair each missing tag with the first extra one of the same
        // element in constant time (a search of the list per missing tag was quadratic).
        const twins = new Map<string, MarkupTag[]>()
        for (const t of diff.extra) {
          const k = `${t.kind}\u0000${t.name}`
          const list = twins.get(k)
          if (list) list.push(t)
          else twins.set(k, [t])
        }
        const taken = new Set<MarkupTag>()
        const next = new Map<string, number>()
        for (const tag of diff.missing) {
          // The same element with other attribute values: one finding that says which ones.
          const k = `${tag.kind}\u0000${tag.name}`
          const i = next.get(k) ?? 0
          const other = twins.get(k)?.[i]
          if (other) {
            next.set(k, i + 1)
            taken.add(other)
            const values = (t: MarkupTag) => new Map(compared(t).map((a) => [a.name, translatable.has(a.name.toLowerCase()) ? '' : a.value ?? '']))
            const a = values(tag)
            const b = values(other)
            const changed = [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k))
            findings.push(report('changed-attributes', { tag: tag.text, changed, found: other.text }, { span: { start: other.start, end: other.end, in: 'translation' } }))
            continue
          }
          findings.push(report('missing-tag', { tag: tag.text }, { span: { start: tag.start, end: tag.end, in: 'source' } }))
        }
        for (const tag of diff.extra) {
          if (!taken.has(tag)) findings.push(report('extra-tag', { tag: tag.text }, { span: { start: tag.start, end: tag.end, in: 'translation' } }))
        }
        return findings
      },
    }
  },
})
