// The OAuth flow against the emulator's strict authorization server: registered redirect URIs,
// single-use codes, PKCE enforced, refresh-token rotation, approve/refuse. JSON token bodies, as
// the service speaks. The browser is fetch with manual redirects and the state cookie.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/start-emulator.js'
import { ApiClient } from '../../src/platform/api-client.js'
import { OrganizationDisconnectedError } from '../../src/platform/token-manager.js'
import { silentLogger } from '../../src/util/logger.js'
import { browserConnect, startTestWorker, type TestWorker } from './oauth-helpers.js'

const TOKEN = 'POST /oauth/token'
let emu: Emulator
let worker: TestWorker
let domain: string
/** Every refresh token the worker received, in order (read off the wire, for the rotation test). */
const issuedRefreshTokens: string[] = []
const recordingFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const res = await fetch(input, init)
  if (String(input).endsWith('/oauth/token') && res.ok) {
    const body = (await res.clone().json()) as { refresh_token?: string }
    if (body.refresh_token) issuedRefreshTokens.push(body.refresh_token)
  }
  return res
}) as typeof fetch

beforeAll(async () => {
  worker = await startTestWorker(async (workerUrl) => {
    emu = await startEmulator({ redirectUris: [`${workerUrl}/oauth/callback`], clientId: 'switchyard-test', clientSecret: 'test-client-secret', strings: 5 })
    return { authUrl: emu.url, apiUrl: emu.url, oauthTokenFormat: 'json' }
  }, { fetch: recordingFetch })
  domain = emu.info().organization.domain
})
afterAll(async () => {
  await worker?.close()
  await emu?.stop()
})
beforeEach(() => {
  emu.configure({ approve: true, faults: { refuseRefresh: false } })
  emu.resetCounters()
})

/** A bare API call with a given token (no refresh, no retry). */
async function apiGet(token: string): Promise<Response> {
  const info = emu.info()
  return fetch(`${emu.url}/api/v2/projects/${info.projectId}/workflow-steps/${info.stepId}/languages/${info.languages[0]}/status?limit=1`, {
    headers: { authorization: `Bearer ${token}` },
  })
}

