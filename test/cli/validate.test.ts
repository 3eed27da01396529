import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { runValidate } from '../../src/cli/validate.js'
import { FIXTURE_PLUGINS, FIXTURES, pipelineYaml, writePipelines } from '../engine/helpers.js'
import { captureIo } from './io.js'

describe('switchyard validate', () => {
  it('prints every error as file:line:col message with the offending line; exit 1', async () => {
    const io = captureIo({})
    const file = path.join(FIXTURES, 'pipelines', 'broken.yaml')
    expect(await runValidate([file], io)).toBe(1)
    const lines = io.out().split('\n')
    const rel = path.relative(process.cwd(), file)
    expect(lines.slice(0, 3)).toEqual([
      expect.stringMatching(new RegExp(`^${rel.replace(/\./g, '\\.')}:4:1 unknown key "colour"`)),
      '    colour: red',
      '    ^',
    ])
    expect(lines.filter((l) => l.startsWith(rel))).toHaveLength(9)
    expect(io.out()).toMatch(/\n9 errors in 1 file\n$/)
  })

  it('defaults to PIPELINES_DIR; the shipped pipelines are valid (exit 0)', async () => {
    const io = captureIo({ PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines') })
    expect(await runValidate([], io)).toBe(0)
    expect(io.out()).toMatch(/valid: .*qa-gate/)
  })

  it('reads PIPELINES_DIR as serve does: a comma-separated list of files, or one file', async () => {
    const qa = path.join(PACKAGE_ROOT, 'pipelines', 'qa-gate.yaml')
    const ai = path.join(PACKAGE_ROOT, 'pipelines', 'ai-proofread.yaml')
    const list = captureIo({ PIPELINES_DIR: `${qa},${ai}` })
    expect(await runValidate([], list)).toBe(0)
    expect(list.out()).toBe('2 pipelines valid: qa-gate, ai-proofread\n')
    const one = captureIo({ PIPELINES_DIR: qa })
    expect(await runValidate([], one)).toBe(0)
    expect(one.out()).toBe('1 pipeline valid: qa-gate\n')
  })

  it('a directory among FILES stands for its *.yaml files (not EISDIR)', async () => {
    const io = captureIo({})
    expect(await runValidate([path.join(PACKAGE_ROOT, 'pipelines') + path.sep], io)).toBe(0)
    expect(io.out()).toBe('2 pipelines valid: ai-proofread, qa-gate\n')
    const broken = captureIo({})
    const { dir } = writePipelines({ 'p.yaml': pipelineYaml('checks:\n  - uses: nope\nroute:\n  - to: passed\n'), 'notes.txt': 'not a pipeline' })
    expect(await runValidate([dir], broken)).toBe(1)
    expect(broken.out()).toMatch(/p\.yaml:\d+:\d+ .*"nope"/)
    expect(broken.out()).not.toMatch(/EISDIR|notes\.txt/)
    const twice = captureIo({})
    expect(await runValidate([path.join(PACKAGE_ROOT, 'pipelines'), path.join(PACKAGE_ROOT, 'pipelines', 'qa-gate.yaml')], twice)).toBe(0)
    expect(twice.out()).toBe('2 pipelines valid: ai-proofread, qa-gate\n')
    const empty = captureIo({})
    expect(await runValidate([writePipelines({ 'a.txt': 'x' }).dir], empty)).toBe(1)
    expect(empty.err()).toMatch(/no pipeline files/)
  })

  it('a directory with *.yml files checks them too; x.yaml beside x.yml is an error naming both (exit 1)', async () => {
    const pass = 'checks: []\nroute:\n  - to: passed\n'
    const yml = captureIo({})
    expect(await runValidate([writePipelines({ 'a.yml': pipelineYaml(pass) }).dir], yml)).toBe(0)
    expect(yml.out()).toBe('1 pipeline valid: t\n')
    const twins = captureIo({})
    expect(await runValidate([writePipelines({ 'x.yaml': pipelineYaml(pass), 'x.yml': pipelineYaml(pass).replace('key: t', 'key: u') }).dir], twins)).toBe(1)
    expect(twins.out()).toMatch(/x\.yml:1:1 x\.yaml is beside it: one pipeline in two files\? Keep one of them \(x\.yaml or x\.yml, not both\)/)
  })

  it('an unquoted ${settings.x} in a { } mapping: the error says to quote it, once per line', async () => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml("settings:\n  properties:\n    r: { type: number, default: 2 }\nchecks:\n  - uses: length\n    with: { maxRatio: ${settings.r} }\nroute:\n  - to: passed\n") })
    const io = captureIo({})
    expect(await runValidate(paths, io)).toBe(1)
    const hints = io.out().split('\n').filter((l) => l.includes("quote a setting: '${settings.name}'"))
    expect(hints).toHaveLength(1)
    expect(hints[0]).toMatch(/p\.yaml:\d+:\d+ /)
  })

  it('uses PLUGINS_DIR plugins', async () => {
    const io = captureIo({ PLUGINS_DIR: FIXTURE_PLUGINS })
    expect(await runValidate([path.join(FIXTURES, 'pipelines', 'try-gate.yaml')], io)).toBe(0)
    const without = captureIo({})
    expect(await runValidate([path.join(FIXTURES, 'pipelines', 'try-gate.yaml')], without)).toBe(1)
    expect(without.out()).toMatch(/unknown plugin or preset "shout"/)
    // Why it is unknown: the plugin of one's own that a pipeline names is read from PLUGINS_DIR only.
    expect(without.out()).toMatch(/\(PLUGINS_DIR is not set: no plugins of your own are loaded\); presets: /)
    expect(io.out()).not.toMatch(/PLUGINS_DIR is not set/)
  })

  // Rule: whatever is wrong with a file or a plugin, validate answers with an exit code and the
  // place, never a rejected promise or a hang (each case once crashed, hung or passed).
  describe('answers with an exit code', () => {
    const pipeline = (body: string) => writePipelines({ 'p.yaml': pipelineYaml(body) }).paths

    it('a condition naming an Object.prototype member: exit 1, at its place', async () => {
      const io = captureIo({})
      expect(await runValidate(pipeline('checks:\n  - uses: empty\n    if: toString\nroute:\n  - to: passed\n'), io)).toBe(1)
      expect(io.out()).toMatch(/p\.yaml:9:9 bad condition: unknown name "toString"/)
    })

    it('a setting named valueOf without a default: exit 0 (its options are checked when a step gives it)', async () => {
      const io = captureIo({ PLUGINS_DIR: FIXTURE_PLUGINS })
      expect(await runValidate(pipeline("settings:\n  properties:\n    valueOf: { type: string }\nchecks:\n  - uses: echo-options\n    with: { label: '${settings.valueOf}' }\nroute:\n  - to: passed\n"), io)).toBe(0)
    })

    it('a file that is not UTF-8: exit 1', async () => {
      const { paths } = writePipelines({ 'p.yaml': Buffer.from(pipelineYaml('checks: []\nroute:\n  - to: passed\n').replace('name: Test', 'name: Caf\xe9'), 'latin1') })
      const io = captureIo({})
      expect(await runValidate(paths, io)).toBe(1)
      expect(io.out()).toMatch(/p\.yaml:2:1 not UTF-8/)
    })

    it('a PLUGINS_DIR file that throws undefined, or a plugin with `needs: {}`: exit 1, naming the file', async () => {
      const plugins = writePipelines({
        'bad.mjs': 'throw undefined\n',
        'odd.mjs': "export default { name: 'odd', description: 'd', options: { type: 'object' }, needs: {}, create() { return { check: () => [] } } }\n",
      })
      const io = captureIo({ PLUGINS_DIR: plugins.dir })
      expect(await runValidate(pipeline('checks: []\nroute:\n  - to: passed\n'), io)).toBe(1)
      expect(io.out()).toMatch(/bad\.mjs:1:1 cannot load plugin: undefined/)
      expect(io.out()).toMatch(/odd\.mjs:1:1 plugin "odd": `needs` must be a list of strings/)
    })

    it('a check whose create() never ends: exit 1 after its timeout', async () => {
      const plugins = writePipelines({ 'hangs.mjs': "export default { name: 'hangs', description: 'd', options: { type: 'object' }, create: () => new Promise(() => {}) }\n" })
      const io = captureIo({ PLUGINS_DIR: plugins.dir })
      expect(await runValidate(pipeline('checks:\n  - uses: hangs\n    timeout: 100\nroute:\n  - to: passed\n'), io)).toBe(1)
      expect(io.out()).toMatch(/p\.yaml:8:\d+ check "hangs": plugin "hangs" did not start within 100 ms/)
    })
  })
})
