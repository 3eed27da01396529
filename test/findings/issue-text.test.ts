// The issue a translator reads: findings in plain words, the offending text quoted from the
// findings' spans, errors first; its type; and the findings' identity (hash).
import { describe, expect, it } from 'vitest'
import type { Finding } from '../../src/engine/types.js'
import { findingsHash, MAX_MESSAGE, quoteSpan, toFindingRecords } from '../../src/findings/finding-records.js'
import { issueFindings, issueText, issueTypeOf, MAX_LISTED, ownReference, REFERENCE } from '../../src/findings/issue-text.js'

const texts = { source: 'Hello {name}, you have {count} new messages', translation: 'Bonjour, vous avez {count} nouveaux  messages' }
const findings: Finding[] = [
  { check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', code: 'placeholder.missing', span: { start: 6, end: 12, in: 'source' } },
  { check: 'whitespace', severity: 'warning', message: 'Double space', span: { start: 35, end: 37 } },
  { check: 'length', severity: 'info', message: 'Longer than the source by 2%' },
]

describe('finding records', () => {
  it('quote the text the span covers, in the text it names (the translation by default)', () => {
    const records = toFindingRecords(findings, texts)
    expect(records[0]).toEqual({ check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', code: 'placeholder.missing', quote: '{name}', in: 'source' })
    // A blank span is shown with what surrounds it, else it would read as nothing.
    expect(records[1]).toMatchObject({ quote: '…nt} nouveaux  messages', in: 'translation' })
    expect(records[2]).toEqual({ check: 'length', severity: 'info', message: 'Longer than the source by 2%' })
  })

  it.each([
    ['a span outside the text', 'abc', 2, 9, undefined],
    ['a reversed span', 'abc', 2, 1, undefined],
    ['an empty span at the end', 'abc', 3, 3, 'abc'],
    ['a long span, clipped', 'x'.repeat(200), 0, 200, `${'x'.repeat(79)}…`],
  ])('quoteSpan: %s', (_what, text, start, end, quote) => {
    expect(quoteSpan(text, start, end)).toBe(quote)
  })

  it('without a translation (a source-only pipeline) a translation span quotes nothing', () => {
    expect(toFindingRecords([findings[1]!], { source: 'x' })[0]).not.toHaveProperty('quote')
  })

  it('keep a message to MAX_MESSAGE characters (one may quote a whole text), never cutting a character in two', () => {
    const long = `Found ${'a'.repeat(MAX_MESSAGE - 8)}😀${'b'.repeat(49_000)}`
    const [record] = toFindingRecords([{ check: 'regex', severity: 'error', message: long }], { source: 's', translation: 't' })
    expect(record!.message.length).toBeLessThanOrEqual(MAX_MESSAGE)
    expect(record!.message.endsWith('…')).toBe(true)
    expect(record!.message).not.toMatch(/[\ud800-\udbff]…$/)
    const [short] = toFindingRecords([{ check: 'regex', severity: 'error', message: 'Found x' }], { source: 's' })
    expect(short!.message).toBe('Found x')
  })

  it('hash: the same findings in any order are the same; another message or quote is not', () => {
    const r = toFindingRecords(findings, texts)
    expect(findingsHash(r)).toBe(findingsHash([...r].reverse()))
    expect(findingsHash(r)).toMatch(/^[0-9a-f]{16}$/)
    expect(findingsHash(r)).not.toBe(findingsHash([{ ...r[0]!, quote: '{nom}' }, r[1]!, r[2]!]))
    expect(findingsHash(r)).not.toBe(findingsHash(r.slice(1)))
  })
})

describe('issue text', () => {
  const records = toFindingRecords(findings, texts)
  it('lists errors to fix, then warnings, with the text quoted, and ends with its reference', () => {
    const text = issueText(issueFindings(records), { pipelineName: 'QA gate', hash: '0123456789abcdef' })
    expect(text).toBe([
      'QA gate sent this string back.',
      '',
      'To fix:',
      '- Placeholder {name} is missing — in the source: “{name}” (placeholders)',
      '',
      'Also worth a look:',
      '- Double space — in the translation: “…nt} nouveaux  messages” (whitespace)',
      '',
      'This issue is resolved by itself once the string passes the check again. [switchyard:0123456789abcdef]',
    ].join('\n'))
    expect(REFERENCE.exec(text)?.[1]).toBe('0123456789abcdef')
    expect(ownReference(text)).toBe('0123456789abcdef')
    expect(ownReference(text.replace(/\n/g, '\r\n'))).toBe('0123456789abcdef')
  })

  it('knows its own issues by their first and last lines, not by the reference alone (a reviewer may quote it)', () => {
    const own = issueText(records, { pipelineName: 'QA\ngate', hash: 'a'.repeat(16) })
    expect(own.split('\n')[0]).toBe('QA gate sent this string back.')
    expect(ownReference(own)).toBe('a'.repeat(16))
    const lastLine = own.split('\n').at(-1)!
    expect(ownReference(`I think this check is wrong, see:\n> ${lastLine}`)).toBeUndefined()
    expect(ownReference(own.split('\n').map((l) => `> ${l}`).join('\n'))).toBeUndefined()
    expect(ownReference(`Please look again: [switchyard:${'a'.repeat(16)}]`)).toBeUndefined()
    expect(ownReference(`${own}\n\nA reviewer added this.`)).toBeUndefined()
    // Written by an earlier version, whose first line kept a name's line break (YAML `name: >`).
    expect(ownReference(own.replace('QA gate sent', 'QA gate\n sent'))).toBe('a'.repeat(16))
  })

  it('info findings stay out of the issue; line breaks in a quote do not break the list', () => {
    expect(issueFindings(records).map((r) => r.check)).toEqual(['placeholders', 'whitespace'])
    const text = issueText([{ check: 'tags', severity: 'error', message: 'Tag <b> is not closed', quote: 'a\nb', in: 'translation' }], { pipelineName: 'P', hash: 'f'.repeat(16) })
    expect(text).toContain('To fix:\n- Tag <b> is not closed — in the translation: “a⏎b” (tags)')
    expect(text).not.toContain('Also worth a look')
  })

  it('lists at most MAX_LISTED findings, errors first, and says how many more', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ check: 'c', severity: (i % 2 ? 'warning' : 'error') as 'warning' | 'error', message: `finding ${i}` }))
    const text = issueText(many, { pipelineName: 'P', hash: '0'.repeat(16) })
    expect(text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(MAX_LISTED)
    expect(text).toContain('To fix (15):')
    expect(text).toContain('… and 10 more')
    expect(text).toMatch(/\[switchyard:0{16}\]$/)
  })

  it('is a source mistake only when every finding is about the source', () => {
    expect(issueTypeOf(issueFindings(records))).toBe('translation_mistake')
    expect(issueTypeOf(records.slice(0, 1))).toBe('source_mistake')
    expect(issueTypeOf([{ check: 'x', severity: 'error', message: 'm' }])).toBe('translation_mistake')
  })
})
