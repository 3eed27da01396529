import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PRESETS } from '../../plugins/presets.js'
import type { PipelineSet } from '../../src/engine/load-pipelines.js'
import type { Checkpoint } from '../../src/engine/run-pipeline.js'
import { items, loadOne, pipelineYaml, testDeps } from './helpers.js'

const open: PipelineSet[] = []
afterEach(async () => { await Promise.all(open.splice(0).map((s) => s.close(0))) })
async function load(yaml: string, deps = testDeps()) {
  const r = await loadOne(yaml, deps)
  open.push(r.set)
  return { pipeline: r.set.get('t')!, set: r.set, counts: r.deps.counts }
}

describe('routing', () => {
  const yaml = pipelineYaml(`checks:
  - uses: regex
    id: no-double-space
    with: { target: { forbid: '\\s{2,}' } }
  - uses: shout
route:
  - if: errors > 0
    to: failed
  - if: findings.shout > 0 and file.type == "android"
    to: ""
  - to: passed
`)
  it('first matching route wins; "" parks; last route catches the rest', async () => {
    const { pipeline } = await load(yaml)
    const r = await pipeline.run(items([
      { source: 'Save file', translation: 'Enregistrer  le fichier' },
      { source: 'Save file', translation: 'ENREGISTRER', fileType: 'android' },
      { source: 'Save file', translation: 'ENREGISTRER', fileType: 'json' },
      { source: 'Save', translation: 'Enregistrer' },
    ]))
    expect(r.map((x) => [x.id, x.output, x.port])).toEqual([[1, 'failed', 'translated'], [2, null, ''], [3, 'passed', 'approved'], [4, 'passed', 'approved']])
    expect(r[0]!.findings).toEqual([expect.objectContaining({ check: 'no-double-space', severity: 'error', message: expect.stringContaining('must not match') })])
    expect(r[1]!.findings).toEqual([{ check: 'shout', severity: 'warning', message: 'The translation shouts.' }])
  })

  it('keeps the first 20 findings of a check on a string and sums up the rest; routing counts them all', async () => {
    const { pipeline } = await load(pipelineYaml(`checks:
  - uses: regex
    id: r
    with: { target: { forbid: 'a' }, maxFindings: 1000 }
  - uses: regex
    id: r2
    with: { target: { forbid: 'b' } }
route:
  - if: findings.r > 45 and errors > 45
    to: failed
  - to: passed
`))
    const [many, few, some] = await pipeline.run(items([
      { source: 'x', translation: 'a'.repeat(50) },
      { source: 'x', translation: 'a'.repeat(20) },
      { source: 'x', translation: `${'a'.repeat(21)}b` },
    ]))
    expect(many!.output).toBe('failed')
    expect(many!.findings).toHaveLength(21)
    expect(many!.findings.slice(0, 20).every((f) => f.check === 'r' && f.severity === 'error')).toBe(true)
    expect(many!.findings[20]).toEqual({ check: 'r', severity: 'error', code: 'more-findings', message: '30 more findings of check "r" on this string not listed (30 errors; the 20 most severe are); every one of them counted for routing' })
    // Twenty is not cut; the next check's findings are kept after a cut one's summary.
    expect(few!.findings).toHaveLength(20)
    expect(few!.findings.some((f) => f.code === 'more-findings')).toBe(false)
    expect(some!.findings.map((f) => `${f.check} ${f.code}`).slice(-2)).toEqual(['r more-findings', 'r2 forbidden-pattern'])
    expect(some!.findings.at(-2)!.message).toMatch(/^1 more finding of check "r"/)
  })

  it('a string that matches no route is parked, and the load warns about it', async () => {
    const deps = testDeps()
    const { paths } = (await import('./helpers.js')).writePipelines({ 'p.yaml': pipelineYaml(`checks:
  - uses: shout
route:
  - if: warnings > 0
    to: failed
`) })
    const r = await (await import('../../src/engine/load-pipelines.js')).loadPipelines(paths, deps)
    expect(r.ok).toBe(true)
    if (!r.ok) return
    open.push(r.set)
    expect(r.warnings.map((w) => w.message)).toEqual([expect.stringContaining('match no route are parked')])
    const [res] = await r.set.get('t')!.run(items([{ source: 'a', translation: 'b' }]))
    expect(res).toMatchObject({ output: null, port: '' })
  })

  it('a check runs only on the strings its `if` selects; severity overrides the plugin', async () => {
    const { pipeline } = await load(pipelineYaml(`checks:
  - uses: regex
    id: empty
    with: { target: { require: '\\S' } }
  - uses: shout
    severity: error
    if: no errors so far and labels contains 7
route:
  - if: errors > 0
    to: failed
  - to: passed
`))
    const r = await pipeline.run(items([
      { source: 'x', translation: 'LOUD', labelIds: [7] },
      { source: 'x', translation: 'LOUD', labelIds: [8] },
      { source: 'x', translation: '', labelIds: [7] },
    ]))
    expect(r.map((x) => x.findings.map((f) => `${f.check}:${f.severity}`))).toEqual([['shout:error'], [], ['empty:error']])
    expect(r.map((x) => x.output)).toEqual(['failed', 'passed', 'failed'])
  })

  it('checks that need the translation are skipped for strings without one', async () => {
    const { pipeline } = await load(pipelineYaml('checks:\n  - uses: shout\nroute:\n  - to: passed\n'))
    expect(pipeline.needsTranslation).toBe(true)
    const it1 = items([{ source: 'x', translation: 'LOUD' }])[0]!
    delete it1.translation
    const [r] = await pipeline.run([it1])
    expect(r!.findings).toEqual([])
  })

  it('a checkBatch plugin is called once per run, over the strings that need it', async () => {
    const { pipeline, counts } = await load(pipelineYaml(`checks:
  - uses: batcher
    if: not (key == "skip")
route:
  - if: errors > 0
    to: failed
  - to: passed
`))
    const r = await pipeline.run(items([{ source: 'good' }, { source: 'bad' }, { source: 'bad', key: 'skip' }]))
    expect(r.map((x) => x.output)).toEqual(['passed', 'failed', 'passed'])
    expect(counts.get('batcher.calls')).toBe(1)
    expect(counts.get('batcher.items')).toBe(2)
  })
})

