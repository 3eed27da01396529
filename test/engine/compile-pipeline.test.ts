// Compiling a pipeline file (src/engine/compile-pipeline.ts): the fields the step module shows,
// step settings (their schema, defaults and the errors of stored settings), what a condition may
// name, routes, on-error, the logo, and the plugins a file with errors leaves closed.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatLocatedError, loadPipelines, type LoadResult } from '../../src/engine/load-pipelines.js'
import { items, pipelineYaml, testDeps, writePipelines } from './helpers.js'

async function loadFiles(files: Record<string, string>, deps = testDeps()): Promise<{ r: LoadResult; dir: string; deps: typeof deps }> {
  const { dir, paths } = writePipelines(files)
  return { r: await loadPipelines(paths, deps), dir, deps }
}

async function loaded(yaml: string, deps = testDeps()) {
  const { r, dir } = await loadFiles({ 'p.yaml': yaml }, deps)
  if (!r.ok) throw new Error(r.errors.map(formatLocatedError).join('\n'))
  return { set: r.set, pipeline: r.set.get('t')!, warnings: r.warnings.map((w) => `${w.line}:${w.col} ${w.message}`), dir }
}

async function errorsOf(yaml: string, files: Record<string, string> = {}): Promise<string[]> {
  const { r } = await loadFiles({ 'p.yaml': yaml, ...files })
  if (r.ok) await r.set.close(0)
  return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.col} ${e.message}`)
}

const PASS = 'route:\n  - to: passed\n'

describe('the fields of a compiled pipeline', () => {
  it('defaults: no description, side-by-side, output titles by name, no logo, no translation needed', async () => {
    const { set, pipeline, dir } = await loaded(pipelineYaml(`checks:\n  - uses: echo-options\n${PASS}`))
    expect(pipeline).toMatchObject({
      key: 't', name: 'Test', description: '', editorMode: 'side-by-side', file: path.join(dir, 'p.yaml'), input: ['translated'],
      outputs: [{ name: 'passed', port: 'approved', title: 'passed' }, { name: 'failed', port: 'translated', title: 'failed' }],
      settingsSchema: { type: 'object', properties: {} }, needsTranslation: false,
    })
    expect(pipeline.logo).toBeUndefined()
    await set.close(0)
  })

  it('as written: description, editor mode, output titles; a check that reads the translation', async () => {
    const yaml = pipelineYaml(`checks:\n  - uses: regex\n  - uses: shout\n${PASS}`, 'description: Checks things\neditorMode: comfortable\n')
      .replace('passed: { port: approved }', 'passed: { port: approved, title: All good }')
    const { set, pipeline } = await loaded(yaml)
    expect(pipeline).toMatchObject({ description: 'Checks things', editorMode: 'comfortable', needsTranslation: true })
    expect(pipeline.outputs[0]).toEqual({ name: 'passed', port: 'approved', title: 'All good' })
    await set.close(0)
  })
})

describe('step settings', () => {
  const yaml = pipelineYaml(`checks: []\n${PASS}`, `settings:
  required: [level]
  properties:
    level: { type: integer, minimum: 1 }
    mode: { enum: [fast, slow], default: fast }
    tags: { type: array, default: [a] }
`)
  it('resolveSettings fills in the defaults, on a copy; a stored value that is not an object counts as none', async () => {
    const { set, pipeline } = await loaded(yaml)
    const stored = { level: 2 }
    const r = pipeline.resolveSettings(stored)
    expect(r).toEqual({ ok: true, settings: { level: 2, mode: 'fast', tags: ['a'] } })
    expect(stored).toEqual({ level: 2 })
    // Each resolve has its own copy of a default.
    if (r.ok) (r.settings.tags as string[]).push('b')
    expect(pipeline.resolveSettings({ level: 1 })).toEqual({ ok: true, settings: { level: 1, mode: 'fast', tags: ['a'] } })
    for (const odd of [null, 'level', [1], 5]) {
      expect(pipeline.resolveSettings(odd)).toEqual({ ok: false, errors: ['settings: must have required property \'level\''] })
    }
    await set.close(0)
  })

  // Rule: settings named like Object.prototype's members are the step's own: a step without them
  // gets their defaults (or nothing), never the prototype's functions, and is not refused for them.
  it('settings named toString, valueOf or constructor: defaults applied, own values checked, never read through the prototype', async () => {
    const named = pipelineYaml(`checks: []\n${PASS}`, `settings:
  required: [valueOf]
  properties:
    toString: { type: number, default: 3 }
    constructor: { type: string }
    valueOf: { type: boolean }
