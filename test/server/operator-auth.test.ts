import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startServe } from '../../src/cli/serve.js'
import { loadConfig } from '../../src/config/load-config.js'
import { silentLogger } from '../../src/util/logger.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-operator-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

async function serve(operatorPassword: string) {
  const config = loadConfig({}, { port: 0, host: '127.0.0.1', storeUrl: 'memory://', dataDir: dir, operatorPassword, clientId: 'c', clientSecret: 's', authUrl: 'http://127.0.0.1:9', reconcileIntervalMs: 0 })
  return startServe(config, silentLogger())
}

describe('operator pages', () => {
  it('ask for OPERATOR_PASSWORD when it is set', async () => {
    const running = await serve('correct horse')
    try {
      const url = running.worker.url
      for (const route of ['/', '/oauth/start?domain=acme']) {
        const none = await fetch(`${url}${route}`, { redirect: 'manual' })
        expect(none.status).toBe(401)
        expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm=/)
        expect((await fetch(`${url}${route}`, { headers: { authorization: basic('admin', 'wrong') }, redirect: 'manual' })).status).toBe(401)
        expect((await fetch(`${url}${route}`, { headers: { authorization: 'Bearer correct horse' }, redirect: 'manual' })).status).toBe(401)
      }
      expect((await fetch(`${url}/`, { headers: { authorization: basic('anyone', 'correct horse') } })).status).toBe(200)
      const start = await fetch(`${url}/oauth/start?domain=acme`, { headers: { authorization: basic('admin', 'correct horse') }, redirect: 'manual' })
      expect(start.status).toBe(302)
      // The service's own calls are not behind the operator password.
      expect((await fetch(`${url}/healthz`)).status).toBe(200)
      expect((await fetch(`${url}/manifest.json`)).status).toBe(200)
    } finally {
      await running.stop()
    }
  })

  it('are open without OPERATOR_PASSWORD', async () => {
    const running = await serve('')
    try {
      expect((await fetch(`${running.worker.url}/`)).status).toBe(200)
    } finally {
      await running.stop()
    }
  })
})
