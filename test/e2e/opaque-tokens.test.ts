// The interface document shows neither the claims nor the structure of access tokens: the
// emulator's `opaqueTokens` gives plain random strings. Connected so, the worker learns nothing of
// the organization's id from its token; the settings token a manager's editor sends (signed with
// the client secret, naming `domain` and `context.organization_id`) binds the two, so that no
// delivery's unsigned domain header is believed for it (test/settings/settings-binds-organization.test.ts).
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { SignJWT } from 'jose'
import { afterAll, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { startServe } from '../../src/cli/serve.js'
import { loadConfig } from '../../src/config/load-config.js'
import { startEmulator } from '../../src/emulator/index.js'
import { silentLogger } from '../../src/util/logger.js'

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-opaque-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

it('an organization connected with opaque tokens is bound to its domain by its settings token', async () => {
  const emu = await startEmulator({ strings: 20, languages: ['de'], moduleKey: 'qa-gate', seed: 5, redirectUris: ['http://127.0.0.1:0/oauth/callback'] })
  emu.configure({ faults: { opaqueTokens: true } })
  const info = emu.info()
  const config = loadConfig({}, {
    port: 0, host: '127.0.0.1', appSecrets: [info.appSecret], clientId: info.clientId, clientSecret: info.clientSecret,
    authUrl: info.authUrl, apiUrl: info.apiUrl, dataDir, storeUrl: `sqlite://${path.join(dataDir, 's.sqlite')}`, reconcileIntervalMs: 0,
  })
  const running = await startServe(config, silentLogger())
  try {
    const base = running.worker.url
    running.config.baseUrl = base
    emu.oauth.registerClient({ clientId: info.clientId, clientSecret: info.clientSecret, redirectUris: [`${base}/oauth/callback`] })
    await connectThroughBrowser(base, info.organization.domain)
    const organization = String(info.organization.id)
    // Connected, and its token says nothing of which organization it is.
    expect((await running.tokens.status()).map((s) => s.connected)).toEqual([true])
    expect(await running.tokens.domainOf(organization)).toBeUndefined()

    const jwt = await new SignJWT({ domain: info.organization.domain, module: 'qa-gate', context: { project_id: info.projectId, organization_id: Number(info.organization.id), user_id: 1 } })
      .setProtectedHeader({ alg: 'HS256' }).setAudience(info.clientId).setSubject('1').setIssuedAt().setExpirationTime('5m')
      .sign(new TextEncoder().encode(info.clientSecret))
    expect((await fetch(`${base}/steps/qa-gate/settings?stepId=${info.stepId}&jwtToken=${jwt}`)).status).toBe(200)
    expect(await running.tokens.domainOf(organization)).toBe(info.organization.domain)

    // Its strings go through as usual.
    emu.configure({ webhookUrl: `${base}/webhooks` })
    await emu.sendPending({ batchSize: 10 })
    await running.worker.idle(30_000)
    expect(emu.summary().notDone).toBe(0)
  } finally {
    await running.stop()
    await emu.stop()
  }
}, 60_000)
