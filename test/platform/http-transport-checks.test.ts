// The http transport where it could differ from fetch: a body that stalls after the headers, abort
// listeners left behind, an answer slower than the idle-socket limit, a POST whose connection
// breaks, large chunked and compressed bodies, a process with idle connections exiting.
import { spawn } from 'node:child_process'
import { getEventListeners } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import zlib from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { ApiClient, ApiError } from '../../src/platform/api-client.js'
import { createHttpTransport, IDLE_SOCKET_MS } from '../../src/platform/http-transport.js'
import { silentLogger } from '../../src/util/logger.js'

const servers: http.Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler)
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A client on the real transport (no `fetch` given), or on the global fetch when `viaFetch`. */
function client(url: string, opts: { timeoutMs?: number; attempts?: number; viaFetch?: boolean } = {}): ApiClient {
  return new ApiClient({
    config: { apiUrl: url, apiMaxInFlight: 20, apiMaxAttempts: opts.attempts ?? 1, apiTimeoutMs: opts.timeoutMs ?? 5_000 },
    tokens: { getAccessToken: async () => 'token', refreshAfterUnauthorized: async () => 'token' } as never,
    log: silentLogger(),
    ...(opts.viaFetch ? { fetch } : {}),
  })
}



describe('http transport, as fetch was', () => {
  it('headers sent, then the body stalls: the client timeout still applies (TimeoutError message, status 0), socket closed', async () => {
    let closed = false
    const url = await serve((req, res) => {
      req.socket.on('close', () => (closed = true))
      res.writeHead(200, { 'content-length': '100' })
      res.write('{"da')
    })
    const started = Date.now()
    const error = await client(url, { timeoutMs: 300 }).getStatuses('acme', 1, 2, 'de').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(0)
    expect((error as ApiError).message).toMatch(/network error: The operation was aborted due to timeout/)
    expect(Date.now() - started).toBeLessThan(2_000)
    await expect.poll(() => closed).toBe(true)
  })

  it('no abort listener is left on any signal (success, refused, damaged gzip, timeout)', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/bad') {
        res.writeHead(200, { 'content-encoding': 'gzip' })
        return res.end('nope')
      }
      if (req.url === '/stall') return
      res.end('ok')
    })
    const t = createHttpTransport()
    const signals: AbortSignal[] = []
    const go = (u: string, ms = 10_000) => {
      const s = AbortSignal.timeout(ms)
      signals.push(s)
      return t(u, { signal: s }).then((r) => r.text(), () => 'failed')
    }
    for (let i = 0; i < 200; i++) await go(url)
    for (let i = 0; i < 20; i++) await go(`${url}/bad`)
    for (let i = 0; i < 20; i++) await go('http://127.0.0.1:1/')
    for (let i = 0; i < 5; i++) await go(`${url}/stall`, 50)
    expect(signals.reduce((n, s) => n + getEventListeners(s, 'abort').length, 0)).toBe(0)
    t.close()
  })

  it(`an answer slower than IDLE_SOCKET_MS (${IDLE_SOCKET_MS} ms) is still read (the agent timeout is idle-only)`, async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200)
      res.write('{"data"')
      setTimeout(() => res.end(':[]}'), IDLE_SOCKET_MS + 800)
    })
    expect(await client(url, { timeoutMs: 30_000 }).getStatuses('acme', 1, 2, 'de')).toEqual([])
  }, 20_000)

  it('a POST whose connection breaks is sent once and thrown at once as status 0', async () => {
    let posts = 0
    const url = await serve((req, res) => {
      posts++
      req.resume()
      req.on('end', () => res.socket?.destroy())
    })
    const error = await client(url, { attempts: 5 }).createComment('acme', 7, { stringId: 1, targetLanguageId: 'de', text: 'Grüße', type: 'issue', issueType: 'translation_mistake' }).catch((e: unknown) => e)
    expect((error as ApiError).status).toBe(0)
    expect(posts).toBe(1)
  })

  it('a 20 MB chunked body with multi-byte characters across chunk edges, and gzip of it', async () => {
    const text = JSON.stringify({ data: Array.from({ length: 200_000 }, (_, i) => ({ data: { stringId: i, text: `Grüße ✓ ${i}` } })) })
    const raw = Buffer.from(text)
    const url = await serve((req, res) => {
      if (req.url === '/gz') {
        res.writeHead(200, { 'content-encoding': 'gzip' })
        return res.end(zlib.gzipSync(raw))
      }
      res.writeHead(200)
      for (let i = 0; i < raw.length; i += 7777) res.write(raw.subarray(i, i + 7777))
      res.end()
    })
    const t = createHttpTransport()
    expect(await (await t(url)).text()).toBe(text)
    expect(await (await t(`${url}/gz`)).text()).toBe(text)
    t.close()
  })

  it('a process that made a request exits at once (idle keep-alive sockets are unref-ed)', async () => {
    const url = await serve((_req, res) => res.end('{"data":[]}'))
    const dist = path.resolve('dist/src/platform/api-client.js')
    const script = `
      const { ApiClient } = await import(${JSON.stringify(dist)})
      const api = new ApiClient({ config: { apiUrl: process.argv[1], apiMaxInFlight: 20, apiMaxAttempts: 1, apiTimeoutMs: 30000 },
        tokens: { getAccessToken: async () => 't' }, log: { debug() {} } })
      await api.getStatuses('acme', 1, 2, 'de')
      globalThis.t0 = Date.now()`
    const started = Date.now()
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, url], { stdio: 'ignore' })
    expect(await new Promise((r) => child.on('exit', r))).toBe(0)
    expect(Date.now() - started).toBeLessThan(IDLE_SOCKET_MS)
  })
})
