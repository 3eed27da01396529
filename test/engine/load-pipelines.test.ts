import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { formatLocatedError, listPipelineFiles, loadPipelines } from '../../src/engine/load-pipelines.js'
import { pipelineSchema } from '../../src/engine/pipeline-schema.js'
import { FIXTURE_PLUGINS, FIXTURES, items, loadOne, pipelineYaml, testDeps, writePipelines } from './helpers.js'

const PIPELINES = path.join(PACKAGE_ROOT, 'pipelines')

describe('loadPipelines: every error at once, located', () => {
  it('reports each mistake of broken.yaml with file:line:col and the offending line', async () => {
    const file = path.join(FIXTURES, 'pipelines', 'broken.yaml')
    const r = await loadPipelines([file], testDeps())
    expect(r.ok).toBe(false)
    if (r.ok) return
    const got = r.errors.map((e) => `${e.line}:${e.col} ${e.message}`)
    const want: Array<[string, RegExp]> = [
      ['4:1', /unknown key "colour"/],
      ['8:19', /outputs\.failed\.port: "approvd" is not allowed; must be one of "untranslated"/],
      ['10:11', /unknown plugin or preset "speling"; plugins: .*regex/],
      ['13:21', /check "bad-option": option target: unknown option "forbidd"/],
      ['16:31', /check "bad-pattern": plugin "regex" refused its options: .*Invalid regular expression/],
      ['19:17', /bad condition: unexpected ">"/],
      ['21:18', /bad condition: no check with id "nope"/],
      ['23:9', /route to "rejected", which is not an output; declared outputs: passed, failed/],
      ['24:11', /on-error must be park, retry or an output name, not "explode"/],
    ]
    expect(got).toHaveLength(want.length)
    want.forEach(([pos, message], i) => {
      expect(got[i]).toMatch(new RegExp(`^${pos} `))
      expect(got[i]).toMatch(message)
    })
    for (const e of r.errors) expect(e.file).toBe(file)
    expect(formatLocatedError(r.errors[0]!)).toBe(`${file}:4:1 unknown key "colour"; known keys: key, name, description, logo, editorMode, input, outputs, settings, checks, route, maxTextLength, issues, on-error, events\n    colour: red\n    ^`)
  })

  it('collects errors across files, including duplicate module keys and yaml syntax errors', async () => {
    const ok = pipelineYaml('checks: []\nroute:\n  - to: passed\n')
    const { paths } = writePipelines({ 'a.yaml': ok, 'b.yaml': ok, 'c.yaml': 'key: c\n  name: [unclosed\n', 'd.yaml': pipelineYaml('checks:\n  - uses: regex\n    with: { target: { forbid: \'${settings.nope}\' } }\n') })
    const r = await loadPipelines(paths, testDeps())
    expect(r.ok).toBe(false)
    if (r.ok) return
    const byFile = r.errors.map((e) => `${path.basename(e.file)}:${e.line}:${e.col} ${e.message}`)
    expect(byFile).toContainEqual(expect.stringMatching(/^b\.yaml:1:6 module key "t" is already used by .*a\.yaml/))
    expect(byFile).toContainEqual(expect.stringMatching(/^c\.yaml:\d+:\d+ /))
    expect(byFile).toContainEqual(expect.stringMatching(/^d\.yaml:9:31 unknown setting "nope"/))
  })

  it('checks options that take settings with their defaults, at load', async () => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml(`settings:
  properties:
    pattern: { type: string, default: '(' }
checks:
  - uses: regex
    with:
      target:
        forbid: \${settings.pattern}
route:
  - to: passed
`) })
    const r = await loadPipelines(paths, testDeps())
    expect(!r.ok && r.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([expect.stringMatching(/^13:7 check "regex": plugin "regex" refused its options: .*Invalid regular expression/)])
  })

  it('says which checks would refuse the options that settings make, for settings the schema takes (the settings page refuses them)', async () => {
    const { set } = await loadOne(pipelineYaml(`settings:
  properties:
    maxLengthRatio: { type: number, default: 1.5 }
    label: { type: string }
checks:
  - uses: length
    with:
      maxRatio: \${settings.maxLengthRatio}
  - uses: regex
    id: labelled
    with:
      target:
        require: \${settings.label}
route:
  - to: passed
`))
    const pipeline = set.get('t')!
    const resolved = (stored: unknown) => {
      const r = pipeline.resolveSettings(stored)
      if (!r.ok) throw new Error(r.errors.join('; '))
      return r.settings
    }
    expect(await pipeline.checkSettings(resolved({ label: 'x' }))).toEqual([])
    expect(await pipeline.checkSettings(resolved({ maxLengthRatio: 2 }))).toEqual([])
    // 0 passes the settings schema, but length's maxRatio must be > 0; '(' is a string, but the
    // regex plugin cannot start with it.
    expect(await pipeline.checkSettings(resolved({ maxLengthRatio: 0, label: '(' }))).toEqual([
      'check "length": option maxRatio: must be > 0',
      expect.stringMatching(/^check "labelled": plugin "regex" refused its options: .*Invalid regular expression/),
    ])
    await set.close()
  })

  it('checks the standard formats in settings (email, uri...), takes textarea, and warns of a format it does not know', async () => {
    const yaml = pipelineYaml(`settings:
  properties:
    contact: { type: string, format: email }
    site: { type: string, format: uri }
    note: { type: string, format: textarea }
    tint: { type: string, format: colour }
checks: []
route:
  - to: passed
`)
    const { paths } = writePipelines({ 'p.yaml': yaml })
    const r = await loadPipelines(paths, testDeps())
    if (!r.ok) throw new Error(r.errors.map((e) => e.message).join('\n'))
    expect(r.warnings.map((w) => `${w.line}:${w.col} ${w.message}`)).toEqual([expect.stringMatching(/^12:35 unknown format "colour" is not checked; known: textarea, date, time, date-time/)])
    const pipeline = r.set.get('t')!
    // Checked when settings are saved (checkSettings); settings stored before run as they did.
    const bad = { contact: 'not an email', site: 'also not a uri', note: 'any\ntext', tint: 'anything' }
    expect(await pipeline.checkSettings(bad)).toEqual(['settings.contact: must match format "email"', 'settings.site: must match format "uri"'])
    expect(pipeline.resolveSettings(bad).ok).toBe(true)
    expect(await pipeline.checkSettings({ contact: 'ann@example.com', site: 'https://example.com/x' })).toEqual([])
    await r.set.close()
  })

  it('warns of a settings default that its own field refuses (a pipeline that loaded before still loads); a required field without a default is the user\'s to fill', async () => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml(`settings:
  required: [apiKey]
  properties:
    apiKey: { type: string }
    limit: { type: integer, minimum: 1, default: 0 }
    tone: { type: string, enum: [formal, informal], default: formal }
checks: []
route:
  - to: passed
`) })
    const r = await loadPipelines(paths, testDeps())
    if (!r.ok) throw new Error(r.errors.map((e) => e.message).join('\n'))
    expect(r.warnings.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([expect.stringMatching(/^11:50 the default of setting "limit" does not pass its own schema \(a step that did not save it runs without it, and the settings page cannot save until it is changed\): limit: must be >= 1$/)])
    await r.set.close()
  })

  // Without the alias limit, expanding the bomb runs out of memory or the test's timeout.
  it('refuses an alias bomb', async () => {
    const bomb = ['key: bomb', 'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    for (let i = 1; i < 9; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`)
    const { paths } = writePipelines({ 'bomb.yaml': `${bomb.join('\n')}\n` })
    const r = await loadPipelines(paths, testDeps())
    expect(!r.ok && r.errors[0]!.message).toMatch(/refused: .*alias/i)
  })

  it('refuses a huge file before parsing it', async () => {
    const { paths } = writePipelines({ 'huge.yaml': `key: huge\n# ${'x'.repeat(1024 * 1024)}\n` })
    const r = await loadPipelines(paths, testDeps())
    expect(!r.ok && r.errors[0]!.message).toMatch(/a pipeline may have at most 1048576/)
  })

  it('reports a broken PLUGINS_DIR file and an uninstalled npm plugin', async () => {
    const { dir, paths } = writePipelines({ 'p.yaml': pipelineYaml('checks:\n  - uses: npm:switchyard-plugin-that-is-not-installed\nroute:\n  - to: passed\n') })
    writeFileSync(path.join(dir, 'bad.mjs'), 'export default { nope: true }\n')
    const r = await loadPipelines(paths, testDeps({ pluginsDir: dir }))
    expect(!r.ok && r.errors.map((e) => e.message)).toEqual([
      expect.stringContaining('the default export is not a plugin definition'),
      expect.stringContaining('npm package "switchyard-plugin-that-is-not-installed" is not installed'),
    ])
  })

  it('imports npm: packages and refuses one that is not a plugin', async () => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml('checks:\n  - uses: npm:yaml\nroute:\n  - to: passed\n') })
    const r = await loadPipelines(paths, testDeps())
    expect(!r.ok && r.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual(['8:11 npm package "yaml" does not export a plugin definition as default'])
  })

  // Rule: whatever an npm: package throws on import (null included), or a definition it exports
  // that cannot be used (`needs: 5`), is an error at its `uses:`, never a rejected load.
  describe('npm: packages that break on import', () => {
    const made: string[] = []
    afterAll(() => { for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true }) })
    const npmPackage = (name: string, index: string) => {
      const dir = path.join(PACKAGE_ROOT, 'node_modules', name)
      made.push(dir)
      mkdirSync(dir, { recursive: true })
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', main: 'index.js' }))
      writeFileSync(path.join(dir, 'index.js'), index)
    }

    it('one whose import throws null, or exports `needs: 5`', async () => {
      npmPackage('switchyard-test-throws-null', 'throw null\n')
      npmPackage('switchyard-test-needs-five', "export default { name: 'five', description: 'd', options: { type: 'object' }, needs: 5, create() { return { check: () => [] } } }\n")
      const { paths } = writePipelines({ 'p.yaml': pipelineYaml('checks:\n  - uses: npm:switchyard-test-throws-null\n  - uses: npm:switchyard-test-needs-five\nroute:\n  - to: passed\n') })
      const r = await loadPipelines(paths, testDeps())
      expect(!r.ok && r.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([
        '8:11 cannot load plugin "npm:switchyard-test-throws-null": null',
        "9:11 npm package \"switchyard-test-needs-five\": plugin \"five\": `needs` must be a list of strings (such as ['translation']), not 5",
      ])
    })
  })

  // Rule: a file that is not UTF-8 is refused, at the line of its first bad byte; it never loads
  // with U+FFFD in its names, messages or patterns. A BOM is taken.
  it('refuses a file that is not UTF-8 (Latin-1 here), at the line of the first bad byte; takes a BOM', async () => {
    const text = pipelineYaml("checks:\n  - uses: regex\n    with: { target: { forbid: 'caf\xe9' } }\nroute:\n  - to: passed\n")
    const { paths } = writePipelines({
      'latin1.yaml': Buffer.from(text.replace('name: Test', 'name: Caf\xe9 gate'), 'latin1'),
      'pattern.yaml': Buffer.from(text.replace('key: t', 'key: u'), 'latin1'),
    })
    const r = await loadPipelines(paths, testDeps())
    expect(!r.ok && r.errors.map((e) => `${path.basename(e.file)}:${e.line} ${e.message}`)).toEqual([
      'latin1.yaml:2 not UTF-8: save the file as UTF-8 (a pipeline file is read as UTF-8 only)',
      'pattern.yaml:9 not UTF-8: save the file as UTF-8 (a pipeline file is read as UTF-8 only)',
    ])
    const bom = await loadOne(`\ufeff${text.replace('name: Test', 'name: Café gate')}`)
    expect(bom.set.get('t')!.name).toBe('Café gate')
    await bom.set.close(0)
  })

  // Rule: settings are read as own properties: a setting called toString, valueOf or constructor
  // without a default has no value until a step gives one (never Object.prototype's function).
  it('a setting named like an Object.prototype member (toString) without a default', async () => {
    const deps = testDeps({ pluginsDir: FIXTURE_PLUGINS })
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml("settings:\n  properties:\n    toString: { type: string }\n    valueOf: { type: string }\nchecks:\n  - uses: echo-options\n    with: { label: 'x ${settings.valueOf}' }\n  - uses: echo-options\n    id: whole\n    with: { label: '${settings.toString}' }\nroute:\n  - to: passed\n") })
    const r = await loadPipelines(paths, deps)
    if (!r.ok) throw new Error(r.errors.map(formatLocatedError).join('\n'))
    const set = r.set
    expect(r.warnings).toEqual([]) // no "default does not pass its own schema": it has none
    expect(deps.counts.get('echo.created')).toBeUndefined() // no default: created when a step's settings arrive
    const messages = async (settings: Record<string, unknown>) => (await set.get('t')!.run(items([{ source: 'a', translation: 'b' }], settings)))[0]!.findings.map((f) => f.message)
    expect(await messages({ toString: 'hi', valueOf: 'v' })).toEqual(['{"label":"x v"}', '{"label":"hi"}'])
    expect(await messages({})).toEqual(['{"label":"x "}', '{}'])
    await set.close(0)
  })

  // Rule: a condition's names are the language's own: toString, constructor, __proto__... are
  // unknown names at file:line:col, not fields that throw on every string.
  it('refuses a condition naming an Object.prototype member', async () => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml('checks:\n  - uses: regex\n    with: { target: { forbid: x } }\n    if: constructor\nroute:\n  - if: __proto__\n    to: failed\n  - if: toString == "x"\n    to: passed\n') })
    const r = await loadPipelines(paths, testDeps())
    expect(!r.ok && r.errors.map((e) => `${e.line}:${e.col} ${e.message.replace(/; known: .*/, '')}`)).toEqual([
      '10:9 bad condition: unknown name "constructor"',
      '12:9 bad condition: unknown name "__proto__"',
      '14:9 bad condition: unknown name "toString"',
    ])
  })

  it('loads events and a logo; lists the event names', async () => {
    const { dir, paths } = writePipelines({ 'p.yaml': pipelineYaml('logo: p.png\nchecks: []\nroute:\n  - to: passed\nevents:\n  - on: project.translated\n    uses: listener\n  - on: project.approved\n    uses: listener\n') })
    writeFileSync(path.join(dir, 'p.png'), readFileSync(path.join(PIPELINES, 'qa-gate.png')))
    const r = await loadPipelines(paths, testDeps())
    if (!r.ok) throw new Error(r.errors.map(formatLocatedError).join('\n'))
    expect(r.set.events()).toEqual(['project.approved', 'project.translated'])
    expect(r.set.get('t')!.logo).toEqual({ path: path.join(dir, 'p.png'), contentType: 'image/png' })
    await r.set.close(0)
  })

  it('rejects a missing logo and a plugin without onEvent in events', async () => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml('logo: nope.png\nchecks: []\nroute:\n  - to: passed\nevents:\n  - on: project.translated\n    uses: shout\n') })
    const r = await loadPipelines(paths, testDeps())
    expect(!r.ok && r.errors.map((e) => `${e.line} ${e.message}`)).toEqual([
      expect.stringMatching(/^7 logo file nope.png does not exist/),
      expect.stringMatching(/^13 plugin "shout" cannot be used for events/),
    ])
  })
})