`)
    const { set, pipeline } = await loaded(named)
    expect(pipeline.resolveSettings({ valueOf: true })).toEqual({ ok: true, settings: { valueOf: true, toString: 3 } })
    expect(pipeline.resolveSettings({ valueOf: true, toString: 'x', constructor: 'c' })).toEqual({ ok: false, errors: ['settings.toString: must be number'] })
    expect(pipeline.resolveSettings({})).toEqual({ ok: false, errors: ["settings: must have required property 'valueOf'"] })
    await set.close(0)
  })

  it('names each bad setting', async () => {
    const { set, pipeline } = await loaded(yaml)
    expect(pipeline.resolveSettings({ level: 0, mode: 'medium' })).toEqual({ ok: false, errors: ['settings.level: must be >= 1', 'settings.mode: must be one of "fast", "slow"'] })
    await set.close(0)
  })

  it('a settings schema that does not compile is an error at settings', async () => {
    const errors = await errorsOf(pipelineYaml(`checks: []\n${PASS}`, 'settings:\n  properties:\n    level: { type: size }\n'))
    expect(errors).toEqual([expect.stringMatching(/^8:3 settings is not a valid JSON Schema: .*properties\/level\/type/)])
  })

  it('conditions know each setting\'s type from its schema', async () => {
    const settings = `settings:
  properties:
    n: { type: number }
    i: { type: integer }
    s: { type: string }
    b: { type: boolean }
    l: { type: array }
    a: {}
`
    const cond = (c: string) => errorsOf(pipelineYaml(`checks: []\nroute:\n  - if: ${c}\n    to: failed\n  - to: passed\n`, settings))
    for (const ok of ['settings.n > 1', 'settings.i > 1', 'settings.s == "x"', 'settings.b == true', 'settings.l contains "x"', 'settings.a == 1', 'settings.a == "x"']) expect(await cond(ok), ok).toEqual([])
    expect(await cond('settings.s > 1')).toEqual([expect.stringMatching(/bad condition: .*needs/)])
    expect(await cond('settings.b == 1')).toEqual([expect.stringMatching(/bad condition: cannot compare a boolean with a number/)])
    expect(await cond('settings.n == "x"')).toEqual([expect.stringMatching(/bad condition: cannot compare a number with a string/)])
    expect(await cond('settings.l == 1')).toEqual([expect.stringMatching(/bad condition: /)])
  })
})

describe('what a condition may name', () => {
  it('a check\'s `if` sees only the checks before it; routes see every check and the engine', async () => {
    const body = (checkIf: string, routeIf: string) => pipelineYaml(`checks:
  - uses: regex
    id: first
    with: { source: { forbid: x } }
  - uses: regex
    id: second
    if: ${checkIf}
    with: { source: { forbid: y } }
  - uses: regex
    id: third
    with: { source: { forbid: z } }
route:
  - if: ${routeIf}
    to: failed
  - to: passed
`)
    expect(await errorsOf(body('findings.first == 0', 'errors.third > 0 or errors.engine > 0'))).toEqual([])
    expect(await errorsOf(body('findings.third == 0', 'errors > 0'))).toEqual(['13:18 bad condition: no check with id "third" in this pipeline (ids: first, engine)'])
    expect(await errorsOf(body('findings.second == 0', 'errors > 0'))).toEqual([expect.stringContaining('no check with id "second"')])
  })

  it('a failed check counts under `engine` for the routes of a resumed string', async () => {
    const { set, pipeline } = await loaded(pipelineYaml(`checks:
  - uses: flaky
route:
  - if: errors.engine > 0
    to: failed
  - to: passed
