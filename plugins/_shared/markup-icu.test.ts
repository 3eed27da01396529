// Tags and ICU messages as the checks read them, on their own: comments and CDATA hiding tags,
// numeric and void tags, nesting problems; ICU parsing with tags as text, argument names, selects.
import { describe, expect, it } from 'vitest'
import { icuArgumentNames, isIcuSelectMessage, parseIcu, usesIcuSyntax } from './icu-message.js'
import { findTags, tagNestingProblems } from './markup-tags.js'

const tags = (text: string) => findTags(text).map((t) => [t.kind, t.name, t.start, t.end])

describe('findTags', () => {
  it('reads opening, closing, void, numeric and self-closing tags with their attributes', () => {
    const text = `<b>Bold</b> <BR> <img src="x.png" alt='y' width=10 /> <0>zero</0> <2/>`
    expect(tags(text)).toEqual([['open', 'b', 0, 3], ['close', 'b', 7, 11], ['self', 'BR', 12, 16], ['self', 'img', 17, 53], ['open', '0', 54, 57], ['close', '0', 61, 65], ['self', '2', 66, 70]])
    expect(findTags(text)[3]!.attributes).toEqual([{ name: 'src', value: 'x.png' }, { name: 'alt', value: 'y' }, { name: 'width', value: '10' }])
  })

  it('takes a < that starts no tag, a numeric tag with attributes and a closing tag with any as text', () => {
    expect(tags('a < b and <3')).toEqual([])
    expect(tags('<1 x="y"> </b x="1"> </b/>')).toEqual([])
  })

  it('skips tags inside comments and CDATA, the earlier opener winning, an unclosed one hiding nothing', () => {
    expect(tags('<!--a--><b><!--c--><i>')).toEqual([['open', 'b', 8, 11], ['open', 'i', 19, 22]])
    expect(tags('<![CDATA[ <!-- ]]><b> --><i>')).toEqual([['open', 'b', 18, 21], ['open', 'i', 25, 28]])
    expect(tags('<!-- <![CDATA[ --> <b> ]]>')).toEqual([['open', 'b', 19, 22]])
    expect(tags('<!-- <b> <![CDATA[x]]> <i>')).toEqual([['open', 'b', 5, 8], ['open', 'i', 23, 26]])
  })

  it('reports crossed, unopened and unclosed tags in text order, void closing tags aside', () => {
    const problems = tagNestingProblems(findTags('<b><i>x</b></i></br><br><u>'))
    expect(problems.map((p) => [p.kind, p.tag.name, p.tag.start, p.before?.name])).toEqual([['crossed', 'i', 3, 'b'], ['unopened', 'i', 11, undefined], ['unclosed', 'u', 24, undefined]])
  })
})

describe('ICU messages', () => {
  it('tells a plural or select message from a simple one or none', () => {
    expect(isIcuSelectMessage('{n, plural, one {#} other {#}}')).toBe(true)
    expect(isIcuSelectMessage('Hello {name}')).toBe(false)
    expect(isIcuSelectMessage('no braces')).toBe(false)
    expect(isIcuSelectMessage('{n, plural, one {#}}')).toBe(false) // no other: not valid
  })

  it('parses with tags as text, and gives where a message breaks', () => {
    expect(parseIcu('<b>{name}').ok).toBe(true)
    expect(parseIcu('{n, plural, one {#}')).toEqual({ ok: false, message: 'MISSING_OTHER_CLAUSE', offset: 19 })
  })

  it('names arguments inside branches, and tells ICU syntax from simple arguments', () => {
    const parsed = parseIcu('{g, select, male {{name} he} other {{name}}}')
    expect(parsed.ok && [...icuArgumentNames(parsed.elements)]).toEqual(['g', 'name'])
    const date = parseIcu('{d, date, short}')
    const simple = parseIcu('{n}')
    expect(date.ok && usesIcuSyntax(date.elements)).toBe(true)
    expect(simple.ok && usesIcuSyntax(simple.elements)).toBe(false)
  })
})