describe('settings', () => {
  const yaml = pipelineYaml(`settings:
  properties:
    ratio: { type: number, default: 1.5 }
    label: { type: string, default: abc }
    flags: { type: array, default: [a, b] }
    on: { type: boolean, default: true }
checks:
  - uses: echo-options
    with:
      ratio: \${settings.ratio}
      label: 'label \${settings.label} / \${settings.ratio}'
      flags: '\${settings.flags}'
      on: \${ settings.on }
route:
  - to: passed
`)
  it('interpolates typed values: a whole ${settings.x} keeps its type, inside text it becomes text', async () => {
    const { pipeline } = await load(yaml)
    const defaults = pipeline.resolveSettings(undefined)
    expect(defaults).toEqual({ ok: true, settings: { ratio: 1.5, label: 'abc', flags: ['a', 'b'], on: true } })
    const [r] = await pipeline.run(items([{ source: 'x' }], (defaults as { settings: Record<string, unknown> }).settings))
    expect(JSON.parse(r!.findings[0]!.message)).toEqual({ ratio: 1.5, label: 'label abc / 1.5', flags: ['a', 'b'], on: true })
  })

  it('creates one instance per distinct resolved options, reused across runs', async () => {
    const { pipeline, counts } = await load(yaml)
    expect(counts.get('echo.created')).toBe(1) // at load, with the defaults
    const s2 = pipeline.resolveSettings({ ratio: 2 })
    if (!s2.ok) throw new Error(s2.errors.join())
    const [a] = await pipeline.run(items([{ source: 'x' }], s2.settings))
    await pipeline.run(items([{ source: 'y' }], s2.settings))
    await pipeline.run(items([{ source: 'y' }], pipeline.resolveSettings({}).ok ? (pipeline.resolveSettings({}) as { settings: Record<string, unknown> }).settings : {}))
    expect(JSON.parse(a!.findings[0]!.message).ratio).toBe(2)
    expect(counts.get('echo.created')).toBe(2)
  })

  it('resolveSettings reports invalid stored settings', async () => {
    const { pipeline } = await load(yaml)
    const r = pipeline.resolveSettings({ ratio: 'big' })
    expect(r.ok).toBe(false)
    expect(!r.ok && r.errors[0]).toMatch(/settings\.ratio: must be number/)
  })

  // A run's settings (saved before the pipeline changed its schema): a setting that became
  // required without a default, that the pipeline no longer takes, or whose default its own field
  // refuses, is as if never saved; any other refusal (of what the step saved) is the string's
  // `settings-invalid`, routed by on-error, never a run with the defaults in place of what the
  // step saved.
  it('resolves saved settings for a run leniently only where the step set nothing, and routes the rest by on-error', async () => {
    const { pipeline } = await load(pipelineYaml(`settings:
  additionalProperties: false
  required: [tone]
  properties:
    tone: { enum: [formal, informal] }
    ratio: { type: number, maximum: 3, default: 1.5 }
    level: { type: integer, minimum: 1, default: 0 }
checks:
  - uses: regex
    with: { target: { forbid: 'x' } }
route:
  - to: passed
on-error: failed
`))
    expect(pipeline.resolveSettings({ ratio: 2, dropped: true }).ok).toBe(false)
    expect(pipeline.resolveSettings({ ratio: 2, dropped: true }, { run: true })).toEqual({ ok: true, settings: { ratio: 2 } })
    expect(pipeline.resolveSettings({ level: 2 }, { run: true })).toEqual({ ok: true, settings: { ratio: 1.5, level: 2 } })
    const tooBig = pipeline.resolveSettings({ tone: 'formal', ratio: 4, level: 0, dropped: true }, { run: true })
    expect(tooBig).toEqual({ ok: false, errors: ['settings.ratio: must be <= 3', 'settings.level: must be >= 1'] })
    const r = pipeline.settingsInvalid(7, ['settings.ratio: must be <= 3'])
    expect(r).toMatchObject({ id: 7, output: 'failed', port: 'translated' })
    expect(r.findings).toEqual([{ check: 'engine', code: 'settings-invalid', severity: 'error', message: "pipeline not run: the step's saved settings are invalid for it (settings.ratio: must be <= 3); save the step's settings again" }])
  })

  it('options that fail the plugin schema with a stored setting become engine findings', async () => {
    const { pipeline } = await load(pipelineYaml(`settings:
  properties:
    ratio: { default: 1 }
checks:
  - uses: echo-options
    with: { ratio: '\${settings.ratio}' }
route:
  - to: passed
on-error: failed
`))
    const [r] = await pipeline.run(items([{ source: 'x' }], { ratio: 'not a number' }))
    expect(r).toMatchObject({ output: 'failed', port: 'translated' })
    expect(r!.findings[0]).toMatchObject({ check: 'engine', code: 'plugin-not-started', message: expect.stringContaining('ratio: must be number') })
  })
})