`))
    const [r] = await pipeline.run(items([{ source: 'fine' }]), { resume: { next: 1, states: [{ sev: [1, 0, 0], byCheck: [0, 0, 0, 1, 0, 0], findings: [], failed: false }] } })
    expect(r!.output).toBe('failed')
    await set.close(0)
  })
})

describe('routes and on-error', () => {
  it('warns about a route after one without `if`, and about routes that let strings through', async () => {
    const unreachable = await loaded(pipelineYaml('checks: []\nroute:\n  - to: passed\n  - to: failed\n'))
    expect(unreachable.warnings).toEqual(['10:5 this route is never reached: the one before it has no `if`'])
    const none = await loaded(pipelineYaml('checks: []\nroute: []\n'))
    expect(none.warnings).toEqual(['1:6 strings that match no route are parked (output ""); end the routes with one that has no `if` to route everything'])
    const [parked] = await none.pipeline.run(items([{ source: 'a' }]))
    expect(parked).toEqual({ id: 1, output: null, port: '', findings: [] })
    const noRouteKey = await loaded(pipelineYaml('checks: []\n'))
    expect(noRouteKey.warnings).toEqual([expect.stringMatching(/^1:6 strings that match no route are parked/)])
    for (const p of [unreachable, none, noRouteKey]) await p.set.close(0)
  })

  it('on-error: park when left out or empty, retry, or an output; anything else is an error naming the outputs', async () => {
    const outcome = async (onError: string) => {
      const { set, pipeline } = await loaded(pipelineYaml(`checks:\n  - uses: flaky\n${PASS}${onError}`))
      const [r] = await pipeline.run(items([{ source: 'boom' }]))
      await set.close(0)
      return [r!.output, r!.port, r!.retry]
    }
    expect(await outcome('')).toEqual([null, '', undefined])
    expect(await outcome('on-error: ""\n')).toEqual([null, '', undefined])
    expect(await outcome('on-error: park\n')).toEqual([null, '', undefined])
    expect(await outcome('on-error: retry\n')).toEqual([null, '', true])
    expect(await outcome('on-error: failed\n')).toEqual(['failed', 'translated', undefined])
    expect(await errorsOf(pipelineYaml(`checks: []\n${PASS}on-error: passd\n`))).toEqual(['10:11 on-error must be park, retry or an output name, not "passd"; declared outputs: passed, failed'])
  })
})

describe('the logo', () => {
  const png = Buffer.from('89504e470d0a1a0a', 'hex')
  it('by default <file name>.png, else .svg, beside the file', async () => {
    const { dir, paths } = writePipelines({ 'p.yaml': pipelineYaml(`checks: []\n${PASS}`) })
    writeFileSync(path.join(dir, 'p.svg'), '<svg/>')
    let r = await loadPipelines(paths, testDeps())
    expect(r.ok && r.set.get('t')!.logo).toEqual({ path: path.join(dir, 'p.svg'), contentType: 'image/svg+xml' })
    if (r.ok) await r.set.close(0)
    writeFileSync(path.join(dir, 'p.png'), png)
    r = await loadPipelines(paths, testDeps())
    expect(r.ok && r.set.get('t')!.logo).toEqual({ path: path.join(dir, 'p.png'), contentType: 'image/png' })
    if (r.ok) await r.set.close(0)
  })

  it('the default logo is named after the file without its .yml or .yaml ending, any case', async () => {
    const { dir, paths } = writePipelines({ 'a.yml.YAML': pipelineYaml(`checks: []\n${PASS}`) })
    writeFileSync(path.join(dir, 'a.yml.png'), png)
    writeFileSync(path.join(dir, 'a.png'), png)
    const r = await loadPipelines(paths, testDeps())
    expect(r.ok && r.set.get('t')!.logo).toEqual({ path: path.join(dir, 'a.yml.png'), contentType: 'image/png' })
    if (r.ok) await r.set.close(0)
  })

  it('a named logo: its type from the extension, any case; refused outside the folder or not an image', async () => {
    const { dir, paths } = writePipelines({ 'p.yaml': pipelineYaml(`logo: Logo.JPEG\nchecks: []\n${PASS}`) })
    writeFileSync(path.join(dir, 'Logo.JPEG'), png)
    const r = await loadPipelines(paths, testDeps())
    expect(r.ok && r.set.get('t')!.logo).toEqual({ path: path.join(dir, 'Logo.JPEG'), contentType: 'image/jpeg' })
    if (r.ok) await r.set.close(0)
    expect(await errorsOf(pipelineYaml(`logo: notes.txt\nchecks: []\n${PASS}`))).toEqual(['7:7 logo must be an image (.png, .svg, .jpg, .jpeg, .gif, .webp)'])
    expect(await errorsOf(pipelineYaml(`logo: ../up.png\nchecks: []\n${PASS}`))).toEqual(['7:7 logo must be a file beside the pipeline, not outside its folder'])
  })
})

describe('issues', () => {
  it('by default, the outputs of the routes that count errors, not those of other routes or of parking', async () => {
    const yaml = pipelineYaml(`checks: []
route:
  - if: errors > 5
    to: ""
  - if: warnings > 0
    to: loud
  - if: errors.engine > 0 or errors > 0
    to: failed
  - to: passed
issues: {}
`).replace('outputs:\n', 'outputs:\n  loud: { port: translated }\n')
    const { set, pipeline, warnings } = await loaded(yaml)
    expect(pipeline.issues).toEqual({ outputs: ['failed'] })
    expect(warnings).toEqual([])
    await set.close(0)
  })
})

describe('a file with errors', () => {
  it('closes the plugins it created', async () => {
    const { r, deps } = await loadFiles({ 'p.yaml': pipelineYaml('checks:\n  - uses: batcher\nroute:\n  - to: nowhere\n') })
    expect(r.ok).toBe(false)
    expect(deps.counts.get('batcher.closed')).toBe(1)
  })

  it('closing a loaded set closes its plugins, after the runs in flight', async () => {
    const { r, deps } = await loadFiles({ 'p.yaml': pipelineYaml(`checks:\n  - uses: batcher\n  - uses: flaky\n${PASS}`) })
    if (!r.ok) throw new Error('load failed')
    const running = r.set.get('t')!.run(items([{ source: 'slow' }]))
    const closed = r.set.close(5_000)
    await Promise.resolve()
    expect(deps.counts.get('batcher.closed')).toBeUndefined()
    expect((await running)[0]!.output).toBe('passed')
    await closed
    expect(deps.counts.get('batcher.closed')).toBe(1)
  })
})
