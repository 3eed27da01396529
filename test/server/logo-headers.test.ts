// Logos are served so that none can run script on the worker's origin (issue 17): nosniff, a CSP
// with no script, and image types from a short list only. A logo file that cannot be read when
// asked for (gone, a directory) is our usual 500, logged, not a 200 whose connection drops.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/server/app.js'
import { createLogger } from '../../src/util/logger.js'
import { createMetrics } from '../../src/util/metrics.js'

let server: Server
let url: string
const logged: Array<{ msg: string; path?: string; err?: { message: string } }> = []
beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'logo-'))
  const svg = path.join(dir, 'logo.svg')
  writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
  const html = path.join(dir, 'logo.html')
  writeFileSync(html, '<script>alert(1)</script>')
  const logos: Record<string, { path: string; contentType: string }> = {
    svg: { path: svg, contentType: 'image/svg+xml' },
    html: { path: html, contentType: 'text/html' },
    xml: { path: svg, contentType: 'application/xml' },
    gone: { path: path.join(dir, 'gone.png'), contentType: 'image/png' },
    directory: { path: path.join(dir, 'a-directory.png'), contentType: 'image/png' },
  }
  mkdirSync(logos.directory!.path)
  const app = createApp({
    log: createLogger({ destination: { write: (line: string) => void logged.push(JSON.parse(line)) } }),
    metrics: createMetrics({ defaults: false }),
    webhook: async () => undefined,
    health: async () => ({ status: 'ok' }),
    ready: async () => ({ ready: true, checks: {} }),
    manifest: () => ({}),
    logo: (key) => logos[key],
  })
  server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('GET /steps/:key/logo', () => {
  it('serves an SVG with nosniff and a CSP that forbids script', async () => {
    const res = await fetch(`${url}/steps/svg/logo`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toMatch(/default-src 'none'/)
    expect(csp).not.toMatch(/script-src/)
  })

  for (const key of ['html', 'xml']) {
    it(`refuses a logo of another type (${key})`, async () => {
      const res = await fetch(`${url}/steps/${key}/logo`)
      expect(res.status).toBe(404)
      expect(await res.text()).not.toMatch(/<script>/)
    })
  }

  for (const key of ['gone', 'directory']) {
    it(`answers 500 with the usual error body, and logs why, when the logo file cannot be read (${key})`, async () => {
      logged.length = 0
      const res = await fetch(`${url}/steps/${key}/logo`)
      expect(res.status).toBe(500)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(await res.json()).toEqual({ error: { code: 'internal', message: 'internal error' } })
      expect(logged).toHaveLength(1)
      expect(logged[0]).toMatchObject({ msg: 'request failed', path: `/steps/${key}/logo` })
      expect(logged[0]!.err!.message).toMatch(new RegExp(`^cannot read the logo file .*${key === 'gone' ? 'gone' : 'a-directory'}\\.png: `))
    })
  }

  it('streams a good logo whole', async () => {
    const res = await fetch(`${url}/steps/svg/logo`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
  })
})