describe('settings a step has not set', () => {
  // A list or text setting without a default that the step never saved has no value: conditions
  // read it as none, and the run goes on (a TypeError here failed every string of every run).
  it('a list setting with no value contains nothing; a text one is empty, in checks\' and routes\' conditions', async () => {
    const { pipeline } = await load(pipelineYaml(`settings:
  properties:
    skip: { type: array, items: { type: string } }
    mode: { type: string }
checks:
  - uses: regex
    if: not (settings.skip contains "regex")
    with: { target: { forbid: LOUD } }
route:
  - if: settings.mode contains "undefined"
    to: ""
  - if: errors > 0
    to: failed
  - to: passed
`))
    const settings = pipeline.resolveSettings({})
    expect(settings).toEqual({ ok: true, settings: {} })
    const r = await pipeline.run(items([{ source: 'a', translation: 'LOUD' }, { source: 'b', translation: 'quiet' }], (settings as { settings: Record<string, unknown> }).settings))
    expect(r.map((x) => x.output)).toEqual(['failed', 'passed'])
  })
})

describe('on-error and failing plugins', () => {
  const base = (onError: string) => pipelineYaml(`checks:
  - uses: flaky
  - uses: shout
route:
  - if: errors > 0
    to: failed
  - to: passed
on-error: ${onError}
`)
  const strings = [{ source: 'boom', translation: 'LOUD' }, { source: 'reject' }, { source: 'fine' }, { source: 'slow' }]

  it('park: a throwing or rejecting plugin parks the string with an engine finding; others go on', async () => {
    const { pipeline } = await load(base('park'))
    const r = await pipeline.run(items(strings))
    expect(r.map((x) => [x.output, x.port, x.retry])).toEqual([[null, '', undefined], [null, '', undefined], ['passed', 'approved', undefined], ['passed', 'approved', undefined]])
    expect(r[0]!.findings).toEqual([{ check: 'engine', code: 'plugin-threw', severity: 'error', message: 'plugin "flaky" (check "flaky") failed: kaboom' }])
    expect(r[1]!.findings).toEqual([{ check: 'engine', code: 'plugin-threw', severity: 'error', message: 'plugin "flaky" (check "flaky") failed: rejected' }])
  })

  it('retry: the string is parked and marked for retry', async () => {
    const { pipeline } = await load(base('retry'))
    const r = await pipeline.run(items(strings))
    expect(r.map((x) => x.retry)).toEqual([true, true, undefined, undefined])
    expect(r[0]).toMatchObject({ output: null, port: '' })
  })

  it('a named output: the string goes there', async () => {
    const { pipeline } = await load(base('failed'))
    const r = await pipeline.run(items(strings))
    expect(r.map((x) => x.port)).toEqual(['translated', 'translated', 'approved', 'approved'])
  })

  it('a check stopped by the time budget: time-budget-exceeded, under its plugin, or the pipeline\'s when no check ran', async () => {
    const { pipeline } = await load(base('failed'))
    const why = 'failed: check timed out: still running after 2000 ms (CHECK_TIME_BUDGET_MS); the thread running it was stopped'
    expect(pipeline.timedOut(7, 1, 2000)).toEqual({ id: 7, output: 'failed', port: 'translated', findings: [{ check: 'engine', code: 'time-budget-exceeded', severity: 'error', message: `plugin "shout" (check "shout") ${why}` }] })
    expect(pipeline.timedOut(8, -1, 2000).findings).toEqual([{ check: 'engine', code: 'time-budget-exceeded', severity: 'error', message: `pipeline ${why}` }])
  })

  it('a hanging plugin times out (plugin timeoutMs, overridable per check)', async () => {
    const { pipeline } = await load(base('park'))
    const r = await pipeline.run(items([{ source: 'hang' }, { source: 'fine' }]))
    expect(r[0]!.findings).toEqual([{ check: 'engine', code: 'plugin-timed-out', severity: 'error', message: 'plugin "flaky" (check "flaky") failed: timed out after 100 ms' }])
    expect(r[1]!.output).toBe('passed')

    const { pipeline: p2 } = await load(pipelineYaml('checks:\n  - uses: flaky\n    timeout: 5\nroute:\n  - to: passed\n'))
    const [slow] = await p2.run(items([{ source: 'slow' }]))
    expect(slow!.findings[0]).toMatchObject({ code: 'plugin-timed-out', message: expect.stringContaining('timed out after 5 ms') })
  })
})

