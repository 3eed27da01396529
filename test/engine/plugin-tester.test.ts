// PluginTester itself: an invalid case passes only when each finding matches what it lists,
// including the side of a span when the case names one.
import { describe, expect, it } from 'vitest'
import { PluginTester, runPluginCase, type InvalidPluginTestCase } from '../../src/engine/plugin-tester.js'
import { defineMessages, definePlugin, type FindingInput, type PluginDefinition } from '../../src/engine/types.js'

// A check that reports the first "X" of the source (span in the source) and of the translation.
const findX = definePlugin({
  name: 'find-x',
  description: 'Reports X.',
  options: { type: 'object', additionalProperties: false, properties: {} } as const,
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

// The same check with declared codes; `rogue` makes it give a finding its messages do not allow.
const { messages, report } = defineMessages({
  'x-in-source': { severity: 'error', meaning: 'X in the source.', text: 'X in the source' },
  'x-in-translation': { severity: 'warning', meaning: 'X in the translation.', text: (d: { at: number }) => `X at ${d.at} in the translation` },
})
const findXCoded = definePlugin({
  name: 'find-x-coded',
  description: 'Reports X, with codes.',
  options: { type: 'object', additionalProperties: false, properties: { rogue: { enum: ['none', 'code', 'severity'], default: 'none' } } } as const,
  messages,
  needs: ['translation'],
  create(options) {
    return {
      check(item) {
        const out: FindingInput[] = []
        const s = item.source.indexOf('X')
        if (s >= 0) out.push(report('x-in-source', { span: { start: s, end: s + 1, in: 'source' } }))
        const t = (item.translation ?? '').indexOf('X')
        if (t >= 0) out.push(report('x-in-translation', { at: t }))
        if (options.rogue === 'code') out.push({ code: 'made-up', message: 'made up' })
        if (options.rogue === 'severity') out.push(report('x-in-source', { severity: 'info' }))
        return out
      },
    }
  },
}) as unknown as PluginDefinition<never>

/** Run one invalid case through PluginTester and return its error, if any. */
async function outcome(c: InvalidPluginTestCase, definition: PluginDefinition<never> = findX): Promise<string | undefined> {
  const tests: Array<() => Promise<void>> = []
  const tester = new PluginTester()
  const saved = { describe: PluginTester.describe, it: PluginTester.it }
  PluginTester.describe = (_name, fn) => fn()
  PluginTester.it = (_name, fn) => void tests.push(fn)
  try {
    tester.run(definition, { valid: [], invalid: [c] })
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

describe('PluginTester: a plugin that declares its messages', () => {
  const coded = (c: InvalidPluginTestCase) => outcome(c, findXCoded)

  it('report() gives the code, the message and the declared severity', async () => {
    expect(await runPluginCase(findXCoded, { source: 'aX', translation: 'bX' })).toEqual([
      { check: 'find-x-coded', code: 'x-in-source', severity: 'error', message: 'X in the source', span: { start: 1, end: 2, in: 'source' } },
      { check: 'find-x-coded', code: 'x-in-translation', severity: 'warning', message: 'X at 1 in the translation' },
    ])
  })

  it('passes when each finding names its code and side', async () => {
    expect(await coded({ source: 'X', translation: 'X', findings: [{ code: 'x-in-source', in: 'source' }, { code: 'x-in-translation' }] })).toBeUndefined()
  })

  it('fails on a wrong code, a missing code, a wrong side and a count', async () => {
    expect(await coded({ source: 'X', translation: 'a', findings: [{ code: 'x-in-translation', in: 'source' }] })).toBe('finding 1: code x-in-source, expected x-in-translation')
    expect(await coded({ source: 'X', translation: 'a', findings: [{ in: 'source' }] })).toBe('finding 1: the case names no code (the plugin declares messages): the finding is x-in-source')
    expect(await coded({ source: 'X', translation: 'a', findings: [{ code: 'x-in-source' }] })).toBe('finding 1: x-in-source: span in the source, expected no span')
    expect(await coded({ source: 'a', translation: 'X', findings: [{ code: 'x-in-translation', in: 'translation' }] })).toBe('finding 1: x-in-translation: no span, expected in the translation')
    expect(await coded({ source: 'X', translation: 'a', findings: 1 })).toBe('the case counts findings: list their codes (the plugin declares messages)')
  })

  it('refuses a finding whose code or severity its messages do not declare', async () => {
    await expect(runPluginCase(findXCoded, { source: 'a', translation: 'b', options: { rogue: 'code' } })).rejects.toThrow('plugin "find-x-coded": finding code "made-up" is not declared in its messages')
    await expect(runPluginCase(findXCoded, { source: 'a', translation: 'b', options: { rogue: 'severity' } })).rejects.toThrow('finding "x-in-source" has severity info; its messages declare error')
  })
})

// The engine gives every check its time limit (context.timeoutMs); a test context had none, so a
// plugin that bounds its retries by it was tested without the limit the worker gives it.
describe('PluginTester: the check\'s time limit', () => {
  const limitOf = (timeoutMs?: number) => definePlugin({
    name: 'says-limit',
    description: 'Reports its context.timeoutMs.',
    options: { type: 'object', additionalProperties: false, properties: {} } as const,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    create(_options, context) {
      return { check: () => [{ message: String(context.timeoutMs) }] }
    },
  }) as unknown as PluginDefinition<never>
  const said = async (definition: PluginDefinition<never>, timeout?: number) =>
    (await runPluginCase(definition, { source: 'a', translation: 'b', ...(timeout !== undefined ? { timeout } : {}) }))[0]!.message

  it("is the engine's default: the plugin's timeoutMs, else 30 s", async () => {
    expect(await said(limitOf())).toBe('30000')
    expect(await said(limitOf(1500))).toBe('1500')
  })

  it("is the case's timeout when it sets one, as a pipeline's `timeout` sets it", async () => {
    expect(await said(limitOf(1500), 250)).toBe('250')
  })
})
