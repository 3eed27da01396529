// PipelineHost as an operator meets it on reload: the log lines it writes, the generation the
// pipeline pool's threads follow, and reloads asked for while one runs.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PipelineHost } from '../../src/engine/pipeline-host.js'
import { createLogger } from '../../src/util/logger.js'
import { pipelineYaml, testDeps, writePipelines } from './helpers.js'

function logged() {
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  return { log, lines }
}

const ok = (name: string, routes = 'route:\n  - to: passed\n') => pipelineYaml(`checks: []\n${routes}`).replace('name: Test', `name: ${name}`)

describe('PipelineHost reloads', () => {
  it('logs what it loaded, each warning with its place, and a failed reload; counts successful loads', async () => {
    const { dir, paths } = writePipelines({ 'p.yaml': ok('one', 'route:\n  - if: errors > 0\n    to: failed\n') })
    const { log, lines } = logged()
    const host = new PipelineHost(paths, testDeps({ log }))
    expect(host.generation).toBe(0)
    expect(host.origin).toEqual({ source: paths, pluginsDir: testDeps().pluginsDir })
    expect(await host.load()).toEqual({ ok: true, errors: [] })
    expect(host.generation).toBe(1)
    expect(lines.map((l) => [l.level, l.msg, l.pipelines])).toEqual([
      [40, `${path.join(dir, 'p.yaml')}:9:5 strings that match no route are parked (output ""); end the routes with one that has no \`if\` to route everything`, undefined],
      [30, 'pipelines loaded', ['t']],
    ])
    lines.length = 0
    writeFileSync(paths[0]!, ok('two').replace('to: passed', 'to: nowhere'))
    const bad = await host.reload()
    expect(bad.ok).toBe(false)
    expect(host.generation).toBe(1)
    expect(lines.map((l) => [l.level, l.msg, l.errors])).toEqual([[50, 'pipelines not reloaded; the previous ones stay in use', 1]])
    expect(host.current.get('t')!.name).toBe('one')
    await host.close()
  })

  it('a first load that fails does not speak of previous pipelines: there are none, and the worker does not start', async () => {
    const { paths } = writePipelines({ 'p.yaml': ok('one').replace('to: passed', 'to: nowhere') })
    const { log, lines } = logged()
    const host = new PipelineHost(paths, testDeps({ log }))
    expect((await host.load()).ok).toBe(false)
    expect(lines.map((l) => [l.level, l.msg, l.errors])).toEqual([[50, 'pipelines not loaded', 1]])
  })

  it('reloads asked for while one runs wait for it, then load the files as they are then', async () => {
    const { paths } = writePipelines({ 'p.yaml': ok('one') })
    const host = new PipelineHost(paths, testDeps())
    const first = host.load()
    writeFileSync(paths[0]!, ok('two'))
    const second = host.reload()
    expect(await first).toEqual({ ok: true, errors: [] })
    expect(await second).toEqual({ ok: true, errors: [] })
    expect(host.generation).toBe(2)
    expect(host.current.get('t')!.name).toBe('two')
    // A failed load does not stop the next one, and does not count.
    writeFileSync(paths[0]!, 'key: [')
    expect((await host.reload()).ok).toBe(false)
    writeFileSync(paths[0]!, ok('three'))
    expect((await host.reload()).ok).toBe(true)
    expect(host.current.get('t')!.name).toBe('three')
    expect(host.generation).toBe(3)
    await host.close()
  })

  it('close() before any load does nothing; a { dir } source lists its files', async () => {
    const { dir } = writePipelines({ 'a.yaml': ok('a'), 'b.yml': ok('b').replace('key: t', 'key: u'), 'c.txt': 'not a pipeline' })
    await expect(new PipelineHost({ dir }, testDeps()).close()).resolves.toBeUndefined()
    const host = new PipelineHost({ dir }, testDeps())
    expect((await host.load()).ok).toBe(true)
    expect(host.current.all().map((p) => p.key)).toEqual(['t', 'u'])
    await host.close()
  })

  // Rule: a plugin whose create() never ends at load fails that load after the check's timeout,
  // so reloads queued behind it still run (and load once the plugin is fixed).
  it('a load stuck on a create() that never ends does not hold the reloads behind it', async () => {
    const plugin = (create: string) => `export default { name: 'hangs', description: 'd', options: { type: 'object' }, create() { ${create} } }\n`
    const plugins = writePipelines({ 'hangs.mjs': plugin('return new Promise(() => {})') })
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml('checks:\n  - uses: hangs\n    timeout: 100\nroute:\n  - to: passed\n') })
    const host = new PipelineHost(paths, testDeps({ pluginsDir: plugins.dir }))
    const first = host.load()
    const second = host.reload() // asked for while the first waits on create()
    const stuck = { ok: false, errors: [expect.objectContaining({ line: 8, message: expect.stringContaining('did not start within 100 ms') })] }
    expect(await first).toEqual(stuck)
    expect(await second).toEqual(stuck)
    writeFileSync(path.join(plugins.dir, 'hangs.mjs'), plugin('return { check: () => [] }'))
    expect(await host.reload()).toEqual({ ok: true, errors: [] })
    await host.close()
  })
})