describe('a plugin that does not keep to the API', () => {
  const plugin = (name: string, instance: string, properties = '{}') => `export default {
  name: '${name}', description: 'Breaks the plugin API, for engine tests.',
  options: { type: 'object', additionalProperties: false, properties: ${properties} },
  create(o) { return ${instance} },
}
`
  it('a check with more than 20 findings on a string: the most severe are listed, in the order given; the rest summed up with their worst severity', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-many-plugins-'))
    try {
      // The source says how many of each, in order: "w25 e1 i3" is 25 warnings, then an error, then 3 infos.
      writeFileSync(path.join(dir, 'many.mjs'), plugin('many', `{ check(item) {
        const out = []
        for (const [, kind, n] of item.source.matchAll(/([wei])(\\d+)/g)) for (let k = 0; k < Number(n); k++) out.push({ severity: { w: 'warning', e: 'error', i: 'info' }[kind], message: kind + k })
        return out
      } }`))
      const { pipeline } = await load(pipelineYaml('checks:\n  - uses: many\nroute:\n  - if: errors > 0 and warnings == 25 and infos == 3\n    to: failed\n  - to: passed\n'), testDeps({ pluginsDir: dir }))
      const [mixed, plenty] = await pipeline.run(items([{ source: 'w25 e1 i3' }, { source: 'i30' }]))
      expect(mixed!.output).toBe('failed')
      // The error, then 19 of the warnings (the first ones), in the plugin's order; then the summary.
      expect(mixed!.findings.map((f) => f.message).slice(0, 20)).toEqual([...Array.from({ length: 19 }, (_, k) => `w${k}`), 'e0'])
      expect(mixed!.findings[20]).toEqual({ check: 'many', severity: 'warning', code: 'more-findings', message: '9 more findings of check "many" on this string not listed (6 warnings, 3 infos; the 20 most severe are); every one of them counted for routing' })
      expect(plenty!.findings).toHaveLength(21)
      expect(plenty!.findings[20]).toMatchObject({ severity: 'info', message: expect.stringMatching(/^10 more findings .*\(10 infos;/) })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  // Rule: checkBatch may put an Error in a string's place: that string alone fails (plugin-threw,
  // routed by on-error), the others of the batch are routed on their findings.
  it('fails alone the string a checkBatch answers with an Error', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-batch-error-'))
    try {
      writeFileSync(path.join(dir, 'partial.mjs'), plugin('partial', `{ async checkBatch(items) { return items.map((i) => i.source === 'bad' ? new Error('the service refused this one') : i.source === 'flagged' ? [{ message: 'flagged' }] : []) } }`))
      const { pipeline } = await load(pipelineYaml('checks:\n  - uses: partial\nroute:\n  - if: errors > 0\n    to: failed\n  - to: passed\n'), testDeps({ pluginsDir: dir }))
      const results = await pipeline.run(items([{ source: 'fine' }, { source: 'bad' }, { source: 'flagged' }]))
      expect(results.map((r) => [r.output, r.findings.map((f) => `${f.check}/${f.code ?? ''}: ${f.message}`)])).toEqual([
        ['passed', []],
        [null, ['engine/plugin-threw: plugin "partial" (check "partial") failed: the service refused this one']],
        ['failed', ['partial/: flagged']],
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('returns no list, a finding without a message, a batch of the wrong length, or has no check: plugin-bad-result', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-odd-plugins-'))
    try {
      writeFileSync(path.join(dir, 'odd.mjs'), plugin('odd', `{ check(item) { return item.source === 'nothing' ? undefined : item.source === 'no message' ? [{ code: 'x' }] : [] } }`))
      writeFileSync(path.join(dir, 'short-batch.mjs'), plugin('short-batch', '{ async checkBatch(items) { return items.slice(1).map(() => []) } }'))
      // Checked at load with the defaults; with the step's settings it has nothing to run.
      writeFileSync(path.join(dir, 'idle.mjs'), plugin('idle', 'o.idle ? {} : { check() { return [] } }', "{ idle: { type: 'boolean', default: false } }"))
      const deps = testDeps({ pluginsDir: dir })
      const one = async (uses: string, sources: string[]) => {
        const { pipeline } = await load(pipelineYaml(`checks:\n  - uses: ${uses}\nroute:\n  - to: passed\n`), deps)
        return pipeline.run(items(sources.map((source) => ({ source }))))
      }
      const odd = await one('odd', ['nothing', 'no message', 'fine'])
      expect(odd.map((r) => [r.output, r.findings.map((f) => `${f.check}/${f.code}: ${f.message}`)])).toEqual([
        [null, ['engine/plugin-bad-result: plugin "odd" (check "odd") failed: returned nothing instead of an array of findings']],
        [null, ['engine/plugin-bad-result: plugin "odd" (check "odd") failed: returned a finding without a message']],
        ['passed', []],
      ])
      const batch = await one('short-batch', ['a', 'b'])
      expect(batch.map((r) => r.findings)).toEqual([0, 1].map(() => [{ check: 'engine', code: 'plugin-bad-result', severity: 'error', message: 'plugin "short-batch" (check "short-batch") failed: checkBatch() returned 1 results for 2 strings' }]))
      const { pipeline: idling } = await load(pipelineYaml(`settings:
  properties:
    idle: { type: boolean, default: false }
checks:
  - uses: idle
    with: { idle: '\${settings.idle}' }
route:
  - to: passed
`), deps)
      const [idle] = await idling.run(items([{ source: 'a' }], { idle: true }))
      expect(idle!.findings).toEqual([{ check: 'engine', code: 'plugin-bad-result', severity: 'error', message: 'plugin "idle" (check "idle") failed: has neither check() nor checkBatch()' }])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('maxTextLength', () => {
  const route = `route:
  - if: errors > 0
    to: failed
  - to: passed
`
  it('a text over a check\'s limit is an error "too long to check", not checked and not passed as clean', async () => {
    const { pipeline } = await load(pipelineYaml(`maxTextLength: 20
checks:
  - uses: regex
    id: no-double-space
    with: { target: { forbid: '\\s{2,}' } }
  - uses: regex
    id: roomy
    maxTextLength: 0
    with: { target: { forbid: 'x' } }
${route}`))
    const long = `Enregistrer  ${'le fichier '.repeat(3)}`
    const r = await pipeline.run(items([{ source: 'Save the file', translation: long }, { source: 'Save', translation: 'Enregistrer' }]))
    expect(r[0]).toMatchObject({ output: 'failed' })
    expect(r[0]!.findings).toEqual([{ check: 'no-double-space', code: 'text-too-long', severity: 'error', message: `Too long to check: the translation has ${long.length} characters; check "no-double-space" reads at most 20 (maxTextLength)` }])
    expect(r[1]).toMatchObject({ output: 'passed', findings: [] })
  })

  it('the default is 50,000 characters, the check\'s severity applies, and plural forms count', async () => {
    const { pipeline } = await load(pipelineYaml(`checks:
  - uses: regex
    severity: warning
    with: { target: { forbid: 'x' } }
${route}`))
    const [item] = items([{ source: 'a', translation: 'b' }])
    item!.plurals = [{ plural: 'one', text: 'y' }, { plural: 'other', text: 'y'.repeat(50_001) }]
    const [r] = await pipeline.run([item!])
    expect(r!.findings).toEqual([expect.objectContaining({ check: 'regex', code: 'text-too-long', severity: 'warning', message: expect.stringContaining('plural form "other" has 50001 characters') })])
  })
})

describe('presets', () => {
  it('expand, and take overrides by id: with, severity, enabled: false', async () => {
    PRESETS['test-preset'] = [
      { uses: 'regex', id: 'edge', with: { target: { forbid: '^\\s' } } },
      { uses: 'regex', id: 'double', with: { target: { forbid: '\\s{2,}' } }, severity: 'warning' },
      { uses: 'shout' },
    ]
    try {
      const { pipeline } = await load(pipelineYaml(`checks:
  - uses: test-preset
    overrides:
      edge: { with: { target: { forbid: 'X' } }, severity: info }
      shout: { enabled: false }
route:
  - to: passed
`))
      const [r] = await pipeline.run(items([{ source: 'a', translation: ' X  LOUD' }]))
      expect(r!.findings.map((f) => `${f.check}:${f.severity}`)).toEqual(['edge:info', 'double:warning'])
    } finally {
      delete PRESETS['test-preset']
    }
  })

  it('a missing preset with a fallback uses the fallback checks', async () => {
    const { pipeline } = await load(pipelineYaml(`checks:
  - uses: no-such-preset-yet
    fallback:
      - uses: shout
route:
  - to: passed
`))
    const [r] = await pipeline.run(items([{ source: 'a', translation: 'LOUD' }]))
    expect(r!.findings.map((f) => f.check)).toEqual(['shout'])
  })
})

// How fast is the benchmark's business (`switchyard bench`); here, a batch of thousands is whole.
describe('large batches', () => {
  it('runs 5,000 strings through cheap checks in one batch', async () => {
    const { pipeline } = await load(pipelineYaml(`checks:
  - uses: regex
    id: a
    with: { target: { forbid: '\\s{2,}' } }
  - uses: regex
    id: b
    if: no errors so far
    with: { target: { require: '\\S' } }
  - uses: shout
route:
  - if: errors > 0
    to: failed
  - to: passed
`))
    const batch = items(Array.from({ length: 5000 }, (_, i) => ({ source: `Source ${i}`, translation: i % 10 ? `Texte ${i}` : `Texte  ${i}` })))
    const r = await pipeline.run(batch)
    expect(r).toHaveLength(5000)
    expect(r.filter((x) => x.output === 'failed')).toHaveLength(500)
    expect(r.filter((x) => x.output === 'failed').every((x) => x.findings.some((f) => f.check === 'a'))).toBe(true)
  })
})

// What the pipeline pool relies on (src/engine/pipeline-pool.ts, pipeline-thread.ts): a report of
// which string and check run now, for its watchdog; a checkpoint after each check; and a run that
// resumes from one after a stopped check instead of starting over.
describe('progress, checkpoints and resuming', () => {
  const yaml = pipelineYaml(`checks:
  - uses: shout
  - uses: batcher
    if: not (key == "alone")
  - uses: flaky
route:
  - if: errors > 0
    to: failed
  - if: warnings > 0
    to: loud
  - to: passed
`).replace('outputs:\n', 'outputs:\n  loud: { port: translated }\n')
  const strings = [{ source: 'bad slow', translation: 'LOUD' }, { source: 'fine', translation: 'quiet' }]

  it('reports the string and check running: each string of check(), -1 for a batch or several async tails', async () => {
    const { pipeline } = await load(yaml)
    const seen: string[] = []
    const r = await pipeline.run(items(strings), { progress: (item, check) => void seen.push(`${item}:${check}`) })
    expect(seen).toEqual([
      '-1:0', '0:0', '1:0', // shout: starting, then each string
      '-1:1', '-1:1', // batcher: starting, then the batch of two
      '-1:2', '0:2', '1:2', '0:2', // flaky: each string, then the async tail of the one slow string
      '-1:-1', // done
    ])
    expect(r.map((x) => x.output)).toEqual(['failed', 'passed'])
  })

  it('a batch of one string, and async tails of several strings', async () => {
    const { pipeline } = await load(yaml)
    const seen: string[] = []
    await pipeline.run(items([{ source: 'slow', translation: 'a' }, { source: 'slow', translation: 'b', key: 'alone' }]), { progress: (item, check) => void seen.push(`${item}:${check}`) })
    expect(seen).toEqual(['-1:0', '0:0', '1:0', '-1:1', '0:1', '-1:2', '0:2', '1:2', '-1:2', '-1:-1'])
  })

  it('a checkpoint after each check holds every string\'s findings and counts so far, as a copy', async () => {
    const { pipeline } = await load(yaml)
    const saved: Checkpoint[] = []
    await pipeline.run(items(strings), { checkpoint: (next, save) => void saved.push(save()) })
    expect(saved.map((s) => s.next)).toEqual([1, 2, 3])
    const shouted = { check: 'shout', severity: 'warning', message: 'The translation shouts.' }
    // Still as it was after the first check, though later checks added to the strings' findings.
    expect(saved[0]).toEqual({ next: 1, states: [
      { sev: [0, 1, 0], byCheck: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], findings: [shouted], failed: false },
      { sev: [0, 0, 0], byCheck: Array(12).fill(0), findings: [], failed: false },
    ] })
    expect(saved[1]!.states[0]).toEqual({ sev: [1, 1, 0], byCheck: [0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0], findings: [shouted, { check: 'batcher', severity: 'error', message: 'bad word' }], failed: false })
  })

  it('resumes after the checks a checkpoint covers, with the strings\' findings and counts from it', async () => {
    const { pipeline, counts } = await load(yaml)
    let afterBatch: Checkpoint | undefined
    const full = await pipeline.run(items(strings), { checkpoint: (next, save) => { if (next === 2) afterBatch = save() } })
    expect(counts.get('batcher.calls')).toBe(1)
    const resumed = await pipeline.run(items(strings), { resume: afterBatch! })
    expect(counts.get('batcher.calls')).toBe(1) // not run again
    expect(resumed).toEqual(full)
    expect(resumed.map((x) => x.output)).toEqual(['failed', 'passed'])

    // From a failed string's state: its checks stay skipped and on-error (park) applies.
    const failedState = { sev: [1, 0, 0], byCheck: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0], findings: [{ check: 'engine', code: 'plugin-threw', severity: 'error' as const, message: 'x' }], failed: true }
    const [parked] = await pipeline.run(items([{ source: 'fine', translation: 'LOUD' }]), { resume: { next: 0, states: [failedState] } })
    expect(parked).toEqual({ id: 1, output: null, port: '', findings: failedState.findings })

    // Counts come from the checkpoint too: a warning counted there routes to "loud".
    const warned = { sev: [0, 1, 0], byCheck: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], findings: [], failed: false }
    const [loud] = await pipeline.run(items([{ source: 'fine', translation: 'quiet' }]), { resume: { next: 3, states: [warned] } })
    expect(loud).toMatchObject({ output: 'loud', findings: [] })
  })

  it('a checkpoint that does not fit the run is ignored: every check runs from the start', async () => {
    const { pipeline, counts } = await load(yaml)
    const state = { sev: [0, 0, 0], byCheck: Array(12).fill(0), findings: [], failed: false }
    const run = async (resume: Checkpoint) => (await pipeline.run(items([{ source: 'fine', translation: 'LOUD' }]), { resume }))[0]!.output
    expect(await run({ next: 3, states: [state, state] })).toBe('loud') // two states for one string
    expect(await run({ next: 4, states: [state] })).toBe('loud') // past the last check
    expect(counts.get('batcher.calls')).toBe(2)
    expect(await run({ next: 3, states: [state] })).toBe('passed') // fits: nothing left to run
    expect(counts.get('batcher.calls')).toBe(2)
    // A string whose saved counts are of another pipeline (another number of checks) starts afresh.
    const warned = { sev: [0, 1, 0], findings: [{ check: 'shout', severity: 'warning' as const, message: 'm' }], failed: false }
    expect(await run({ next: 3, states: [{ ...warned, byCheck: [0, 1, 0, 0, 0, 0, 0, 0, 0] }] })).toBe('passed')
    expect(await run({ next: 3, states: [{ ...warned, byCheck: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] }] })).toBe('loud')
  })

  it('an aborted run stops before its next check', async () => {
    const { pipeline, counts } = await load(yaml)
    const ac = new AbortController()
    ac.abort(new Error('shutting down'))
    await expect(pipeline.run(items(strings), { signal: ac.signal })).rejects.toThrow('shutting down')
    expect(counts.get('batcher.calls')).toBeUndefined()
  })
})

describe('the engine\'s own bookkeeping', () => {
  it('a check whose options take no setting is created once, at load, whatever the runs\' settings', async () => {
    const { pipeline, counts } = await load(pipelineYaml('checks:\n  - uses: echo-options\n    with: { ratio: 2 }\nroute:\n  - to: passed\n'))
    await pipeline.run(items([{ source: 'x' }], { a: 1 }))
    await pipeline.run(items([{ source: 'y' }], { a: 2 }))
    expect(counts.get('echo.created')).toBe(1)
  })

  it('a run of no strings gives no results', async () => {
    const { pipeline } = await load(pipelineYaml('checks:\n  - uses: shout\nroute:\n  - to: passed\n'))
    expect(await pipeline.run([])).toEqual([])
  })

  it('a check that reads the translation does not see a string without one, even one it would flag', async () => {
    const { pipeline } = await load(pipelineYaml(`checks:\n  - uses: regex\n    with: { target: { require: '\\S' } }\n${'route:\n  - if: errors > 0\n    to: failed\n  - to: passed\n'}`))
    const [it1] = items([{ source: 'x' }])
    delete it1!.translation
    expect(await pipeline.run([it1!])).toEqual([{ id: 1, output: 'passed', port: 'approved', findings: [] }])
  })

  it('a failed check counts as an error of the engine in the string\'s saved state', async () => {
    const { pipeline } = await load(pipelineYaml('checks:\n  - uses: flaky\n  - uses: shout\nroute:\n  - to: passed\n'))
    const saved: Checkpoint[] = []
    await pipeline.run(items([{ source: 'boom' }]), { checkpoint: (_next, save) => void saved.push(save()) })
    expect(saved[0]!.states[0]).toMatchObject({ sev: [1, 0, 0], byCheck: [0, 0, 0, 0, 0, 0, 1, 0, 0], failed: true })
  })

  it('the source is measured too; a text of exactly the limit is read; no translation is not too long', async () => {
    const { pipeline } = await load(pipelineYaml(`maxTextLength: 5
checks:
  - uses: regex
    with: { source: { forbid: 'x' } }
route:
  - if: errors > 0
    to: failed
  - to: passed
`))
    const [long, exact] = await pipeline.run(items([{ source: 'abcdef', translation: 'a' }, { source: 'abcde', translation: 'abcde' }]))
    expect(long!.findings).toEqual([{ check: 'regex', code: 'text-too-long', severity: 'error', message: 'Too long to check: the source has 6 characters; check "regex" reads at most 5 (maxTextLength)' }])
    expect(exact).toMatchObject({ output: 'passed', findings: [] })
    const [it1] = items([{ source: 'abc' }])
    delete it1!.translation
    expect(await pipeline.run([it1!])).toEqual([{ id: 1, output: 'passed', port: 'approved', findings: [] }])
    // A check that does not read the translation runs on a string without one.
    const { pipeline: sourceOnly } = await load(pipelineYaml('maxTextLength: 5\nchecks:\n  - uses: echo-options\nroute:\n  - to: passed\n'))
    const [bare] = items([{ source: 'abc' }])
    delete bare!.translation
    expect((await sourceOnly.run([bare!]))[0]!.findings).toEqual([{ check: 'echo-options', severity: 'info', message: '{}' }])
  })
})
