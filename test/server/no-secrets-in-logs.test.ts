// A full run at debug level: OAuth connection, signed batches, a refused signature, a token that
// expires and is refreshed, a settings callback with its JWT, AI proofreading with an API key.
// Not one log line may carry a token, a secret, a code, a key or a signature.
import { readFileSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { SignJWT } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { startServe } from '../../src/cli/serve.js'
import { loadConfig } from '../../src/config/load-config.js'
import { startEmulator } from '../../src/emulator/index.js'
import { createLogger } from '../../src/util/logger.js'
import { signBody } from '../../src/protocol/webhook-signature.js'

const lines: string[] = []
const sink = new Writable({ write(chunk, _enc, done) { lines.push(...String(chunk).split('\n').filter(Boolean)); done() } })
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-logs-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('logs', () => {
  it('never carry a token, a secret or a signature across a full run at debug level', async () => {
    const emu = await startEmulator({ strings: 300, languages: ['de', 'fr'], moduleKey: 'qa-gate', seed: 3, redirectUris: ['http://127.0.0.1:0/oauth/callback'] })
    const info = emu.info()
    const config = loadConfig({}, {
      port: 0, host: '127.0.0.1', appSecrets: [info.appSecret, 'an-older-rotated-secret'], clientId: info.clientId, clientSecret: info.clientSecret,
      authUrl: info.authUrl, apiUrl: info.apiUrl, dataDir, storeUrl: `sqlite://${path.join(dataDir, 's.sqlite')}`,
      openaiApiKey: 'sk-test-key-that-must-not-leak', openaiBaseUrl: `${emu.url}/v1`, reconcileIntervalMs: 0, logLevel: 'debug',
    })
    const running = await startServe(config, createLogger({ level: 'debug', destination: sink }))
    try {
      const base = running.worker.url
      running.config.baseUrl = base
      emu.oauth.registerClient({ clientId: info.clientId, clientSecret: info.clientSecret, redirectUris: [`${base}/oauth/callback`] })
      await connectThroughBrowser(base, info.organization.domain)
      emu.configure({ webhookUrl: `${base}/webhooks` })
      await emu.sendPending({ batchSize: 50, stringIds: emu.sample.strings.slice(0, 150).map((s) => s.id) })
      await running.worker.idle(30_000)

      // A forged delivery and a wrong module key: refused and logged.
      const body = JSON.stringify({ events: [] })
      await fetch(`${base}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Service-Signature': signBody(body, 'wrong'), 'X-Module-Key': 'qa-gate' }, body })
      await fetch(`${base}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Service-Signature': signBody(body, info.appSecret), 'X-Module-Key': 'nobody' }, body })

      // Every access token stops working: the worker refreshes on 401 and goes on.
      emu.expireAccessTokens()
      await emu.sendPending({ batchSize: 50 })
      await running.worker.idle(30_000)
      expect(emu.summary().notDone).toBe(0)

      // A settings callback with its JWT, and one with a bad JWT.
      const jwt = await new SignJWT({ domain: info.organization.domain, module: 'qa-gate', context: { project_id: info.projectId, organization_id: Number(info.organization.id), user_id: 1 } })
        .setProtectedHeader({ alg: 'HS256' }).setAudience(info.clientId).setSubject('1').setIssuedAt().setExpirationTime('5m')
        .sign(new TextEncoder().encode(info.clientSecret))
      const save = await fetch(`${base}/steps/qa-gate/settings`, { method: 'POST', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: JSON.stringify({ organizationId: info.organization.id, projectId: info.projectId, workflowId: 1, stepId: info.stepId, settings: {} }) })
      expect(save.status).toBeLessThan(300)
      await fetch(`${base}/steps/qa-gate/settings?jwtToken=${jwt}x`)

      const secrets = [
        info.appSecret, 'an-older-rotated-secret', info.clientSecret, 'sk-test-key-that-must-not-leak', jwt,
        readFileSync(path.join(dataDir, 'token.key'), 'utf8').trim(),
        ...emu.oauth.issuedSecrets(),
      ]
      expect(emu.oauth.issuedSecrets().length).toBeGreaterThanOrEqual(5)
      expect(lines.length).toBeGreaterThan(20)
      const text = lines.join('\n')
      for (const secret of secrets) expect(text.includes(secret), `a log line carries ${secret.slice(0, 6)}…`).toBe(false)
      // No signature (64 hex digits), no JWT, no bearer credential, whatever its source.
      expect(text).not.toMatch(/\b[0-9a-f]{64}\b/i)
      expect(text).not.toMatch(/eyJ[\w-]{10,}\.[\w-]{10,}\./)
      expect(text).not.toMatch(/bearer\s+\S{8,}/i)
      // The run did log at debug level, about deliveries and organizations.
      expect(text).toMatch(/"level":20/)
      expect(text).toMatch(/"delivery":"/)
      expect(text).toMatch(/"organization":"/)
    } finally {
      await running.stop()
      await emu.stop()
    }
  }, 90_000)
})
