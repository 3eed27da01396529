// A step's saved settings that the pipeline refuses once its schema changed, end to end: the worker
// and the emulated service, the settings saved through the workflow editor. Its strings must not
// be checked with the defaults in place of what the step saved (they were approved without the
// step's forbidden pattern): each goes where on-error says, here parked at the service as TODO.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import type { PipelineHost } from '../../src/engine/pipeline-host.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { SettingsService } from '../../src/settings/settings-service.js'
import { createSettingsRouter } from '../../src/settings/settings-routes.js'
import { createStores } from '../../src/store/create-stores.js'
import { silentLogger } from '../../src/util/logger.js'
import { startWorker, type Worker } from '../../src/worker.js'
import { loadPipelines } from '../durability/harness.js'

const pipeline = (forbid: string) => `key: qa-gate
name: QA gate
description: Forbids a pattern the step sets.
input: [translated]
outputs:
  passed: { port: approved, title: Passed }
  failed: { port: translated, title: Needs fixes }
settings:
  properties:
    forbid: { ${forbid}, default: 'zzzz-never', title: Forbidden pattern }
checks:
  - uses: regex
    with:
      target:
        forbid: \${settings.forbid}
route:
  - if: errors > 0
    to: failed
  - to: passed
on-error: park
`

const SECRET = 'app-secret-of-the-test'
let emu: Emulator
let worker: Worker
let host: PipelineHost
let dir: string

beforeAll(async () => {
  emu = await startEmulator({ strings: 4, languages: ['de'], appSecret: SECRET, moduleKey: 'qa-gate', clientId: 'client', clientSecret: 'client-secret-of-the-test' })
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-settings-change-'))
  writeFileSync(path.join(dir, 'qa-gate.yaml'), pipeline(`type: string`))
  host = (await loadPipelines(dir)) as PipelineHost
  const stores = await createStores('memory://')
  const settings = new SettingsService(stores.settings, silentLogger())
  const token = (await emu.authorizeDirect()).access_token
  const config = loadConfig({}, {
    port: 0, host: '127.0.0.1', storeUrl: 'memory://', reportLingerMs: 20, reconcileIntervalMs: 0,
    apiUrl: emu.info().apiUrlTemplate, appSecrets: [SECRET], clientId: 'client', clientSecret: 'client-secret-of-the-test', settingsScriptUrl: '',
  })
  worker = await startWorker({
    config, log: silentLogger(), stores, pipelines: host, tokens: new StaticTokenProvider(new Map([['*', token]])), settings: settings.jobLookup(),
    routers: [createSettingsRouter({ config, settings, pipelines: () => host.current, log: silentLogger() })],
  })
  emu.configure({ webhookUrl: `${worker.url}/webhooks`, appUrl: worker.url })
})

afterAll(async () => {
  await worker?.stop()
  await emu?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('saved settings the pipeline no longer accepts', () => {
  it('parks the step\'s strings (on-error) rather than approving them with the defaults', async () => {
    // Every non-empty translation has a character: with the step's pattern, every one fails.
    expect((await emu.editor.saveSettings({ forbid: '[\\s\\S]' })).status).toBe(200)
    // The pipeline narrows the setting: the saved pattern no longer passes it.
    writeFileSync(path.join(dir, 'qa-gate.yaml'), pipeline(`type: string, maxLength: 4`))
    expect((await host.reload()).ok).toBe(true)
    await emu.sendPending()
    await worker.idle(30_000)
    await worker.reporter.flush()
    const statuses = emu.statuses()
    expect(statuses.length).toBe(4)
    // Not `DONE` on approved (the old code ran them without the step's pattern: its default fails
    // the narrowed schema too, so with no settings at all): parked, for a manager to see.
    expect(statuses.map((s) => [s.status, s.output])).toEqual(statuses.map(() => ['TODO', '']))
  })
})
