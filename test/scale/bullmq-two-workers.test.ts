// QUEUE=bullmq: two worker processes share one Redis. The emulated service sends 10,000 strings
// through a round-robin proxy (the load balancer in front of the instances); one instance is killed
// with SIGKILL mid-run, and the other takes over its strings (BullMQ's stalled-job recovery). Every
// string ends DONE on the expected port; none is lost.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectThroughBrowser } from '../../src/cli/demo.js'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { describeWithService } from '../support/services.js'
import { freePort } from '../../src/util/free-port.js'

const DB = 7


function startInstance(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; log(): string }> {
  const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString()
      const m = /"url":"(http:[^"]+)".*worker listening/.exec(log)
      if (m) resolve({ child, url: m[1]!, log: () => log })
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (c: Buffer) => { log += c.toString() })
    child.once('exit', (code) => reject(new Error(`instance exited with ${code}:\n${log.slice(-2000)}`)))
    setTimeout(() => reject(new Error(`instance did not start:\n${log.slice(-2000)}`)), 30_000).unref()
  })
}

/** A load balancer: round robin over live instances, trying the next one when one is down. */
function startProxy(backends: () => string[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    const list = backends()
    for (let i = 0; i < list.length; i++) {
      const target = list[(next++) % list.length]!
      try {
        const r = await fetch(`${target}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: body.length ? body : undefined, redirect: 'manual' })
        res.writeHead(r.status, Object.fromEntries(r.headers))
        res.end(Buffer.from(await r.arrayBuffer()))
        return
      } catch {
        // that instance is down: try the next
      }
    }
    res.writeHead(502).end()
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()) }),
  })))
}

await describeWithService('redis', 'QUEUE=bullmq with two instances', (REDIS) => {
  let emu: Emulator
  let dataDir: string
  const children: ChildProcess[] = []
  let proxy: Awaited<ReturnType<typeof startProxy>>

  beforeAll(async () => {
    // A database of its own, emptied, so other tests' keys and queues don't meet ours.
    const { redisClient } = await import('../../src/queue/bullmq-journal.js')
    const client = redisClient(`${REDIS}/${DB}`)
    await client.flushdb()
    client.disconnect()
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-scale-'))
  })

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL')
    await proxy?.close()
    await emu?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('processes 10,000 strings with none lost when one instance is killed mid-run', async () => {
    const portA = await freePort()
    const portB = await freePort()
    const live = new Set<string>()
    proxy = await startProxy(() => [...live])
    emu = await startEmulator({ strings: 5000, languages: ['de', 'fr'], moduleKey: 'qa-gate', seed: 11, redirectUris: [`${proxy.url}/oauth/callback`], settings: { retries: 10 } })
    const info = emu.info()
    const env = (port: number) => ({
      PORT: String(port), HOST: '127.0.0.1', BASE_URL: proxy.url,
      APP_SECRET: info.appSecret, CLIENT_ID: info.clientId, CLIENT_SECRET: info.clientSecret,
      AUTH_URL: info.authUrl, API_URL: info.apiUrl,
      STORE_URL: `${REDIS}/${DB}`, QUEUE: 'bullmq', QUEUE_LOCK_MS: '3000',
      TOKEN_KEY: Buffer.alloc(32, 7).toString('base64'), DATA_DIR: dataDir,
      LOG_LEVEL: 'info', RECONCILE_INTERVAL_MS: '0',
    })
    const a = await startInstance(env(portA))
    const b = await startInstance(env(portB))
    children.push(a.child, b.child)
    live.add(a.url).add(b.url)
    // Connected once, through either instance: the tokens are in the shared store.
    await connectThroughBrowser(proxy.url, info.organization.domain)
    emu.configure({ webhookUrl: `${proxy.url}/webhooks` })

    const sending = emu.sendPending({ batchSize: 100, parallel: 4 })
    // Kill one instance while strings are in flight on both.
    await new Promise((r) => setTimeout(r, 1500))
    live.delete(b.url)
    b.child.kill('SIGKILL')
    const report = await sending
    expect(report.failedStrings).toEqual([])

    const deadline = Date.now() + 90_000
    while (emu.summary().notDone > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250))
    const summary = emu.summary()
    // On a failure, what the survivor says: its health, why it holds an organization (the operator
    // page's table of held organizations, tags taken out) and the end of its log.
    const why = async () => {
      const health = await (await fetch(`${a.url}/healthz`)).text()
      const page = await (await fetch(`${a.url}/`)).text()
      const held = /<table[^>]*>(?:(?!<\/table>)[\s\S])*Strings held[\s\S]*?<\/table>/.exec(page)?.[0].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ') ?? 'no held organizations listed'
      const lines = a.log().split('\n').filter((l) => !/"level":30/.test(l)).slice(-30).join('\n')
      return `survivor: ${health}\nheld: ${held}\nits warnings and errors, last 30:\n${lines}`
    }
    expect(summary.notDone, summary.notDone ? await why() : '').toBe(0)
    expect(summary.wrongOutput).toBe(0)
    expect(summary.conflicting).toBe(0)
    expect(Object.values(summary.languages).reduce((n, l) => n + (l.byStatus.DONE ?? 0), 0)).toBe(10_000)
  }, 150_000)
})
