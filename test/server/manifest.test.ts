// GET /manifest.json: one workflow-step-type module per pipeline with every field of section 2.3
// (URLs relative), one webhook module listing the events the pipelines need, BASE_URL filled in.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { PipelineHost } from '../../src/engine/pipeline-host.js'
import { PORTS } from '../../src/webhooks/event-types.js'
import { silentLogger } from '../../src/util/logger.js'
import type { PipelineSource } from '../../src/worker.js'
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
  worker = await startTestWorker({ pipelines: host as unknown as PipelineSource, config: { baseUrl: 'https://switchyard.example.com', clientId: 'client-1', clientSecret: 'client-1-secret' } })
  manifest = (await (await fetch(`${worker.url}/manifest.json`)).json()) as Record<string, any>
})
afterAll(async () => worker?.stop())

describe('GET /manifest.json', () => {
  it('fills BASE_URL and the client id into the template', () => {
    expect(manifest.baseUrl).toBe('https://switchyard.example.com')
    expect(manifest.authentication).toEqual({ type: 'authorization_code', clientId: 'client-1' })
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
