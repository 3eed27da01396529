// PluginTester as a plugin author meets it: the item and context a case gets by default, the
// names of the tests it registers, and the message of each way a case fails.
import { describe, expect, it } from 'vitest'
import { PluginTester, runPluginCase, testContext, testItem, type InvalidPluginTestCase, type PluginTestCase } from '../../src/engine/plugin-tester.js'
import { definePlugin, type FindingInput, type Item, type PluginContext, type PluginDefinition } from '../../src/engine/types.js'

/** A plugin whose findings are the case's `source` read as JSON (a list of findings); it records what it was given. */
function scripted(kind: 'check' | 'checkBatch' | 'none' = 'check') {
  const seen: { items: Item[]; contexts: PluginContext[]; options: unknown[]; closed: number } = { items: [], contexts: [], options: [], closed: 0 }
  const findings = (item: Item): FindingInput[] => (item.source.startsWith('[') ? JSON.parse(item.source) : [])
  const definition = definePlugin({
    name: 'scripted',
    description: 'Answers what the case says.',
    options: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer', default: 1 } } } as const,
    // Given the translation, as the worker gives it only to plugins that declare the need.
    needs: ['translation'],
    create(options, context) {
      seen.options.push(options)
      seen.contexts.push(context)
      const close = () => { seen.closed++ }
      if (kind === 'checkBatch') return { checkBatch: async (list: Item[]) => { seen.items.push(...list); return list.map(findings) }, close }
      if (kind === 'none') return { onEvent() {}, close }
      return { check: (item: Item) => { seen.items.push(item); return findings(item) }, close }
    },
  }) as unknown as PluginDefinition<never>
  return { definition, seen }
}

/** Register the cases, run each registered test; names and outcomes (undefined: passed). */
async function register(definition: PluginDefinition<never>, cases: { valid?: PluginTestCase[]; invalid?: InvalidPluginTestCase[] }) {
  const names: string[] = []
  const tests: Array<() => Promise<void>> = []
  const saved = { describe: PluginTester.describe, it: PluginTester.it }
  const path: string[] = []
  PluginTester.describe = (name, fn) => { path.push(name); fn(); path.pop() }
  PluginTester.it = (name, fn) => { names.push([...path, name].join(' > ')); tests.push(fn) }
  try {
    new PluginTester().run(definition, { valid: cases.valid ?? [], invalid: cases.invalid ?? [] })
  } finally {
    PluginTester.describe = saved.describe
    PluginTester.it = saved.it
  }
  const outcomes = await Promise.all(tests.map((t) => t().then(() => undefined, (e: Error) => e.message)))
  return { names, outcomes }
}

const json = (findings: FindingInput[]) => JSON.stringify(findings)

describe('the item and context a case gets', () => {
  it('defaults: en→fr, key.1, no context, no limit, no labels, not plural, no settings', async () => {
    const { definition, seen } = scripted()
    await runPluginCase(definition, { source: 'Save', translation: 'Enregistrer' })
    expect(seen.items[0]).toMatchObject({
      id: 1, key: 'key.1', context: '', maxLength: 0, source: 'Save', translation: 'Enregistrer', isPlural: false, fileType: '', filePath: '',
      labelIds: [], settings: {}, projectId: 1, stepId: 1, organizationId: '1',
      sourceLanguage: { id: 'en' }, targetLanguage: { id: 'fr' },
    })
    expect(seen.items[0]!.plurals).toBeUndefined()
    expect(seen.items[0]!.signal.aborted).toBe(false)
    expect(seen.options).toEqual([{ n: 1 }])
    expect(seen.closed).toBe(1)
  })

  it('as the case says: fields, languages, options, settings; plural forms make it plural', async () => {
    const { definition, seen } = scripted()
    const plurals = [{ plural: 'one', text: 'fichier' }, { plural: 'other', text: 'fichiers' }]
    await runPluginCase(definition, {
      source: 'files', translation: '', key: 'k', context: 'c', maxLength: 9, fileType: 'json', labelIds: [3], plurals,
      sourceLanguage: 'de', targetLanguage: 'pt-BR', options: { n: 4 }, settings: { strict: true },
    })
    expect(seen.items[0]).toMatchObject({ key: 'k', context: 'c', maxLength: 9, fileType: 'json', labelIds: [3], isPlural: true, plurals, settings: { strict: true }, sourceLanguage: { id: 'de' }, targetLanguage: { id: 'pt-BR' } })
    expect(seen.options).toEqual([{ n: 4 }])
    expect(testItem({ source: 'a', translation: 'b', isPlural: true }, 7)).toMatchObject({ id: 7, key: 'key.7', isPlural: true })
  })

  it('the context: pipeline "test", the check named after the plugin, a working cache, nothing in env; overridable', async () => {
    const { definition, seen } = scripted()
    await runPluginCase(definition, { source: 'a', translation: 'b' })
    const context = seen.contexts[0]!
    expect(context).toMatchObject({ pipelineKey: 'test', pipelineDir: process.cwd(), checkId: 'scripted', env: {} })
    await context.cache.set('k', { v: 1 })
    expect(await context.cache.get('k')).toEqual({ v: 1 })
    expect(await context.cache.get('other')).toBeUndefined()
    expect(() => context.metrics.add('x')).not.toThrow()
    expect(testContext(definition, { checkId: 'mine', env: { A: '1' } })).toMatchObject({ pipelineKey: 'test', checkId: 'mine', env: { A: '1' } })
  })
})