describe('OAuth flow against the emulator', () => {
  it('connects: redirect, approval, code exchange (JSON, PKCE), tokens that the API accepts', async () => {
    const run = await browserConnect(worker.url, domain)
    expect(run.callback?.status).toBe(200)
    expect(run.callbackBody).toContain('is connected')
    expect(emu.requestCount(TOKEN, 200)).toBe(1)
    const token = await worker.tokens.getAccessToken(domain)
    expect((await apiGet(token)).status).toBe(200)
    const [status] = (await worker.tokens.status()).filter((s) => s.domain === domain)
    expect(status).toMatchObject({ connected: true, organizationId: emu.info().organization.id })
    expect(await worker.tokens.domainOf(emu.info().organization.id)).toBe(domain)
    expect(worker.logText()).not.toContain(token)
  })

  it('refuses a state that does not match the browser cookie, before any code exchange', async () => {
    const other = await fetch(`${worker.url}/oauth/start?domain=${domain}`, { redirect: 'manual' })
    const otherCookie = other.headers.getSetCookie()[0]!.split(';')[0]!
    const run = await browserConnect(worker.url, domain, { cookie: otherCookie })
    expect(run.callback?.status).toBe(400)
    expect(run.callbackBody).toContain('state mismatch')
    expect(emu.requestCount(TOKEN)).toBe(0)
  })

  it('refuses a reused code (the emulator spends codes on first use)', async () => {
    const first = await browserConnect(worker.url, domain)
    expect(first.callback?.status).toBe(200)
    const code = first.callbackUrl!.searchParams.get('code')!
    // A second, valid authorization in this browser, but the old code pasted into its callback.
    const second = await browserConnect(worker.url, domain, { mutateCallback: (u) => u.searchParams.set('code', code) })
    expect(second.callback?.status).toBe(400)
    expect(second.callbackBody).toContain('invalid_grant')
    expect(emu.requestCount(TOKEN, 400)).toBe(1)
  })

  it('refuses a code whose PKCE verifier does not match (code from another authorization)', async () => {
    // Authorization A is started but its callback never arrives; its code goes to authorization B,
    // whose server-side verifier belongs to a different challenge.
    const a = await fetch(`${worker.url}/oauth/start?domain=${domain}`, { redirect: 'manual' })
    const aAuthorize = await fetch(a.headers.get('location')!, { redirect: 'manual' })
    const aCode = new URL(aAuthorize.headers.get('location')!).searchParams.get('code')!
    const b = await browserConnect(worker.url, domain, { mutateCallback: (u) => u.searchParams.set('code', aCode) })
    expect(b.callback?.status).toBe(400)
    expect(b.callbackBody).toContain('invalid_grant')
    expect(b.callbackBody).toContain('does not match this authorization')
  })

  it('shows a clear page when the user refuses (access_denied) and stores nothing', async () => {
    emu.configure({ approve: false })
    const run = await browserConnect(worker.url, 'refusing-org')
    expect(run.callbackUrl?.searchParams.get('error')).toBe('access_denied')
    expect(run.callback?.status).toBe(403)
    expect(run.callbackBody).toContain('Access not granted')
    expect(emu.requestCount(TOKEN)).toBe(0)
  })

  it('refreshes shortly before expiry, with rotation: the old refresh token is refused afterwards', async () => {
    await browserConnect(worker.url, domain)
    const before = await worker.tokens.getAccessToken(domain)
    const oldRefresh = issuedRefreshTokens.at(-1)!
    const refreshesBefore = emu.oauth.stats.refreshes
    worker.clock.real = false
    worker.clock.now = Date.now() + (emu.settings.expiresIn - 61) * 1000
    try {
      expect(await worker.tokens.getAccessToken(domain)).toBe(before) // not yet inside the skew
      worker.clock.now += 2000
      const after = await worker.tokens.getAccessToken(domain)
      expect(after).not.toBe(before)
      expect(emu.oauth.stats.refreshes).toBe(refreshesBefore + 1)
      expect((await apiGet(after)).status).toBe(200)
      // The server retired the old refresh token...
      const replay = await fetch(`${emu.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'refresh_token', client_id: 'switchyard-test', client_secret: 'test-client-secret', refresh_token: oldRefresh }),
      })
      expect(replay.status).toBe(400)
      expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant')
      // ...and the worker kept the newest one: the next refresh succeeds.
      worker.clock.now += emu.settings.expiresIn * 1000
      const third = await worker.tokens.getAccessToken(domain)
      expect(third).not.toBe(after)
      expect(emu.oauth.stats.refreshes).toBe(refreshesBefore + 2)
      expect((await worker.tokens.status()).find((s) => s.domain === domain)!.connected).toBe(true)
    } finally {
      worker.clock.real = true
    }
  })

  it('refreshes once on 401 and retries with the new token: the API client does it itself', async () => {
    await browserConnect(worker.url, domain)
    const token = await worker.tokens.getAccessToken(domain)
    emu.resetCounters()
    emu.expireAccessTokens()
    expect((await apiGet(token)).status).toBe(401)
    // The client's own 401 path: no hand-made refresh here.
    const seen: number[] = []
    const api = new ApiClient({
      config: worker.config,
      tokens: worker.tokens,
      log: silentLogger(),
      observer: { request: ({ status }) => void seen.push(status) },
    })
    const info = emu.info()
    const records = await api.getStatuses(domain, info.projectId, info.stepId, info.languages[0]!, { limit: 1 })
    expect(Array.isArray(records)).toBe(true)
    expect(seen).toEqual([401, 200])
    expect(emu.requestCount(TOKEN)).toBe(1)
    const fresh = await worker.tokens.getAccessToken(domain)
    expect(fresh).not.toBe(token)
    // a second caller that saw the same 401 gets the new token without another request
    expect(await worker.tokens.refreshAfterUnauthorized(domain, token)).toBe(fresh)
    expect(emu.requestCount(TOKEN)).toBe(1)
  })

  it('50 concurrent getAccessToken calls with an expired token make exactly one refresh request', async () => {
    await browserConnect(worker.url, domain)
    emu.resetCounters()
    worker.clock.real = false
    worker.clock.now = Date.now() + emu.settings.expiresIn * 1000 + 1000
    try {
      const tokens = await Promise.all(Array.from({ length: 50 }, () => worker.tokens.getAccessToken(domain)))
      expect(new Set(tokens).size).toBe(1)
      expect(emu.requestCount(TOKEN)).toBe(1)
    } finally {
      worker.clock.real = true
    }
    expect((await apiGet((await worker.tokens.getAccessToken(domain)))).status).toBe(200)
  })

  it('invalid_grant on refresh marks the organization disconnected; reconnecting clears it', async () => {
    await browserConnect(worker.url, domain)
    const token = await worker.tokens.getAccessToken(domain)
    emu.configure({ faults: { refuseRefresh: true } })
    const err = await worker.tokens.refreshAfterUnauthorized(domain, token).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OrganizationDisconnectedError)
    expect((err as Error).message).toContain('invalid_grant')
    expect((await worker.tokens.status()).find((s) => s.domain === domain)).toMatchObject({ connected: false, state: 'disconnected' })
    await expect(worker.tokens.getAccessToken(domain)).rejects.toBeInstanceOf(OrganizationDisconnectedError)
    expect(await (await fetch(`${worker.url}/`)).text()).toContain('Disconnected')
    expect(worker.logText()).toContain('organization disconnected')

    emu.configure({ faults: { refuseRefresh: false } })
    const run = await browserConnect(worker.url, domain)
    expect(run.callback?.status).toBe(200)
    expect((await worker.tokens.status()).find((s) => s.domain === domain)).toMatchObject({ connected: true, state: 'connected' })
    expect((await apiGet(await worker.tokens.getAccessToken(domain))).status).toBe(200)
  })
})
