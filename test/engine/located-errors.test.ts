// Errors that point into a pipeline file (src/engine/located-error.ts): the line and column each
// names, and how `switchyard validate` prints it.
import { describe, expect, it } from 'vitest'
import { LineCounter, parseDocument } from 'yaml'
import { formatLocatedError, SourceFile } from '../../src/engine/located-error.js'

function source(text: string): SourceFile {
  const lineCounter = new LineCounter()
  return new SourceFile('p.yaml', text, lineCounter, parseDocument(text, { lineCounter }))
}

const at = (src: SourceFile, offset: number) => { const e = src.errorAt(offset, 'm'); return `${e.line}:${e.col} ${e.excerpt}` }

describe('formatLocatedError', () => {
  it('file:line:col message, the line (tabs as spaces) and a caret under the column', () => {
    expect(formatLocatedError({ file: 'p.yaml', line: 2, col: 3, message: 'bad', excerpt: '\tab: c' })).toBe('p.yaml:2:3 bad\n     ab: c\n      ^')
    expect(formatLocatedError({ file: 'p.yaml', line: 2, col: 1, message: 'bad', excerpt: 'x' })).toBe('p.yaml:2:1 bad\n    x\n    ^')
  })

  it('a column past the line puts the caret at its end; no excerpt, no lines', () => {
    expect(formatLocatedError({ file: 'p.yaml', line: 1, col: 9, message: 'bad', excerpt: 'abc' })).toBe('p.yaml:1:9 bad\n    abc\n       ^')
    expect(formatLocatedError({ file: 'p.yaml', line: 1, col: 0, message: 'bad', excerpt: 'abc' })).toBe('p.yaml:1:0 bad\n    abc\n    ^')
    expect(formatLocatedError({ file: 'p.yaml', line: 1, col: 1, message: 'bad' })).toBe('p.yaml:1:1 bad')
  })
})

describe('SourceFile', () => {
  const text = 'key: t\r\nchecks:\n  - uses: regex\n    if: "a == 1"\n    with:\n      target: { forbid: x }\nroute: []\nempty:\n'
  const src = source(text)

  it('errorAt: line and column of an offset, clamped to the file, with the line (CRLF or LF)', () => {
    expect(at(src, 0)).toBe('1:1 key: t')
    expect(at(src, 5)).toBe('1:6 key: t')
    expect(at(src, text.indexOf('uses'))).toBe('3:5   - uses: regex')
    expect(at(src, -4)).toBe('1:1 key: t')
    expect(src.errorAt(text.length + 10, 'm')).toMatchObject({ file: 'p.yaml', line: 9, col: 1, message: 'm', excerpt: '' })
  })

  it('errorAtPath: a value, a key, or the nearest ancestor that exists', () => {
    const p = (path: Array<string | number>, where?: 'key' | 'value') => { const e = src.errorAtPath(path, 'm', where); return `${e.line}:${e.col}` }
    expect(p(['checks', 0, 'uses'])).toBe('3:11')
    expect(p(['checks', 0, 'uses'], 'key')).toBe('3:5')
    expect(p(['checks', 0, 'with', 'target', 'forbid'])).toBe('6:25')
    expect(p(['checks', 0, 'with', 'target', 'nope'])).toBe('6:15')
    expect(p(['checks', 5])).toBe('3:3')
    expect(p(['route', 0])).toBe('7:8')
    expect(p(['empty'])).toBe('8:7')
    expect(p(['nope', 'deeper'])).toBe('1:1')
    expect(p(['key', 'x'])).toBe('1:6')
    expect(p([])).toBe('1:1')
  })

  it('offsetInScalar: a character of a plain or quoted one-line value; the value\'s start otherwise', () => {
    const quoted = src.offsetInScalar(['checks', 0, 'if'], 2)
    expect(at(src, quoted)).toBe('4:12     if: "a == 1"')
    expect(at(src, src.offsetInScalar(['checks', 0, 'uses'], 3))).toBe('3:14   - uses: regex')
    expect(at(src, src.offsetInScalar(['checks', 0, 'with'], 3))).toBe('6:7       target: { forbid: x }')
    const single = source("a: 'x == 1'\n")
    expect(at(single, single.offsetInScalar(['a'], 2))).toBe("1:7 a: 'x == 1'")
    const folded = source('a: >\n  one\n  two\nb: "x\n  y"\n')
    expect(at(folded, folded.offsetInScalar(['a'], 4))).toBe('1:4 a: >')
    expect(at(folded, folded.offsetInScalar(['b'], 3))).toBe('4:4 b: "x')
  })
})
