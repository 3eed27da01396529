// Reading pipeline files (src/engine/load-pipelines.ts) before they are compiled: a file that
// cannot be read or is not a mapping, a folder that cannot be listed, YAML warnings, and schema
// errors located at the key or value they are about.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { listPipelineFiles, loadPipelines } from '../../src/engine/load-pipelines.js'
import { pipelineYaml, testDeps, writePipelines } from './helpers.js'

const PASS = 'checks: []\nroute:\n  - to: passed\n'

async function problems(files: Record<string, string>) {
  const r = await loadPipelines(writePipelines(files).paths, testDeps())
  if (r.ok) { await r.set.close(0); return { errors: [], warnings: r.warnings.map((e) => `${e.line}:${e.col} ${e.message}`) } }
  return { errors: r.errors.map((e) => `${path.basename(e.file)}:${e.line}:${e.col} ${e.message}`), warnings: [] }
}

describe('reading pipeline files', () => {
  it('a file that is not a mapping, or cannot be read', async () => {
    expect((await problems({ 'p.yaml': '- a\n- b\n' })).errors).toEqual(['p.yaml:1:1 a pipeline file must be a mapping (key: ..., name: ..., checks: ...)'])
    expect((await problems({ 'p.yaml': 'just text\n' })).errors).toEqual(['p.yaml:1:1 a pipeline file must be a mapping (key: ..., name: ..., checks: ...)'])
    expect((await problems({ 'p.yaml': '' })).errors).toEqual(['p.yaml:1:1 a pipeline file must be a mapping (key: ..., name: ..., checks: ...)'])
    const r = await loadPipelines(['/nonexistent/switchyard/p.yaml'], testDeps())
    expect(!r.ok && r.errors).toEqual([{ file: '/nonexistent/switchyard/p.yaml', line: 1, col: 1, message: expect.stringMatching(/^cannot read: ENOENT/) }])
  })

  it('a folder: its *.yaml and *.yml files, sorted; one that cannot be listed is an error', async () => {
    const { dir } = writePipelines({ 'b.yml': 'x', 'a.YAML': 'x', 'c.json': '{}', 'd.yaml.bak': 'x' })
    mkdirSync(path.join(dir, 'sub'))
    expect((await listPipelineFiles(dir)).map((f) => path.basename(f))).toEqual(['a.YAML', 'b.yml'])
    const r = await loadPipelines({ dir: path.join(dir, 'nope') }, testDeps())
    expect(!r.ok && r.errors).toEqual([{ file: path.join(dir, 'nope'), line: 1, col: 1, message: expect.stringMatching(/^cannot list pipelines: ENOENT/) }])
  })

  it('a folder of *.yml files loads as one of *.yaml files does', async () => {
    const { dir } = writePipelines({ 'a.yml': pipelineYaml(PASS), 'b.yaml': pipelineYaml(PASS).replace('key: t', 'key: u') })
    const r = await loadPipelines({ dir }, testDeps())
    expect(r.ok && r.set.all().map((p) => p.key)).toEqual(['t', 'u'])
    if (r.ok) await r.set.close(0)
  })

  // One pipeline in two files (a copy left behind by a rename): with two module keys, both became
  // steps; with one, the second was refused as a key used twice, which did not say why.
  it.each([['different module keys', 'key: u'], ['one module key', 'key: t']])('x.yaml beside x.yml (%s): an error naming both, in a folder or a list', async (_, key) => {
    const { dir, paths } = writePipelines({ 'x.yaml': pipelineYaml(PASS), 'x.yml': pipelineYaml(PASS).replace('key: t', key), 'y.yml': pipelineYaml(PASS).replace('key: t', 'key: y') })
    const message = 'x.yaml is beside it: one pipeline in two files? Keep one of them (x.yaml or x.yml, not both)'
    for (const source of [{ dir }, paths]) {
      const r = await loadPipelines(source, testDeps())
      expect(!r.ok && r.errors).toEqual([{ file: path.join(dir, 'x.yml'), line: 1, col: 1, message }])
    }
  })

  it('YAML errors at their place, each once; duplicate keys are errors', async () => {
    expect((await problems({ 'p.yaml': pipelineYaml(PASS).replace('name: Test', 'name: Test\nname: Again') })).errors).toEqual([expect.stringMatching(/^p\.yaml:3:1 Map keys must be unique/)])
  })

  it('schema errors: unknown nested keys name where they are; a missing key; a value not allowed', async () => {
    const { errors } = await problems({ 'p.yaml': pipelineYaml(PASS).replace('passed: { port: approved }', 'passed: { port: approved, colour: red }') })
    expect(errors).toEqual(['p.yaml:5:29 unknown key "colour" in outputs.passed; known keys: port, title'])
    expect((await problems({ 'p.yaml': 'key: t\nname: T\n' })).errors).toEqual(expect.arrayContaining(['p.yaml:1:1 (top level): missing required key "input"']))
    expect((await problems({ 'p.yaml': pipelineYaml(PASS).replace('input: [translated]', 'input: [translatd]') })).errors).toEqual([expect.stringMatching(/^p\.yaml:3:9 input\.0: "translatd" is not allowed; must be one of "untranslated", "translated", /)])
  })

  it('a file whose only schema errors are broken constraints is still compiled, so its other errors show too', async () => {
    const { errors } = await problems({ 'p.yaml': pipelineYaml('checks:\n  - uses: speling\nroute:\n  - to: passed\n', 'editorMode: wide\n') })
    expect(errors).toEqual([
      expect.stringMatching(/^p\.yaml:\d+:\d+ editorMode: "wide" is not allowed/),
      expect.stringMatching(/^p\.yaml:\d+:\d+ unknown plugin or preset "speling"/),
    ])
  })
})

describe('a set of files', () => {
  it('one file\'s errors refuse the whole set; each file is still checked', async () => {
    const { errors } = await problems({ 'a.yaml': pipelineYaml(PASS), 'b.yaml': pipelineYaml(PASS).replace('key: t', 'key: u').replace('to: passed', 'to: nowhere') })
    expect(errors).toEqual([expect.stringMatching(/^b\.yaml:\d+:\d+ route to "nowhere"/)])
  })

  it('a broken PLUGINS_DIR file refuses the set, located at the file', async () => {
    const { dir, paths } = writePipelines({ 'p.yaml': pipelineYaml(PASS) })
    writeFileSync(path.join(dir, 'x.mjs'), 'export default 1\n')
    const r = await loadPipelines(paths, testDeps({ pluginsDir: dir }))
    expect(!r.ok && r.errors.map((e) => `${path.basename(e.file)}:${e.line}:${e.col} ${e.message}`)).toEqual(['x.mjs:1:1 the default export is not a plugin definition (definePlugin({ name, description, options, create }))'])
  })
})
