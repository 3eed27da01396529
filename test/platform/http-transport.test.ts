// The API client's transport on node:http: what the client reads of an answer (status, body,
// headers), compressed bodies, timeouts, broken connections, connections kept alive; and the
// client's own rules (Retry-After) through it, against a real server on 127.0.0.1.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import zlib from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { ApiClient } from '../../src/platform/api-client.js'
import { createHttpTransport } from '../../src/platform/http-transport.js'
import { silentLogger } from '../../src/util/logger.js'

const servers: http.Server[] = []
const transports: Array<{ close(): void }> = []
afterEach(async () => {
  for (const t of transports.splice(0)) t.close()
  for (const s of servers.splice(0)) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

async function serve(handler: http.RequestListener): Promise<{ url: string; server: http.Server; connections: () => number }> {
  const server = http.createServer(handler)
  let connections = 0
  server.on('connection', () => connections++)
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connections: () => connections }
}

function transport() {
  const t = createHttpTransport()
  transports.push(t)
  return t
}

const bodyOf = (req: http.IncomingMessage) =>
  new Promise<string>((resolve) => {
    let b = ''
    req.on('data', (c) => (b += c))
    req.on('end', () => resolve(b))
  })

describe('http transport', () => {
  it('answers the status, the body and headers (any case), and sends the method, headers and body', async () => {
    const seen: Array<{ method?: string; headers: http.IncomingHttpHeaders; body: string }> = []
    const { url } = await serve(async (req, res) => {
      seen.push({ method: req.method, headers: req.headers, body: await bodyOf(req) })
      res.setHeader('Retry-After', '7')
      res.setHeader('X-Many', ['a', 'b'])
      res.writeHead(req.method === 'POST' ? 201 : 429, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ data: { text: 'Grüße ✓' } }))
    })
    const t = transport()
    const got = await t(`${url}/x?y=1`, { headers: { authorization: 'Bearer t' } })
    expect(got.status).toBe(429)
    expect(got.headers.get('Retry-After')).toBe('7')
    expect(got.headers.get('x-many')).toBe('a, b')
    expect(got.headers.get('absent')).toBeNull()
    expect(JSON.parse(await got.text())).toEqual({ data: { text: 'Grüße ✓' } })
    const posted = await t(`${url}/c`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"ünï"}' })
    expect(posted.status).toBe(201)
    expect(seen[0]).toMatchObject({ method: 'GET', headers: { authorization: 'Bearer t' }, body: '' })
    expect(seen[1]).toMatchObject({ method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength('{"text":"ünï"}')) }, body: '{"text":"ünï"}' })
  })

  it.each([
    ['gzip', (b: Buffer) => zlib.gzipSync(b)],
    ['deflate', (b: Buffer) => zlib.deflateSync(b)],
    ['deflate', (b: Buffer) => zlib.deflateRawSync(b)],
    ['br', (b: Buffer) => zlib.brotliCompressSync(b)],
  ] as const)('decodes a body sent with content-encoding %s', async (encoding, encode) => {
    const text = JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ stringId: i, text: `Übersetzung ${i}` })) })
    const { url } = await serve((req, res) => {
      expect(req.headers['accept-encoding']).toMatch(encoding)
      res.writeHead(200, { 'content-encoding': encoding })
      res.end(encode(Buffer.from(text)))
    })
    expect(await (await transport()(url)).text()).toBe(text)
  })

  it('keeps the connection for the next request', async () => {
    const { url, connections } = await serve((_req, res) => res.end('ok'))
    const t = transport()
    for (let i = 0; i < 5; i++) expect(await (await t(url)).text()).toBe('ok')
    expect(connections()).toBe(1)
  })

  it('rejects when the signal times out (the request is given up), before it starts, and on a refused connection', async () => {
    let closed = false
    const { url } = await serve((req) => req.socket.on('close', () => (closed = true)))
    const t = transport()
    await expect(t(url, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' })
    await expect.poll(() => closed).toBe(true)
    await expect(t(url, { signal: AbortSignal.abort(new Error('stopped')) })).rejects.toThrow('stopped')
    const refused = await serve(() => undefined)
    const gone = refused.url
    await new Promise((r) => refused.server.close(r))
    servers.splice(servers.indexOf(refused.server), 1)
    await expect(t(gone)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    await expect(t('ftp://127.0.0.1/x')).rejects.toThrow(/unsupported protocol/)
  })

  it('rejects an answer cut short, and one whose compressed body is damaged', async () => {
    const { url } = await serve((req, res) => {
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-length': '1000' })
        res.write('only part of it')
        setTimeout(() => res.socket?.destroy(), 20)
      } else {
        res.writeHead(200, { 'content-encoding': 'gzip' })
        res.end(Buffer.from('not gzip at all'))
      }
    })
    const t = transport()
    await expect(t(`${url}/cut`)).rejects.toThrow()
    await expect(t(`${url}/bad`)).rejects.toThrow()
  })

  it('sends a User-Agent (switchyard and its version), and reads text as fetch did: a leading BOM dropped', async () => {
    const agents: Array<string | undefined> = []
    const { url } = await serve((req, res) => {
      agents.push(req.headers['user-agent'])
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('\uFEFF{"data":[{"data":{"stringId":5,"text":"Hallo"}}]}')
    })
    const t = transport()
    expect(await (await t(url)).text()).toBe('{"data":[{"data":{"stringId":5,"text":"Hallo"}}]}')
    expect(agents[0]).toMatch(/^switchyard\/\d+\.\d+\.\d+/)
    const api = new ApiClient({
      config: { apiUrl: url, apiMaxInFlight: 20, apiMaxAttempts: 1, apiTimeoutMs: 5_000 },
      tokens: { getAccessToken: async () => 'token', refreshAfterUnauthorized: async () => 'token' } as never,
      log: silentLogger(),
    })
    expect((await api.getTranslations('acme', 7, 'de', [5])).get(5)).toEqual({ stringId: 5, text: 'Hallo' })
  })

  it('refuses an answer beyond its limit, as received or once decompressed (a compression bomb), as a network error of the client', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024))
    expect(bomb.length).toBeLessThan(64 * 1024)
    const { url } = await serve((req, res) => {
      if (req.url === '/big') return res.end('x'.repeat(300_000))
      if (req.url === '/small') return res.end('x'.repeat(1000))
      res.writeHead(200, { 'content-encoding': 'gzip' })
      res.end(bomb)
    })
    const t = createHttpTransport({ maxBodyBytes: 256 * 1024 })
    transports.push(t)
    await expect(t(`${url}/big`)).rejects.toThrow(/longer than 262144 bytes/)
    await expect(t(`${url}/bomb`)).rejects.toThrow()
    expect((await (await t(`${url}/small`)).text()).length).toBe(1000)
    const api = new ApiClient({
      config: { apiUrl: url, apiMaxInFlight: 20, apiMaxAttempts: 1, apiTimeoutMs: 5_000 },
      tokens: { getAccessToken: async () => 'token', refreshAfterUnauthorized: async () => 'token' } as never,
      log: silentLogger(),
      fetch: t as unknown as typeof fetch,
    })
    await expect(api.getStatuses('acme', 1, 2, 'de')).rejects.toMatchObject({ name: 'ApiError', status: 0 })
  })

  it('carries the API client: Retry-After of a 429 honoured, then the answer read', async () => {
    let calls = 0
    const at: number[] = []
    const { url } = await serve((_req, res) => {
      calls++
      at.push(Date.now())
      if (calls === 1) {
        res.writeHead(429, { 'retry-after': '1' })
        return res.end('slow down')
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ data: [{ data: { stringId: 5, text: 'Hallo' } }] }))
    })
    const api = new ApiClient({
      config: { apiUrl: url, apiMaxInFlight: 20, apiMaxAttempts: 3, apiTimeoutMs: 5_000 },
      tokens: { getAccessToken: async () => 'token', refreshAfterUnauthorized: async () => 'token' } as never,
      log: silentLogger(),
    })
    const got = await api.getTranslations('acme', 7, 'de', [5])
    expect(got.get(5)).toEqual({ stringId: 5, text: 'Hallo' })
    expect(calls).toBe(2)
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(900)
  })
})
