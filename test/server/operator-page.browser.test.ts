// The operator page in real headless Chromium: its "Connect" form reaches the authorization
// server. The page's Referrer-Policy is no-referrer, under which Chromium posts the form with
// `Origin: null`; the CSRF check (refuse-cross-site.ts) must take it for what Sec-Fetch-Site says
// it is, the page's own. Skips, saying why, without /usr/bin/chromium; fails instead when CI is set.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServe, type Running } from '../../src/cli/serve.js'
import { loadConfig } from '../../src/config/load-config.js'
import { silentLogger } from '../../src/util/logger.js'

const CHROMIUM = '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
const SKIP_REASON = `${CHROMIUM} is not installed (apt-get install chromium); the operator page browser test needs it`
if (!HAVE_CHROMIUM && !process.env.CI) console.warn(`SKIPPED operator page browser test: ${SKIP_REASON}`)

const PASSWORD = 'correct horse'

describe('operator page in headless Chromium', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-operator-browser-'))
  let browser: Browser | undefined
  let running: Running | undefined
  let auth: Server | undefined
  let authUrl = ''

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) {
      if (process.env.CI) throw new Error(`CI is set but ${SKIP_REASON}`)
      return
    }
    // Stands in for the authorization server: the browser only has to arrive there.
    auth = createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8')
      res.end(`<!doctype html><title>authorize</title><p>authorize ${req.method}</p>`)
    })
    await new Promise<void>((r) => auth!.listen(0, '127.0.0.1', r))
    authUrl = `http://127.0.0.1:${(auth.address() as AddressInfo).port}`
    const config = loadConfig({}, { port: 0, host: '127.0.0.1', storeUrl: 'memory://', dataDir: dir, clientId: 'c', clientSecret: 's', authUrl, operatorPassword: PASSWORD, reconcileIntervalMs: 0 })
    running = await startServe(config, silentLogger())
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    })
  })
  afterAll(async () => {
    await browser?.close()
    await running?.stop()
    if (auth) await new Promise((r) => auth!.close(r))
    rmSync(dir, { recursive: true, force: true })
  })

  it('sends the browser on to the authorization server from the "Connect" form', async (ctx) => {
    if (!HAVE_CHROMIUM) ctx.skip(SKIP_REASON)
    const context = await browser!.newContext({ httpCredentials: { username: 'admin', password: PASSWORD } })
    try {
      const page = await context.newPage()
      const answers: number[] = []
      page.on('response', (r) => {
        if (new URL(r.url()).pathname === '/oauth/start') answers.push(r.status())
      })
      await page.goto(`${running!.worker.url}/`)
      await page.fill('input[name=domain]', 'acme')
      await Promise.all([page.waitForURL(/\/oauth\/(authorize|start)/), page.click('button[type=submit]')])
      await page.waitForLoadState('load')
      expect(answers).toEqual([302])
      expect(page.url()).toMatch(new RegExp(`^${authUrl}/oauth/authorize\\?`))
      expect(new URL(page.url()).searchParams.get('code_challenge_method')).toBe('S256')
    } finally {
      await context.close()
    }
  })
})
