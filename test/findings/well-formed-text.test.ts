// What people read of a finding (its quote, its message, the issue's text) is well-formed text on
// one line of the list, whatever the translator typed: a cut never splits an emoji's surrogate
// pair (a lone half is no character, and a strict JSON reader refuses it), and no kind of line
// break (CR alone, U+2028, U+2029) starts a new line inside a finding. Found by an audit; each
// case failed before its fix.
import { describe, expect, it } from 'vitest'
import icu from '../../plugins/icu/index.js'
import length from '../../plugins/length/index.js'
import { runPluginCase } from '../../src/engine/plugin-tester.js'
import { quoteSpan, toFindingRecords } from '../../src/findings/finding-records.js'
import { issueText } from '../../src/findings/issue-text.js'

const wellFormed = (s: string | undefined) => s === undefined || !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)
const LINE_BREAKS = /\r\n|[\r\n\u2028\u2029\u0085\v\f]/g
const lines = (t: string) => t.split(LINE_BREAKS)

describe('no emoji cut in half', () => {
  it('quoteSpan: clipping a long span', () => {
    const text = '😀'.repeat(60) // 120 code units; the clip keeps 79: the high half of the 40th
    const q = quoteSpan(text, 0, text.length)!
    expect(wellFormed(q)).toBe(true)
    expect(q).toBe(`${'😀'.repeat(39)}…`)
  })

  it('quoteSpan: the context around an empty or blank span', () => {
    const family = '👨‍👩‍👧1,000 %d'
    expect(wellFormed(quoteSpan(`${family}  `, family.length + 2, family.length + 2))).toBe(true)
    // Context before starting at unit 5: the low half of the third emoji.
    const q = quoteSpan(`${'😀'.repeat(8)}x  `, 17, 19)!
    expect(wellFormed(q)).toBe(true)
    expect(q).toBe('…😀😀😀😀😀x  ')
    // An empty span pointing inside a pair (an offset one unit off) quotes around the whole character.
    expect(wellFormed(quoteSpan('😀😀😀😀😀😀😀😀 ', 15, 15))).toBe(true)
  })

  it('icu: the span of a syntax error that points at an emoji', async () => {
    const source = '{n, plural, one {# file} other {# files}}'
    const translation = '{n, plural, one 😀 {# fichier} other {# fichiers}}'
    const f = await runPluginCase(icu, { source, translation, targetLanguage: 'fr' })
    expect(f.map((x) => x.code)).toEqual(['invalid-icu'])
    expect(f[0]!.span).toEqual({ start: 16, end: 18, in: 'translation' })
    const [rec] = toFindingRecords(f, { source, translation })
    expect(rec!.quote).toBe('😀')
  })

  it('length: the plural form named in an over-limit message', async () => {
    const plural = `Dateien: ${'😀'.repeat(20)}` // code unit 19 is the high half of an emoji
    const f = await runPluginCase(length, { source: '{n} files', translation: 'x', maxLength: 5, targetLanguage: 'de', plurals: [{ plural: 'one', text: 'x' }, { plural: 'other', text: plural }] })
    const m = f.find((x) => x.message.startsWith('Plural form'))!
    expect(wellFormed(m.message)).toBe(true)
    expect(m.message).toContain(`"Dateien: ${'😀'.repeat(11)}…"`)
    // A short form is not said to be cut.
    const short = await runPluginCase(length, { source: '{n} files', translation: 'x', maxLength: 3, targetLanguage: 'de', plurals: [{ plural: 'one', text: 'x' }, { plural: 'other', text: 'Dateien' }] })
    expect(short.find((x) => x.message.startsWith('Plural form'))!.message).toContain('Plural form "Dateien" is 7')
  })

  it('issue text: a lone half that reached a message or a quote anyway is replaced, not sent', () => {
    const t = issueText([{ check: 'c', severity: 'error', message: 'Bad \ud83d', quote: 'a\ude00b', in: 'translation' }], { pipelineName: 'p', hash: '0'.repeat(16) })
    expect(wellFormed(t)).toBe(true)
  })
})

describe('one line per finding in the issue', () => {
  it('a quote with a lone CR, U+2028 or U+2029', () => {
    const base = issueText([{ check: 'c', severity: 'error', message: 'Bad', quote: 'ab', in: 'translation' }], { pipelineName: 'p', hash: '0'.repeat(16) })
    for (const q of ['a\rb', 'a\u2028b', 'a\u2029b', 'a\r\nb']) {
      const t = issueText([{ check: 'c', severity: 'error', message: 'Bad', quote: q, in: 'translation' }], { pipelineName: 'p', hash: '0'.repeat(16) })
      expect(lines(t).length).toBe(lines(base).length)
      expect(t).toContain('“a⏎b”')
    }
  })

  it('a message holding a line break (length names the start of a plural form)', async () => {
    const source = '{n} files'
    const plurals = [{ plural: 'one', text: 'x' }, { plural: 'other', text: 'Dateien\nund noch mehr Dateien' }]
    const f = await runPluginCase(length, { source, translation: 'x', maxLength: 5, targetLanguage: 'de', plurals })
    const t = issueText(toFindingRecords(f, { source, translation: 'x' }), { pipelineName: 'p', hash: '0'.repeat(16) })
    expect(lines(t).filter((l) => l && !l.startsWith('- ') && !/sent this string back|To fix|resolved by itself/.test(l))).toEqual([])
    expect(lines(t).filter((l) => l.startsWith('- ')).length).toBe(f.length)
  })
})