describe('runPluginCase', () => {
  it('fills in the check and the severity a finding leaves out, and keeps those it gives', async () => {
    const { definition } = scripted()
    expect(await runPluginCase(definition, { source: json([{ message: 'a' }, { message: 'b', check: 'sub', severity: 'info' }]), translation: '' })).toEqual([
      { check: 'scripted', severity: 'error', message: 'a' },
      { check: 'sub', severity: 'info', message: 'b' },
    ])
  })

  it('runs a checkBatch plugin on the one item; refuses a plugin with neither', async () => {
    const batch = scripted('checkBatch')
    expect(await runPluginCase(batch.definition, { source: json([{ message: 'a' }]), translation: '' })).toEqual([{ check: 'scripted', severity: 'error', message: 'a' }])
    expect(batch.seen.items).toHaveLength(1)
    expect(batch.seen.closed).toBe(1)
    await expect(runPluginCase(scripted('none').definition, { source: 'a', translation: 'b' })).rejects.toThrow('plugin "scripted" has neither check() nor checkBatch()')
  })

  // Rule: a case passes only where the worker would take the result (run-pipeline.ts): an array
  // of findings with a message each; a severity the worker does not know counts as an error there.
  it('refuses what the worker fails as plugin-bad-result, and reads an unknown severity as the worker does', async () => {
    const returning = (value: unknown, kind: 'check' | 'checkBatch' = 'check') =>
      ({ ...scripted().definition, create: () => (kind === 'check' ? { check: () => value } : { checkBatch: () => value }) }) as unknown as PluginDefinition<never>
    const c = { source: 'a', translation: 'b' }
    await expect(runPluginCase(returning(undefined), c)).rejects.toThrow('plugin "scripted": returned nothing instead of an array of findings (the worker fails the string with plugin-bad-result)')
    await expect(runPluginCase(returning({ message: 'a' }), c)).rejects.toThrow('returned object instead of an array of findings')
    await expect(runPluginCase(returning([{ message: 'a' }, { text: 'no message' }]), c)).rejects.toThrow('plugin "scripted": finding 1 has no message')
    await expect(runPluginCase(returning([], 'checkBatch'), c)).rejects.toThrow('checkBatch() returned 0 results for 1 string')
    expect(await runPluginCase(returning([{ message: 'a', severity: 'warn' }]), c)).toEqual([{ check: 'scripted', severity: 'error', message: 'a' }])
  })

  it('with declared messages, a finding without a code is refused', async () => {
    const { definition } = scripted()
    const coded = { ...definition, messages: { known: { severity: 'error', meaning: 'm', text: 't' } } } as unknown as PluginDefinition<never>
    await expect(runPluginCase(coded, { source: json([{ message: 'no code' }]), translation: '' })).rejects.toThrow('plugin "scripted": finding without a code: "no code"')
    await expect(runPluginCase(coded, { source: json([{ message: 'ok', code: 'known' }]), translation: '' })).resolves.toHaveLength(1)
    await expect(runPluginCase(coded, { source: json([{ message: 'x', code: 'toString' }]), translation: '' })).rejects.toThrow('finding code "toString" is not declared in its messages')
    // A code may allow several severities.
    const either = { ...definition, messages: { soft: { severity: ['warning', 'info'], meaning: 'm', text: 't' } } } as unknown as PluginDefinition<never>
    await expect(runPluginCase(either, { source: json([{ message: 'ok', code: 'soft', severity: 'info' }]), translation: '' })).resolves.toHaveLength(1)
    await expect(runPluginCase(either, { source: json([{ message: 'x', code: 'soft' }]), translation: '' })).rejects.toThrow('plugin "scripted": finding "soft" has severity error; its messages declare warning or info')
  })
})

