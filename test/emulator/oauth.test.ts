import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeJwt } from 'jose'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'

const REDIRECT = 'http://127.0.0.1:3999/oauth/callback'
let emu: Emulator

beforeAll(async () => {
  emu = await startEmulator({ clientId: 'app-1', clientSecret: 'app-1-secret', redirectUris: [REDIRECT] })
})
afterAll(async () => {
  await emu.stop()
})

const verifierOf = () => randomBytes(32).toString('base64url')
const s256 = (v: string) => createHash('sha256').update(v).digest('base64url')

async function authorize(params: Record<string, string>): Promise<Response> {
  const url = new URL('/oauth/authorize', emu.url)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return fetch(url, { redirect: 'manual' })
}

function base(extra: Record<string, string> = {}): Record<string, string> {
  return { client_id: 'app-1', redirect_uri: REDIRECT, response_type: 'code', scope: 'project', state: 'st-1', ...extra }
}

async function codeFor(extra: Record<string, string> = {}): Promise<string> {
  const res = await authorize(base(extra))
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!)
  expect(location.searchParams.get('state')).toBe('st-1')
  return location.searchParams.get('code')!
}

async function token(body: Record<string, string>, form = false): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(new URL('/oauth/token', emu.url), {
    method: 'POST',
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: form ? new URLSearchParams(body).toString() : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const exchange = (code: string, extra: Record<string, string>) =>
  token({ grant_type: 'authorization_code', client_id: 'app-1', redirect_uri: REDIRECT, code, ...extra })

describe('OAuth authorize', () => {
  it('refuses an unregistered redirect_uri with a 400 page and no redirect', async () => {
    const res = await authorize(base({ redirect_uri: 'http://evil.test/cb' }))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    expect(await res.text()).toMatch(/redirect URI/)
  })

  it('refuses an unknown client with a 400 page', async () => {
    const res = await authorize(base({ client_id: 'nope' }))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
  })

  it('redirects with access_denied and the state when the user refuses', async () => {
    emu.configure({ approve: false })
    try {
      const res = await authorize(base())
      expect(res.status).toBe(302)
      const location = new URL(res.headers.get('location')!)
      expect(location.origin + location.pathname).toBe(REDIRECT)
      expect(location.searchParams.get('error')).toBe('access_denied')
      expect(location.searchParams.get('state')).toBe('st-1')
      expect(location.searchParams.get('code')).toBeNull()
    } finally {
      emu.configure({ approve: true })
    }
  })

  it('redirects with an error for a bad response_type or a half PKCE request', async () => {
    const a = new URL((await authorize(base({ response_type: 'token' }))).headers.get('location')!)
    expect(a.searchParams.get('error')).toBe('unsupported_response_type')
    const b = new URL((await authorize(base({ code_challenge: s256(verifierOf()) }))).headers.get('location')!)
    expect(b.searchParams.get('error')).toBe('invalid_request')
  })
})

describe('OAuth token', () => {
  it('exchanges a code with the client secret; the code is single-use', async () => {
    const code = await codeFor()
    const first = await exchange(code, { client_secret: 'app-1-secret' })
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ token_type: 'bearer', expires_in: 7200 })
    expect(typeof first.body.refresh_token).toBe('string')
    const claims = decodeJwt(first.body.access_token as string)
    expect(claims).toMatchObject({ domain: 'acme', organization_id: '200000', aud: 'app-1' })
    const again = await exchange(code, { client_secret: 'app-1-secret' })
    expect(again.status).toBe(400)
    expect(again.body.error).toBe('invalid_grant')
  })

  it('requires the client secret without PKCE, and the right one', async () => {
    expect((await exchange(await codeFor(), {})).status).toBe(401)
    const wrong = await exchange(await codeFor(), { client_secret: 'guess' })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toMatchObject({ error: 'invalid_client' })
    expect(typeof wrong.body.error_description).toBe('string')
  })

  it('requires the same redirect_uri as the authorization request', async () => {
    const res = await exchange(await codeFor(), { client_secret: 'app-1-secret', redirect_uri: 'http://127.0.0.1:3999/other' })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('enforces PKCE S256: right verifier without secret works, wrong or missing verifier fails', async () => {
    const verifier = verifierOf()
    const pkce = { code_challenge: s256(verifier), code_challenge_method: 'S256' }
    expect((await exchange(await codeFor(pkce), { code_verifier: verifier })).status).toBe(200)
    const wrong = await exchange(await codeFor(pkce), { code_verifier: verifierOf() })
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const missing = await exchange(await codeFor(pkce), { client_secret: 'app-1-secret' })
    expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
  })

  it('enforces PKCE plain', async () => {
    const verifier = verifierOf()
    const pkce = { code_challenge: verifier, code_challenge_method: 'plain' }
    expect((await exchange(await codeFor(pkce), { code_verifier: verifier })).status).toBe(200)
    expect((await exchange(await codeFor(pkce), { code_verifier: s256(verifier) + 'x' })).status).toBe(400)
  })

  it('refuses form-encoded bodies (JSON only, section 4.2) and records the mistake', async () => {
    emu.clearMistakes()
    const res = await token({ grant_type: 'authorization_code', client_id: 'app-1', client_secret: 'app-1-secret', redirect_uri: REDIRECT, code: await codeFor() }, true)
    expect(res.status).toBe(415)
    expect(res.body.error).toBe('invalid_request')
    expect(emu.mistakes().map((m) => m.kind)).toEqual(['token-form-body'])
    emu.clearMistakes()
  })

  it('rotates refresh tokens and refuses the old one', async () => {
    const first = (await exchange(await codeFor(), { client_secret: 'app-1-secret' })).body
    const refresh = (rt: unknown) => token({ grant_type: 'refresh_token', client_id: 'app-1', client_secret: 'app-1-secret', refresh_token: rt as string })
    const second = await refresh(first.refresh_token)
    expect(second.status).toBe(200)
    expect(second.body.refresh_token).not.toBe(first.refresh_token)
    expect(second.body.access_token).not.toBe(first.access_token)
    const old = await refresh(first.refresh_token)
    expect(old).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    expect((await refresh(second.body.refresh_token)).status).toBe(200)
  })

  it('requires the client secret to refresh', async () => {
    const first = (await exchange(await codeFor(), { client_secret: 'app-1-secret' })).body
    const res = await token({ grant_type: 'refresh_token', client_id: 'app-1', refresh_token: first.refresh_token as string })
    expect(res).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
  })

  it('refuses refresh on demand (fault) and rejects unknown grants', async () => {
    const first = await emu.authorizeDirect()
    emu.configure({ faults: { refuseRefresh: true } })
    try {
      const res = await token({ grant_type: 'refresh_token', client_id: 'app-1', client_secret: 'app-1-secret', refresh_token: first.refresh_token })
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    } finally {
      emu.configure({ faults: { refuseRefresh: false } })
    }
    expect((await token({ grant_type: 'password', client_id: 'app-1' })).body.error).toBe('unsupported_grant_type')
    const res = await fetch(new URL('/oauth/token', emu.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'invalid_request' })
  })

  it('authorizeDirect returns a working token; expires_in follows the setting', async () => {
    emu.configure({ expiresIn: 60 })
    try {
      const t = await emu.authorizeDirect({ pkce: false })
      expect(t.expires_in).toBe(60)
      expect(emu.oauth.verifyAccessToken(t.access_token)?.organizationId).toBe('200000')
    } finally {
      emu.configure({ expiresIn: 7200 })
    }
  })
})