describe('the issues option', () => {
  const routes = 'checks: []\nroute:\n  - if: errors > 0\n    to: failed\n  - if: warnings > 2\n    to: failed\n  - to: passed\n'
  it('names the outputs that send a string back; by default those routed on errors', async () => {
    const named = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml(`${routes}issues:\n  outputs: [failed, passed]\n`) }).paths, testDeps())
    if (!named.ok) throw new Error(named.errors.map(formatLocatedError).join('\n'))
    expect(named.set.get('t')!.issues).toEqual({ outputs: ['failed', 'passed'] })
    const byDefault = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml(`${routes}issues: {}\n`) }).paths, testDeps())
    if (!byDefault.ok) throw new Error(byDefault.errors.map(formatLocatedError).join('\n'))
    expect(byDefault.set.get('t')!.issues).toEqual({ outputs: ['failed'] })
    const off = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml(`${routes}issues: { raise: false }\n`) }).paths, testDeps())
    expect(off.ok && off.set.get('t')!.issues).toBeUndefined()
    const absent = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml(routes) }).paths, testDeps())
    expect(absent.ok && absent.set.get('t')!.issues).toBeUndefined()
  })

  it('refuses an output that is not declared, and warns when no route counts errors', async () => {
    const bad = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml(`${routes}issues:\n  outputs: [rejected]\n`) }).paths, testDeps())
    expect(bad.ok).toBe(false)
    if (!bad.ok) expect(bad.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual(['15:13 issues on "rejected", which is not an output; declared outputs: passed, failed'])
    const none = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml('checks: []\nroute:\n  - to: passed\nissues: {}\n') }).paths, testDeps())
    expect(none.ok).toBe(true)
    if (none.ok) expect(none.warnings.map((w) => w.message)).toContain('no route counts errors, so no output sends strings back: name them in issues.outputs')
  })
})