describe('the tests PluginTester registers', () => {
  it('one per case, under the plugin\'s name and valid/invalid, named by the case or its texts', async () => {
    const { definition } = scripted()
    const long = 'x'.repeat(41)
    const { names, outcomes } = await register(definition, {
      valid: [{ source: 'Save', translation: 'Enregistrer' }, { name: 'my case', source: 'a', translation: 'b' }],
      invalid: [{ source: json([{ message: 'm' }]), translation: long, sourceLanguage: 'de', targetLanguage: 'ja', findings: 1 }],
    })
    expect(names).toEqual([
      'scripted > valid > en→fr "Save" → "Enregistrer"',
      'scripted > valid > my case',
      `scripted > invalid > de→ja "[{\\"message\\":\\"m\\"}]" → "${'x'.repeat(40)}…"`,
    ])
    expect(outcomes).toEqual([undefined, undefined, undefined])
    expect((await register(definition, { valid: [{ source: 'x'.repeat(40), translation: '' }] })).names).toEqual([`scripted > valid > en→fr "${'x'.repeat(40)}" → ""`])
  })

  it('needs describe and it', () => {
    const saved = { describe: PluginTester.describe, it: PluginTester.it }
    try {
      PluginTester.describe = undefined
      PluginTester.it = (() => {}) as never
      expect(() => new PluginTester().run(scripted().definition, { valid: [], invalid: [] })).toThrow('PluginTester needs describe/it: set PluginTester.describe and PluginTester.it')
      PluginTester.describe = (() => {}) as never
      PluginTester.it = undefined
      expect(() => new PluginTester().run(scripted().definition, { valid: [], invalid: [] })).toThrow('PluginTester needs describe/it')
    } finally {
      PluginTester.describe = saved.describe
      PluginTester.it = saved.it
    }
  })
})

describe('how a case fails', () => {
  const { definition } = scripted()
  const one = async (c: PluginTestCase | InvalidPluginTestCase) => (await register(definition, 'findings' in c ? { invalid: [c] } : { valid: [c] })).outcomes[0]

  it('a valid case with findings lists them', async () => {
    expect(await one({ source: json([{ message: 'a' }, { message: 'b', severity: 'warning' }]), translation: '' })).toBe('expected no finding, got 2:\n  error: a\n  warning: b')
  })

  it('a wrong count lists what was found, with codes, or says none', async () => {
    expect(await one({ source: json([{ message: 'a', code: 'c-1' }]), translation: '', findings: 2 })).toBe('expected 2 finding(s), got 1:\n  error c-1: a')
    expect(await one({ source: '[]', translation: '', findings: [{ message: 'a' }] })).toBe('expected 1 finding(s), got 0:\n  (none)')
  })

  it('each field the case names is checked: code, message, severity, suggestion, span', async () => {
    const f = { message: 'Found it here', code: 'c-1', severity: 'warning', suggestion: 'fix', span: { start: 1, end: 3 } }
    const src = json([f as FindingInput])
    const with_ = (expected: object) => one({ source: src, translation: '', findings: [expected] })
    expect(await with_({ code: 'c-1', message: 'it here', severity: 'warning', suggestion: 'fix', span: { start: 1, end: 3 }, in: 'translation' })).toBeUndefined()
    expect(await with_({ message: /^Found/ })).toBeUndefined()
    expect(await with_({ code: 'c-2' })).toBe('finding 1: code c-1, expected c-2')
    expect(await with_({ message: /^it/ })).toBe('finding 1: message "Found it here" does not match /^it/')
    expect(await with_({ severity: 'error' })).toBe('finding 1: severity warning, expected error')
    expect(await with_({ suggestion: 'other' })).toBe('finding 1: suggestion "fix", expected "other"')
    expect(await with_({ suggestion: '' })).toBe('finding 1: suggestion "fix", expected ""')
    expect(await with_({ span: { start: 1, end: 4 } })).toBe('finding 1: span {"start":1,"end":3}, expected {"start":1,"end":4}')
    expect(await with_({ span: { start: 0, end: 3 } })).toBe('finding 1: span {"start":1,"end":3}, expected {"start":0,"end":3}')
    expect(await with_({ in: 'source' })).toBe('finding 1: span in the translation, expected in the source')
    // A finding without a span, where the case expects one.
    expect(await one({ source: json([{ message: 'm' }]), translation: '', findings: [{ span: { start: 0, end: 1 } }] })).toBe('finding 1: span undefined, expected {"start":0,"end":1}')
    expect(await one({ source: json([{ message: 'm' }]), translation: '', findings: [{ in: 'translation' }] })).toBe('finding 1: no span, expected in the translation')
  })

  it('checks the findings in order, naming the first that differs', async () => {
    const src = json([{ message: 'a' }, { message: 'b' }])
    expect(await one({ source: src, translation: '', findings: [{ message: 'a' }, { message: 'c' }] })).toBe('finding 2: message "b" does not match c')
    expect(await one({ source: src, translation: '', findings: [{ message: 'b' }, { message: 'a' }] })).toBe('finding 1: message "a" does not match b')
  })
})
