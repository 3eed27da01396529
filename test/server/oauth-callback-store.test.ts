// The callback when the store will not keep the tokens the code was exchanged for: the operator
// gets the worker's page saying so (nothing was connected; start again), not a bare 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestWorker, stateCookieOf, type TestWorker } from './oauth-helpers.js'

const AUTH = 'https://auth.example.test'
const fakeFetch = (async () =>
  new Response(JSON.stringify({ access_token: 'at-stored-nowhere', token_type: 'bearer', expires_in: 7200, refresh_token: 'rt-stored-nowhere' }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  })) as unknown as typeof fetch

let worker: TestWorker
beforeAll(async () => {
  worker = await startTestWorker({ authUrl: AUTH }, { fetch: fakeFetch })
})
afterAll(async () => {
  await worker?.close()
})

describe('OAuth callback with a store that refuses the tokens', () => {
  it('answers a page that says the tokens could not be stored and nothing was connected', async () => {
    const started = await fetch(`${worker.url}/oauth/start?domain=acme`, { redirect: 'manual' })
    const state = new URL(started.headers.get('location')!).searchParams.get('state')!
    worker.tokenStore.set = (async () => false) as typeof worker.tokenStore.set
    const res = await fetch(`${worker.url}/oauth/callback?code=c&state=${state}`, { headers: { cookie: stateCookieOf(started)! } })
    expect(res.status).toBe(503)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const text = await res.text()
    expect(text).toContain('Store unavailable')
    expect(text).toContain('STORE_URL')
    expect(text).toContain('/oauth/start?domain=acme')
    expect(text).not.toContain('stored-nowhere')
    expect(worker.logText()).toContain('could not be stored')
    expect(worker.logText()).not.toContain('stored-nowhere')
  })
})
