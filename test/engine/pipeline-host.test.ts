import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PipelineHost } from '../../src/engine/pipeline-host.js'
import type { PluginEvent } from '../../src/engine/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { items, pipelineYaml, testDeps, writePipelines } from './helpers.js'

const good = (name: string) => pipelineYaml(`checks:
  - uses: batcher
  - uses: flaky
    timeout: 2000
route:
  - if: errors > 0
    to: failed
  - to: passed
events:
  - on: project.translated
    uses: listener
    with: { tag: ${name} }
`).replace('name: Test', `name: ${name}`)

function event(name: string, payload: Record<string, unknown> = {}): PluginEvent {
  return { event: name, payload, organizationId: '1', domain: 'acme', log: silentLogger(), signal: new AbortController().signal }
}

describe('PipelineHost', () => {
  it('a reload that fails keeps the old pipelines and returns every error', async () => {
    const { dir } = writePipelines({ 'p.yaml': good('first') })
    const deps = testDeps()
    const host = new PipelineHost({ dir }, deps)
    expect(() => host.current).toThrow(/no pipelines loaded/)
    expect(await host.load()).toEqual({ ok: true, errors: [] })
    expect(host.current.get('t')!.name).toBe('first')

    writeFileSync(path.join(dir, 'p.yaml'), good('second').replace('uses: flaky', 'uses: nope').replace('to: passed', 'to: nowhere'))
    const bad = await host.reload()
    expect(bad.ok).toBe(false)
    expect(bad.errors.map((e) => e.message)).toEqual([expect.stringContaining('"nope"'), expect.stringContaining('"nowhere"')])
    expect(host.current.get('t')!.name).toBe('first')
    const [r] = await host.current.get('t')!.run(items([{ source: 'bad' }]))
    expect(r!.output).toBe('failed')

    writeFileSync(path.join(dir, 'p.yaml'), good('third'))
    expect((await host.reload()).ok).toBe(true)
    expect(host.current.get('t')!.name).toBe('third')
    await host.close()
  })

  it('a run in flight finishes with the old set; its plugins close only after it', async () => {
    const { dir } = writePipelines({ 'p.yaml': good('old') })
    const deps = testDeps()
    const host = new PipelineHost({ dir }, deps)
    await host.load()
    const old = host.current.get('t')!
    // "sluggish" keeps the flaky check busy for 300 ms, after batcher ran.
    const running = old.run(items([{ source: 'sluggish bad' }]))
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect((await host.reload()).ok).toBe(true)
    expect(deps.counts.get('batcher.closed') ?? 0).toBe(0)
    const [r] = await running
    expect(r!.output).toBe('failed')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(deps.counts.get('batcher.closed')).toBe(1)
    await host.close()
    expect(deps.counts.get('batcher.closed')).toBe(2)
  })

  it('dispatches project.translated to subscribed plugins; a failing handler is caught', async () => {
    const { dir } = writePipelines({ 'p.yaml': good('ev') })
    const deps = testDeps()
    const host = new PipelineHost({ dir }, deps)
    await host.load()
    expect(host.current.events()).toEqual(['project.translated'])
    await host.current.dispatchEvent(event('project.translated', { projectId: 7 }))
    await host.current.dispatchEvent(event('project.approved', { projectId: 8 }))
    await expect(host.current.dispatchEvent(event('project.translated', { fail: true }))).resolves.toBeUndefined()
    expect([...deps.counts.keys()].filter((k) => k.startsWith('event:'))).toEqual(['event:project.translated:ev:7'])
    await host.close()
  })
})

describe('PipelineHost: plugins that break while loading', () => {
  it('a plugin whose options schema is invalid, or whose create() throws a string, fails the reload with a located error; the old pipelines stay', async () => {
    const plugins = mkdtempSync(path.join(tmpdir(), 'switchyard-plugins-'))
    writeFileSync(path.join(plugins, 'bad-schema.mjs'), `export default { name: 'bad-schema', description: 'x', options: { type: 'strng' }, create() { return { check() { return [] } } } }\n`)
    writeFileSync(path.join(plugins, 'throws-string.mjs'), `export default { name: 'throws-string', description: 'x', options: { type: 'object' }, create() { throw 'no api key configured' } }\n`)
    const { dir } = writePipelines({ 'p.yaml': pipelineYaml('checks: []\nroute:\n  - to: passed\n') })
    const host = new PipelineHost({ dir }, testDeps({ pluginsDir: plugins }))
    expect((await host.load()).ok).toBe(true)
    writeFileSync(path.join(dir, 'p.yaml'), pipelineYaml('checks:\n  - uses: bad-schema\n  - uses: throws-string\nroute:\n  - to: passed\n').replace('name: Test', 'name: Broken'))
    const r = await host.reload()
    expect(r.ok).toBe(false)
    expect(r.errors.map((e) => `${path.basename(e.file)}:${e.line} ${e.message}`)).toEqual([
      expect.stringMatching(/^p\.yaml:\d+ check "bad-schema": option \(options\): the plugin's options schema is invalid \(schema is invalid: data\/type must be equal to one of the allowed values/),
      expect.stringMatching(/^p\.yaml:\d+ check "throws-string": plugin "throws-string" refused its options: no api key configured$/),
    ])
    expect(host.current.get('t')!.name).toBe('Test')
    await host.close()
  })
})
