// Once the worker is stopping, every answer closes its connection: a kept-alive connection would
// otherwise hold the listener open until the stop cuts it, with whatever request is on it then.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createApp } from '../../src/server/app.js'
import { createMetrics } from '../../src/util/metrics.js'
import { silentLogger } from '../../src/util/logger.js'

const servers: http.Server[] = []
afterEach(async () => {
  while (servers.length) {
    const s = servers.pop()!
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

async function start(closing: () => boolean) {
  const app = createApp({ log: silentLogger(), metrics: createMetrics({ defaults: false }), webhook: async (ctx) => {
      if (closing()) throw Object.assign(new Error('refused'), { status: 503, expose: true })
      ctx.body = { accepted: 0 }
    }, health: async () => ({ status: 'ok' }), ready: async () => ({ ready: true, checks: {} }), manifest: () => ({}), logo: () => undefined, closing })
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await new Promise((r) => server.once('listening', r))
  return (server.address() as AddressInfo).port
}

/** The Connection header of an answer on a kept-alive connection. */
function connectionHeader(port: number, method: string, path: string): Promise<string | undefined> {
  const agent = new http.Agent({ keepAlive: true })
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent }, (res) => {
      res.resume()
      res.on('end', () => {
        agent.destroy()
        resolve(res.headers.connection)
      })
    })
    req.on('error', reject)
    req.end(method === 'POST' ? '{}' : undefined)
  })
}

describe('answers while stopping', () => {
  it('keep the connection alive while running, and close it once stopping, refusals too', async () => {
    let stopping = false
    const port = await start(() => stopping)
    expect(await connectionHeader(port, 'GET', '/healthz')).toBe('keep-alive')
    stopping = true
    expect(await connectionHeader(port, 'POST', '/webhooks')).toBe('close')
    expect(await connectionHeader(port, 'GET', '/no-such-route')).toBe('close')
  })
})
