// What a pipeline may not say, refused at load with the place and the reason rather than loaded
// to misbehave: a timeout past what a timer can wait (Node fires such a timer at once: every call
// would time out), a check called `engine` (conditions count a plugin's failure under it). And
// keys that cannot apply where they are written (a preset's on a plugin's check, a plugin's on a
// preset), once dropped without a word: a warning that says so.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadPipelines } from '../../src/engine/load-pipelines.js'
import { resolvePluginOptions } from '../../src/engine/instantiate-plugin.js'
import { MAX_TIMER_MS, type PluginDefinition } from '../../src/engine/types.js'
import aiProofread from '../../plugins/ai-proofread/index.js'
import { pipelineYaml, testDeps, writePipelines } from './helpers.js'

/** The load errors of a pipeline with these checks (indented list items), as "line message". */
async function errorsOf(checks: string, deps = testDeps()) {
  const { paths } = writePipelines({ 'p.yaml': pipelineYaml(`checks:\n${checks}route:\n  - to: passed\n`) })
  const r = await loadPipelines(paths, deps)
  if (r.ok) await r.set.close(0)
  return r.ok ? [] : r.errors.map((e) => `${e.line} ${e.message}`)
}

/** A plugins directory with one plugin named `name`, whose definition has `extra` (JS source). */
function pluginsDir(name: string, extra = '') {
  const dir = mkdtempSync(path.join(tmpdir(), 'load-refusals-'))
  writeFileSync(path.join(dir, `${name}.mjs`), `export default {
  name: '${name}', description: 'passes everything', options: { type: 'object', additionalProperties: false, properties: {} },${extra}
  create() { return { check: () => [] } },
}`)
  return dir
}

describe('refused at load', () => {
  it('a timeout past what a timer can wait, on a check or in an override; the limit itself loads', async () => {
    expect(await errorsOf(`  - uses: regex\n    timeout: ${MAX_TIMER_MS + 1}\n    with: { target: { forbid: x } }\n`)).toEqual([expect.stringMatching(/^\d+ .*timeout.*2147483647/)])
    expect(await errorsOf(`  - uses: minimal\n    overrides: { placeholders: { timeout: 3000000000 } }\n`)).toEqual([expect.stringMatching(/timeout.*2147483647/)])
    expect(await errorsOf(`  - uses: regex\n    timeout: ${MAX_TIMER_MS}\n    with: { target: { forbid: x } }\n`)).toEqual([])
  })

  it("ai-proofread's timeoutMs past what a timer can wait", () => {
    expect(() => resolvePluginOptions(aiProofread as unknown as PluginDefinition, { timeoutMs: 3_000_000_000 })).toThrow(/timeoutMs.*2147483647/)
    expect(() => resolvePluginOptions(aiProofread as unknown as PluginDefinition, { timeoutMs: MAX_TIMER_MS })).not.toThrow()
  })

  it("a plugin whose own timeoutMs is past what a timer can wait, or not a number of ms", async () => {
    for (const bad of ['3000000000', '0', '1.5', "'60s'"]) {
      const errors = await errorsOf('  - uses: patient\n', testDeps({ pluginsDir: pluginsDir('patient', `\n  timeoutMs: ${bad},`) }))
      expect(errors.join('\n'), bad).toMatch(/`timeoutMs` must be a whole number of ms from 1 to 2147483647/)
    }
  })

  it('a check called engine, by its id or by its plugin\'s name', async () => {
    expect(await errorsOf('  - uses: regex\n    id: engine\n    with: { target: { forbid: x } }\n')).toEqual([expect.stringContaining('the id "engine" is the engine\'s own')])
    expect(await errorsOf('  - uses: engine\n', testDeps({ pluginsDir: pluginsDir('engine') }))).toEqual([expect.stringContaining('the id "engine" is the engine\'s own')])
  })

})

describe('a name that breaks the naming rule', () => {
  // An output called "a b" or "Bad" was reported twice each, both times at the first output (a
  // valid one) and without its name: "outputs: must match pattern ..." then "property name must be valid".
  it('is reported once, at its own key, naming it', async () => {
    const { paths } = writePipelines({ 'p.yaml': `key: t
name: Test
input: [translated]
outputs:
  passed: { port: approved }
  "a b": { port: translated }
  Bad: { port: translated }
checks: []
route:
  - to: passed
` })
    const r = await loadPipelines(paths, testDeps())
    expect(r.ok).toBe(false)
    expect(r.ok ? [] : r.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([
      '6:3 outputs: the name "a b" must match pattern "^[a-z0-9][a-z0-9-_]*$"',
      '7:3 outputs: the name "Bad" must match pattern "^[a-z0-9][a-z0-9-_]*$"',
    ])
  })
})

describe('warned of at load (they loaded before, and still do)', () => {
  it("a preset's keys on a plugin's check, and a plugin's keys on a preset, each named as ignored", async () => {
    expect(await warningsOf('  - uses: regex\n    with: { target: { forbid: x } }\n    overrides: { regex: { severity: warning } }\n')).toEqual([expect.stringContaining('"overrides" changes the checks of a preset; "regex" is a plugin')])
    expect(await warningsOf('  - uses: regex\n    with: { target: { forbid: x } }\n    fallback: [{ uses: length }]\n')).toEqual([expect.stringContaining('"fallback" stands in for a preset that does not exist; "regex" is a plugin')])
    expect(await warningsOf('  - uses: minimal\n    with: { formats: [printf] }\n')).toEqual([expect.stringContaining('"with" does not apply to a preset')])
    expect(await warningsOf('  - uses: minimal\n    id: mine\n')).toEqual([expect.stringContaining('"id" does not apply to a preset')])
  })
})

/** The load warnings of a pipeline with these checks, which must load. */
async function warningsOf(checks: string) {
  const { paths } = writePipelines({ 'p.yaml': pipelineYaml(`checks:\n${checks}route:\n  - to: passed\n`) })
  const r = await loadPipelines(paths, testDeps())
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join('\n'))
  await r.set.close(0)
  return r.warnings.map((w) => `${w.line} ${w.message}`)
}
