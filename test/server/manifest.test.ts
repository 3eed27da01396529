// GET /manifest.json: one workflow-step-type module per pipeline with every field of section 2.3
// (URLs relative), one webhook module listing the events the pipelines need, BASE_URL filled in.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { PipelineHost, pipelineSourceOf } from '../../src/engine/pipeline-host.js'
import { renderManifest } from '../../src/server/manifest.js'
import { PORTS } from '../../src/protocol/string-status.js'
import { silentLogger } from '../../src/util/logger.js'
import { signedRequest } from '../support/events.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

let worker: Awaited<ReturnType<typeof startTestWorker>>
let manifest: Record<string, any>
const pluginMetrics: string[] = []

beforeAll(async () => {
  const host = new PipelineHost(
    [path.join(PACKAGE_ROOT, 'pipelines/qa-gate.yaml'), path.join(PACKAGE_ROOT, 'pipelines/ai-proofread.yaml'), path.join(PACKAGE_ROOT, 'test/fixtures/pipelines/events.yaml')],
    { pluginsDir: path.join(PACKAGE_ROOT, 'test/fixtures/plugins'), log: silentLogger(), cacheFor: () => ({ get: async () => undefined, set: async () => {} }), env: { OPENAI_API_KEY: 'x' }, metrics: { add: (name) => pluginMetrics.push(name) } },
  )
  const loaded = await host.load()
  expect(loaded.errors).toEqual([])
  worker = await startTestWorker({ pipelines: host, config: { baseUrl: 'https://switchyard.example.com', clientId: 'client-1', clientSecret: 'client-1-secret' } })
  manifest = (await (await fetch(`${worker.url}/manifest.json`)).json()) as Record<string, any>
})
afterAll(async () => worker?.stop())

describe('PIPELINES_DIR', () => {
  it('is a directory, or a comma-separated list of pipeline files (serve, manifest and the worker read it alike)', () => {
    expect(pipelineSourceOf('/srv/pipelines')).toEqual({ dir: '/srv/pipelines' })
    expect(pipelineSourceOf('/a/qa.yaml, /b/ai.yaml,')).toEqual(['/a/qa.yaml', '/b/ai.yaml'])
  })

  it('takes one pipeline file as a list of one, not as a directory to list', () => {
    expect(pipelineSourceOf('/a/qa.yaml')).toEqual(['/a/qa.yaml'])
    expect(pipelineSourceOf('pipelines/Gate.YML')).toEqual(['pipelines/Gate.YML'])
  })
})