describe('shipped pipelines', () => {
  it('every pipelines/*.yaml loads', async () => {
    const files = await listPipelineFiles(PIPELINES)
    expect(files.map((f) => path.basename(f))).toContain('qa-gate.yaml')
    const r = await loadPipelines(files, testDeps({ pluginsDir: undefined }))
    if (!r.ok) throw new Error(r.errors.map(formatLocatedError).join('\n'))
    const qa = r.set.get('qa-gate')!
    expect(qa.outputs).toEqual([{ name: 'passed', port: 'approved', title: 'Passed' }, { name: 'failed', port: 'translated', title: 'Needs fixes' }])
    expect(qa.logo?.contentType).toBe('image/png')
    expect(qa.issues).toEqual({ outputs: ['failed'] })
    await r.set.close(0)
  })

  it('qa-gate.png is a 48x48 PNG', () => {
    const png = readFileSync(path.join(PIPELINES, 'qa-gate.png'))
    expect(png.subarray(1, 4).toString()).toBe('PNG')
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([48, 48])
  })

  it('pipelines/pipeline.schema.json is the schema the loader uses', () => {
    const published = JSON.parse(readFileSync(path.join(PIPELINES, 'pipeline.schema.json'), 'utf8'))
    expect(published, 'regenerate it with writePipelineSchema() (see src/engine/pipeline-schema.ts)').toEqual(JSON.parse(JSON.stringify(pipelineSchema)))
    for (const f of ['qa-gate.yaml']) expect(readFileSync(path.join(PIPELINES, f), 'utf8')).toMatch(/^# yaml-language-server: \$schema=\.\/pipeline\.schema\.json/)
  })
})
