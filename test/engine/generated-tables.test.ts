// The tables `npm run docs:plugins` (scripts/plugin-readmes.mjs) writes into each plugin's README
// and into docs/pipelines.md, and the messages of the engine's own findings (issue 20: measured
// against their own tests, these two files were at 65% and 0%; catalog.test.ts and
// test/docs/findings-docs.test.ts only compare the committed copies with a fresh table).
// What a writer of a README or of docs/pipelines.md sees: the text between the markers replaced,
// everything else kept, nothing done when the markers are missing or out of order.
import { describe, expect, it } from 'vitest'
import { ENGINE_CODES_MARKERS, engineCodesTable, engineFinding, updateEngineCodes } from '../../src/engine/engine-findings.js'
import { GENERATED, generatedPart, pluginOptionsTable, updatePluginReadme } from '../../src/engine/plugin-readme.js'
import { defineMessages, type PluginDefinition } from '../../src/engine/types.js'

const { messages } = defineMessages({
  'one-thing': { severity: 'warning', meaning: 'A | B\nnext line', text: 'one' },
})
const definition = {
  name: 'demo',
  description: 'demo',
  options: { type: 'object', properties: { strict: { type: 'boolean', default: false } }, additionalProperties: false },
  messages,
  create: () => ({ check: () => [] }),
} as unknown as PluginDefinition<never>

const { options, codes } = GENERATED

describe("a plugin README's generated parts", () => {
  it('replaces the text between each pair of markers and keeps the rest', () => {
    const readme = `# demo\n\nintro\n${options.start}\nold options\n${options.end}\n\nmiddle\n${codes.start}\nold codes\n${codes.end}\nend\n`
    const out = updatePluginReadme(readme, definition)
    expect(out).toBe(
      `# demo\n\nintro\n${options.start}\n${pluginOptionsTable(definition)}\n${options.end}\n\nmiddle\n${codes.start}\n` +
        '| code | severity | meaning |\n|---|---|---|\n| `one-thing` | `warning` | A \\| B next line |\n' +
        `${codes.end}\nend\n`,
    )
    expect(generatedPart(out, 'options')).toBe('| option | type | default | what it does |\n|---|---|---|---|\n| `strict` | boolean | `false` |  |')
    // Written again, nothing changes.
    expect(updatePluginReadme(out, definition)).toBe(out)
  })

  it('leaves out a part whose markers are missing, or whose end comes before its start', () => {
    const onlyCodes = `x\n${codes.start}\n${codes.end}\n`
    expect(updatePluginReadme(onlyCodes, definition)).toBe(`x\n${codes.start}\n${GENERATED.codes.table(definition)}\n${codes.end}\n`)
    const reversed = `x\n${options.end}\n${options.start}\ny\n`
    expect(updatePluginReadme(reversed, definition)).toBe(reversed)
    expect(generatedPart(reversed, 'options')).toBeUndefined()
    expect(generatedPart(`${options.start} only`, 'options')).toBeUndefined()
    expect(generatedPart(`${options.end} only`, 'options')).toBeUndefined()
    expect(generatedPart(`${options.start}${options.end}`, 'options')).toBe('')
  })

  it('the Options table: every kind of type, required options, and cells that keep the table intact', () => {
    const table = pluginOptionsTable({
      options: {
        type: 'object',
        required: ['mode'],
        properties: {
          mode: { enum: ['a', 'b|c'], description: 'which\nway' },
          ids: { type: 'array', items: { type: 'integer' } },
          kinds: { type: 'array', items: { enum: ['x', 'y'] } },
          loose: { type: 'array' },
          anything: { type: 'array', items: true },
          nullable: { type: ['string', 'null'], default: null },
          either: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
          any: { anyOf: [{ type: 'number' }, {}] },
        },
      },
    } as never)
    expect(table.split('\n')).toEqual([
      '| option | type | default | what it does |',
      '|---|---|---|---|',
      '| `mode` | `"a"` \\| `"b\\|c"` | (required) | which way |',
      '| `ids` | array of integer |  |  |',
      '| `kinds` | array of (`"x"` \\| `"y"`) |  |  |',
      '| `loose` | array |  |  |',
      '| `anything` | array |  |  |',
      '| `nullable` | string or null | `null` |  |',
      '| `either` | string or array of string |  |  |',
      '| `any` | number or any |  |  |',
    ])
    expect(pluginOptionsTable({ options: { type: 'object', properties: {} } } as never)).toBe('No options.')
    expect(pluginOptionsTable({ options: { type: 'object' } } as never)).toBe('No options.')
  })
})

describe("docs/pipelines.md's table of engine codes", () => {
  it('is replaced between its markers; a doc without them, or with them out of order, is left alone', () => {
    const doc = `# Pipelines\n\n${ENGINE_CODES_MARKERS.start}\nstale\n${ENGINE_CODES_MARKERS.end}\n\nmore\n`
    const out = updateEngineCodes(doc)
    expect(out).toBe(`# Pipelines\n\n${ENGINE_CODES_MARKERS.start}\n${engineCodesTable()}\n${ENGINE_CODES_MARKERS.end}\n\nmore\n`)
    expect(engineCodesTable().split('\n').slice(0, 3)).toEqual([
      '| code | severity | meaning |',
      '|---|---|---|',
      "| `text-too-long` | `error` | The source, translation or a plural form is longer than the check's `maxTextLength`: the check did not read the string. Counted under that check, with its `severity`. |",
    ])
    expect(updateEngineCodes(out)).toBe(out)
    const missing = `# Pipelines\n${ENGINE_CODES_MARKERS.start}\n`
    expect(updateEngineCodes(missing)).toBe(missing)
    const noStart = `# Pipelines\n${ENGINE_CODES_MARKERS.end}\n`
    expect(updateEngineCodes(noStart)).toBe(noStart)
    const reversed = `${ENGINE_CODES_MARKERS.end}\n${ENGINE_CODES_MARKERS.start}\n`
    expect(updateEngineCodes(reversed)).toBe(reversed)
  })
})

describe("the engine's own findings", () => {
  it('say which check failed and why, or that the pipeline did', () => {
    expect(engineFinding('plugin-threw', { plugin: 'regex', check: 'no-todo', why: 'Error: boom' })).toEqual({
      code: 'plugin-threw', severity: 'error', message: 'plugin "regex" (check "no-todo") failed: Error: boom',
    })
    expect(engineFinding('plugin-timed-out', { why: 'no answer in 30000 ms' }).message).toBe('pipeline failed: no answer in 30000 ms')
    expect(engineFinding('text-too-long', { what: 'translation', length: 70_000, check: 'spelling', limit: 65_536 }).message).toBe(
      'Too long to check: the translation has 70000 characters; check "spelling" reads at most 65536 (maxTextLength)',
    )
  })
})