describe('GET /manifest.json', () => {
  it('fills BASE_URL and the client id into the template', () => {
    expect(manifest.baseUrl).toBe('https://switchyard.example.com')
    expect(manifest.authentication).toEqual({ type: 'authorization_code', clientId: 'client-1' })
  })

  it('names the scopes the authorization asks for (OAUTH_SCOPES), whatever the template says', () => {
    expect(manifest.scopes).toEqual(['project'])
    const wider = renderManifest({ baseUrl: 'https://x.example', clientId: 'c', pipelines: [], events: [], scopes: 'project  tm glossary' })
    expect(wider.scopes).toEqual(['project', 'tm', 'glossary'])
  })

  it('has one workflow-step-type module per pipeline with every field of section 2.3', () => {
    const steps = manifest.modules['workflow-step-type'] as any[]
    expect(steps.map((s) => s.key).sort()).toEqual(['ai-proofread', 'events-demo', 'qa-gate'].sort())
    const qa = steps.find((s) => s.key === 'qa-gate')
    expect(Object.keys(qa).sort()).toEqual(['boundaries', 'deleteSettingsUrl', 'description', 'editorMode', 'environments', 'key', 'logo', 'name', 'updateSettingsUrl', 'url'].sort())
    expect(qa).toMatchObject({
      name: 'QA gate',
      editorMode: 'side-by-side',
      logo: '/steps/qa-gate/logo',
      updateSettingsUrl: '/steps/qa-gate/settings',
      deleteSettingsUrl: '/steps/qa-gate/settings',
      url: '/steps/qa-gate/settings',
      environments: ['service-enterprise'],
      boundaries: { input: { title: 'Input', ports: ['translated'] }, outputs: [{ title: 'Passed', port: 'approved' }, { title: 'Needs fixes', port: 'translated' }] },
    })
    for (const s of steps) {
      for (const port of [...s.boundaries.input.ports, ...s.boundaries.outputs.map((o: { port: string }) => o.port)]) expect(PORTS).toContain(port)
      for (const url of [s.url, s.updateSettingsUrl, s.deleteSettingsUrl]) expect(url).toMatch(/^\/[^/]/)
    }
  })

  it('serves the logo the manifest names', async () => {
    const res = await fetch(`${worker.url}/steps/qa-gate/logo`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    const png = Buffer.from(await res.arrayBuffer())
    expect(png.subarray(1, 4).toString()).toBe('PNG')
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([48, 48])
  })

  it('gives every workflow-step-type module a logo: the pipeline\'s, else the bundled default', () => {
    const steps = manifest.modules['workflow-step-type'] as any[]
    for (const s of steps) expect(s.logo, s.key).toBe(`/steps/${s.key}/logo`)
  })

  it('serves every logo the manifest and manifest.template.json name, as a 48x48 image', async () => {
    const named = new Set<string>()
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect)
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === 'logo' && typeof v === 'string') named.add(v)
          else collect(v)
        }
      }
    }
    collect(manifest)
    collect(JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'manifest.template.json'), 'utf8')))
    expect([...named]).toEqual(expect.arrayContaining(['/logo.png', '/steps/qa-gate/logo', '/steps/events-demo/logo']))
    for (const url of named) {
      expect(url, 'a logo URL is relative to baseUrl').toMatch(/^\/[^/]/)
      const res = await fetch(`${worker.url}${url}`)
      expect(res.status, url).toBe(200)
      expect(res.headers.get('content-type'), url).toMatch(/^image\//)
      const png = Buffer.from(await res.arrayBuffer())
      expect(png.subarray(1, 4).toString(), url).toBe('PNG')
      expect([png.readUInt32BE(16), png.readUInt32BE(20)], url).toEqual([48, 48])
    }
    // A step the manifest does not name has no logo.
    expect((await fetch(`${worker.url}/steps/no-such-step/logo`)).status).toBe(404)
  })

  it('puts no field in a module that sections 2.3 and 2.4 do not list (the platform refuses unknown fields)', () => {
    const only = (value: Record<string, unknown>, allowed: string[], where: string) =>
      expect(Object.keys(value).filter((k) => !allowed.includes(k)), where).toEqual([])
    for (const s of manifest.modules['workflow-step-type'] as any[]) {
      only(s, ['key', 'name', 'logo', 'description', 'boundaries', 'editorMode', 'updateSettingsUrl', 'deleteSettingsUrl', 'url', 'environments'], s.key)
      only(s.boundaries, ['input', 'outputs'], `${s.key}.boundaries`)
      only(s.boundaries.input, ['title', 'ports'], `${s.key}.boundaries.input`)
      for (const o of s.boundaries.outputs) only(o, ['title', 'port'], `${s.key}.boundaries.outputs[]`)
    }
    for (const w of manifest.modules.webhook as any[]) only(w, ['key', 'url', 'events', 'environments'], 'webhook')
    expect(Object.keys(manifest.modules).sort()).toEqual(['webhook', 'workflow-step-type'])
  })

  it('has one webhook module listing the recalculation event and every subscribed event', () => {
    const hooks = manifest.modules.webhook as any[]
    expect(hooks).toHaveLength(1)
    expect(hooks[0].url).toBe('/webhooks')
    expect(hooks[0].events).toContain('string.status_on_step.recalculation_triggered')
    expect(hooks[0].events).toContain('project.translated')
  })
})

describe('other events', () => {
  it('reach the subscribed plugin through the queue and are kept in the activity log', async () => {
    const body = JSON.stringify({ events: [
      { event: 'project.translated', project: { id: 5 }, targetLanguage: { id: 'de' }, projectId: 5 },
      { event: 'project.approved', project: { id: 5 }, targetLanguage: { id: 'fr' }, projectId: 5 },
      { event: 'file.added', file: { id: 1 } },
    ] })
    const res = await fetch(`${worker.url}/webhooks`, signedRequest(body, SECRET))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ accepted: 0, events: 3 })
    await worker.queue.onIdle()
    expect(pluginMetrics).toEqual(expect.arrayContaining(['event:project.translated:x:5', 'event:project.approved:approved:5']))
    expect(pluginMetrics.filter((m) => m.startsWith('event:file.added'))).toEqual([])
    const recent = (await worker.stores.activity.get('recent')) as Array<{ event: string }>
    expect(recent.map((e) => e.event).sort()).toEqual(['file.added', 'project.approved', 'project.translated'])
    expect(await (await fetch(`${worker.url}/metrics`)).text()).toMatch(/switchyard_webhook_events_total\{event="project.translated"\} 1/)
  })
})
