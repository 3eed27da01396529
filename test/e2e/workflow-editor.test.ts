// The emulator as the workflow editor against the real worker: it reads /manifest.json, mints the
// settings JWT with the OAuth client secret, and saves and deletes a step's settings with the
// project and template bodies of the platform notes.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { startServe, type Running } from '../../src/cli/serve.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { freePort } from '../../src/util/free-port.js'
import { silentLogger } from '../../src/util/logger.js'

let emu: Emulator
let running: Running
let dataDir: string

beforeAll(async () => {
  emu = await startEmulator({ strings: 5, moduleKey: 'qa-gate', clientId: 'editor-client', clientSecret: 'editor-client-secret' })
  // The whole app as `switchyard serve` wires it (the settings routes are part of it).
  const port = await freePort()
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-editor-'))
  const info = emu.info()
  const config = loadConfig({}, {
    port, host: '127.0.0.1', baseUrl: `http://127.0.0.1:${port}`,
    appSecrets: [info.appSecret], clientId: info.clientId, clientSecret: info.clientSecret,
    authUrl: info.authUrl, apiUrl: info.apiUrl, dataDir, storeUrl: 'memory://', reconcileIntervalMs: 0,
  })
  running = await startServe(config, silentLogger())
  emu.configure({ webhookUrl: `http://127.0.0.1:${port}/webhooks` })
})

afterAll(async () => {
  await running?.stop()
  await emu?.stop()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

describe('the emulated workflow editor and the worker', () => {
  it('saves project and template settings and deletes the step, each answered 2XX', async () => {
    const saved = await emu.editor.saveSettings({ maxLengthRatio: 2 })
    expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300)
    const template = await emu.editor.saveSettings({ maxLengthRatio: 3 }, { template: true })
    expect(template.status, JSON.stringify(template.body)).toBeLessThan(300)
    const deleted = await emu.editor.deleteStep()
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300)
  })

  // The page learns its step from its address (docs/settings.md): the editor's iframe address
  // names it, so the page shows the settings saved for that step, not "does not know which step".
  it('opens the settings page of the step it edits, in a project or a template, with what was saved there', async () => {
    const target = { moduleKey: 'ai-proofread' }
    expect((await emu.editor.saveSettings({ instructions: 'Project voice' }, target)).status).toBe(200)
    expect((await emu.editor.saveSettings({ instructions: 'Template voice' }, { ...target, template: true })).status).toBe(200)
    for (const [where, saved, other] of [[target, 'Project voice', 'Template voice'], [{ ...target, template: true }, 'Template voice', 'Project voice']] as const) {
      const res = await fetch(await emu.editor.settingsPageUrl(where))
      const html = await res.text()
      expect(res.status).toBe(200)
      expect(html).not.toContain('does not know which step')
      expect(html).toContain(`value="${saved}"`)
      expect(html).not.toContain(other)
    }
  })

  // Today: the step modules have no logo unless the pipeline names one (issue 15, "Manifest").
  it('serves a manifest the platform accepts, and every logo it names', async () => {
    expect(await emu.editor.checkManifest()).toEqual([])
  })

  it('is refused with an expired token, a token for another module, or one signed with another secret', async () => {
    for (const target of [{ jwtTtlSeconds: -60 }, { moduleClaim: 'other-step' }, { signingSecret: 'not-the-client-secret' }]) {
      const res = await emu.editor.saveSettings({ maxLengthRatio: 2 }, target)
      expect([401, 403], JSON.stringify({ target, status: res.status })).toContain(res.status)
    }
  })
})
