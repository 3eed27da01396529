// The pipeline file's type comes from its schema (json-schema-to-ts), and the compiler reads that
// typed value: a file is compiled only when it has the schema's shape, so that its compile errors
// come with its schema errors when they can, and never from probing a value of the wrong type.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { loadPipelines } from '../../src/engine/load-pipelines.js'
import type { Pipeline, PipelineSource } from '../../src/engine/pipeline.js'
import type { PipelineHost } from '../../src/engine/pipeline-host.js'
import type { PipelinePool } from '../../src/engine/pipeline-pool.js'
import { writePipelineSchema, type CheckEntry, type EditorMode, type PipelineFile } from '../../src/engine/pipeline-schema.js'
import type { renderManifest } from '../../src/server/manifest.js'
import type { ProcessDeps } from '../../src/queue/process-jobs.js'
import type { Port } from '../../src/protocol/string-status.js'
import { pipelineYaml, testDeps, writePipelines } from './helpers.js'

async function errorsOf(yaml: string): Promise<string[]> {
  const r = await loadPipelines(writePipelines({ 'p.yaml': yaml }).paths, testDeps())
  return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.col} ${e.message}`)
}

describe('PipelineFile', () => {
  it('is the type of the schema, with the recursive fallback typed by hand', () => {
    expectTypeOf<PipelineFile['key']>().toEqualTypeOf<string>()
    expectTypeOf<PipelineFile['input']>().toEqualTypeOf<Port[]>()
    expectTypeOf<PipelineFile['outputs'][string]['port']>().toEqualTypeOf<Port>()
    expectTypeOf<PipelineFile['checks']>().toEqualTypeOf<CheckEntry[]>()
    expectTypeOf<CheckEntry['fallback']>().toEqualTypeOf<CheckEntry[] | undefined>()
    expectTypeOf<CheckEntry['severity']>().toEqualTypeOf<'error' | 'warning' | 'info' | undefined>()
    expectTypeOf<EditorMode>().toEqualTypeOf<'side-by-side' | 'comfortable' | 'multilingual'>()
    // Defaults are not filled in by the loader, so a key with a default stays optional.
    expectTypeOf<PipelineFile['on-error']>().toEqualTypeOf<string | undefined>()
  })
})

describe('the pipeline interfaces', () => {
  it('are the engine\'s: the host and the pool are sources the worker takes as they are', () => {
    expectTypeOf<PipelineHost>().toMatchTypeOf<PipelineSource>()
    expectTypeOf<PipelinePool>().toMatchTypeOf<PipelineSource>()
    expectTypeOf<ReturnType<ReturnType<ProcessDeps['pipelines']>['get']>>().toEqualTypeOf<Pipeline | undefined>()
    expectTypeOf<Pipeline[]>().toMatchTypeOf<Parameters<typeof renderManifest>[0]['pipelines']>()
  })
})

describe('a file is compiled once it has the shape of the schema', () => {
  it('unknown keys and broken constraints: schema and compile errors together', async () => {
    const errors = await errorsOf(pipelineYaml('checks:\n  - uses: speling\n    colour: red\nroute:\n  - to: passed\n', 'editorMode: wide\n'))
    expect(errors.some((e) => /unknown key "colour"/.test(e))).toBe(true)
    expect(errors.some((e) => /editorMode: "wide" is not allowed/.test(e))).toBe(true)
    expect(errors.some((e) => /unknown plugin or preset "speling"/.test(e))).toBe(true)
  })

  it('a value of the wrong type or a missing key: the schema errors alone', async () => {
    const wrongType = await errorsOf(pipelineYaml('checks:\n  - uses: speling\n    timeout: soon\nroute:\n  - to: passed\n'))
    expect(wrongType).toHaveLength(1)
    expect(wrongType[0]).toMatch(/checks\.0\.timeout: must be integer/)
    const missing = await errorsOf(pipelineYaml('checks:\n  - uses: speling\nroute:\n  - if: errors > 0\n'))
    expect(missing).toEqual([expect.stringMatching(/route\.0: missing required key "to"/)])
  })

  it('each step setting is declared by a schema object', async () => {
    const errors = await errorsOf(pipelineYaml('checks: []\nroute:\n  - to: passed\n', 'settings:\n  properties:\n    strict: 5\n'))
    expect(errors).toEqual([expect.stringMatching(/settings\.properties\.strict: must be object/)])
  })
})

describe('writePipelineSchema', () => {
  it('writes pipelines/pipeline.schema.json as published, byte for byte', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-schema-')), 'schema.json')
    await writePipelineSchema(file)
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(path.join(PACKAGE_ROOT, 'pipelines', 'pipeline.schema.json'), 'utf8'))
  })
})
