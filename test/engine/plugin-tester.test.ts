// PluginTester itself: an invalid case passes only when each finding matches what it lists,
// including the side of a span when the case names one.
import { describe, expect, it } from 'vitest'
import { PluginTester, type InvalidPluginTestCase } from '../../src/engine/plugin-tester.js'
import { definePlugin, type PluginDefinition } from '../../src/engine/types.js'

// A check that reports the first "X" of the source (span in the source) and of the translation.
const findX = definePlugin<Record<string, never>>({
  name: 'find-x',
  description: 'Reports X.',
  options: { type: 'object', additionalProperties: false, properties: {} },
  needs: ['translation'],
  create() {
    return {
      check(item) {
        const out = []
        const s = item.source.indexOf('X')
        if (s >= 0) out.push({ message: 'X in the source', span: { start: s, end: s + 1, in: 'source' as const } })
        const t = (item.translation ?? '').indexOf('X')
        if (t >= 0) out.push({ message: 'X in the translation', span: { start: t, end: t + 1 } })
        return out
      },
    }
  },
}) as unknown as PluginDefinition<never>

/** Run one invalid case through PluginTester and return its error, if any. */
async function outcome(c: InvalidPluginTestCase): Promise<string | undefined> {
  const tests: Array<() => Promise<void>> = []
  const tester = new PluginTester()
  const saved = { describe: PluginTester.describe, it: PluginTester.it }
  PluginTester.describe = (_name, fn) => fn()
  PluginTester.it = (_name, fn) => void tests.push(fn)
  try {
    tester.run(findX, { valid: [], invalid: [c] })
  } finally {
    PluginTester.describe = saved.describe
    PluginTester.it = saved.it
  }
  expect(tests).toHaveLength(1)
  return tests[0]!().then(() => undefined, (e: Error) => e.message)
}

describe('PluginTester: span side', () => {
  it('passes when the span and its side match', async () => {
    expect(await outcome({ source: 'aX', translation: 'X', findings: [{ span: { start: 1, end: 2, in: 'source' } }, { span: { start: 0, end: 1, in: 'translation' } }] })).toBeUndefined()
  })

  it('fails when the case says source and the span is in the translation', async () => {
    expect(await outcome({ source: 'a', translation: 'X', findings: [{ span: { start: 0, end: 1, in: 'source' } }] })).toBe('finding 1: span in the translation, expected in the source')
  })

  it('fails when the case says translation and the span is in the source', async () => {
    expect(await outcome({ source: 'X', translation: 'a', findings: [{ span: { start: 0, end: 1, in: 'translation' } }] })).toBe('finding 1: span in the source, expected in the translation')
  })

  it('does not check the side when the case gives none', async () => {
    expect(await outcome({ source: 'X', translation: 'a', findings: [{ span: { start: 0, end: 1 } }] })).toBeUndefined()
  })
})

describe('PluginTester: messages and counts', () => {
  it('fails on a message that does not match', async () => {
    expect(await outcome({ source: 'X', translation: 'a', findings: [{ message: 'in the translation' }] })).toMatch(/^finding 1: message "X in the source" does not match in the translation$/)
  })

  it('fails on a wrong count, listing what was found', async () => {
    expect(await outcome({ source: 'X', translation: 'X', findings: 1 })).toMatch(/^expected 1 finding\(s\), got 2:\n  error: X in the source\n  error: X in the translation$/)
  })
})
