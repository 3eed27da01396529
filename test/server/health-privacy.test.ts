// /healthz and /readyz tell anyone only whether the worker works, never who its customers are;
// /metrics can require a bearer token (issue 17).
import { afterEach, describe, expect, it } from 'vitest'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { fakePipelines } from '../support/fake-pipelines.js'
import { startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const tokens = Object.assign(new StaticTokenProvider(new Map([['*', 'token']])), {
  async status() {
    return [
      { domain: 'secret-customer', organizationId: '4242', connected: true, expiresAt: Date.now() + 3600_000 },
      { domain: 'other-customer', organizationId: '77', connected: false, reason: 'refresh token revoked by acme-admin' },
    ]
  },
})

async function worker(config = {}) {
  const w = await startTestWorker({ pipelines: fakePipelines(), tokens, config })
  running.push(w)
  return w
}

describe('health endpoints', () => {
  it('/healthz and /readyz answer status only: no organizations, domains, expiry or reasons', async () => {
    const w = await worker()
    for (const path of ['/healthz', '/readyz']) {
      const res = await fetch(`${w.url}${path}`)
      expect(res.status).toBe(200)
      const text = await res.text()
      expect(JSON.parse(text)).toHaveProperty(path === '/healthz' ? 'status' : 'ready')
      for (const secret of ['secret-customer', 'other-customer', '4242', 'revoked', 'expiresAt', 'organizationId']) expect(text).not.toContain(secret)
    }
  })

  it('/metrics is open without METRICS_TOKEN and needs the bearer token with it', async () => {
    const open = await worker()
    expect((await fetch(`${open.url}/metrics`)).status).toBe(200)
    const closed = await worker({ metricsToken: 'scrape-me-0123456789' })
    const none = await fetch(`${closed.url}/metrics`)
    expect(none.status).toBe(401)
    expect(await none.text()).not.toContain('switchyard_')
    expect((await fetch(`${closed.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401)
    const ok = await fetch(`${closed.url}/metrics`, { headers: { authorization: 'Bearer scrape-me-0123456789' } })
    expect(ok.status).toBe(200)
    expect(await ok.text()).toContain('switchyard_webhook_batches_total')
  })

  // A proxy told not to forward /metrics (docs/deployment.md) matches it case-sensitively, as
  // nginx does: /METRICS went past it, and the router, case-insensitive by default, answered it.
  it('answers its routes by their exact case only: /METRICS is not /metrics', async () => {
    const w = await worker()
    for (const path of ['/METRICS', '/Metrics', '/HEALTHZ', '/Manifest.json', '/FINDINGS', '/OAuth/start']) expect([path, (await fetch(`${w.url}${path}`)).status]).toEqual([path, 404])
    expect((await fetch(`${w.url}/metrics`)).status).toBe(200)
  })

  // The same proxy rule written as an exact match (nginx `location = /metrics`) does not match
  // /metrics/, which the router, lenient about a trailing slash by default, answered.
  it('answers its routes without a trailing slash only: /metrics/ is not /metrics', async () => {
    const w = await worker()
    for (const path of ['/metrics/', '/healthz/', '/readyz/', '/manifest.json/', '/logo.png/']) expect([path, (await fetch(`${w.url}${path}`)).status]).toEqual([path, 404])
    expect((await fetch(`${w.url}/metrics?name=x`)).status).toBe(200)
    expect((await fetch(`${w.url}/healthz`)).status).toBe(200)
  })
})
