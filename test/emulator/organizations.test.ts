// Several organizations, each under its own domain with its own app_secret, tokens and project;
// one organization's token is refused on another's domain, and recorded as a mistake.
import { createHmac } from 'node:crypto'
import { request } from 'node:http'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { apiUrlFor } from '../../src/config/load-config.js'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { startReceiver, type Receiver } from './receiver.js'

let emu: Emulator
let receiver: Receiver
let t1: string
let t2: string

beforeAll(async () => {
  receiver = await startReceiver()
  emu = await startEmulator({
    strings: 10,
    languages: ['de', 'fr'],
    appSecret: 'secret1',
    webhookUrl: receiver.url,
    settings: { retryDelayMs: 0 },
    organizations: [{ id: '300000', domain: 'globex', appSecret: 'secret2', strings: 5, languages: ['ja'], projectId: 77, stepId: 8001 }],
  })
  t1 = (await emu.authorizeDirect()).access_token
  t2 = (await emu.authorizeDirect({ organization: 'globex' })).access_token
})
afterAll(async () => {
  await emu.stop()
  await receiver.close()
})
beforeEach(() => {
  receiver.received.length = 0
  emu.clearMistakes()
})

async function get(path: string, token: string | null) {
  const headers: Record<string, string> = {}
  if (token) headers.authorization = `Bearer ${token}`
  const res = await fetch(new URL(path, emu.url), { headers })
  return { status: res.status, body: (await res.json()) as any }
}

/** fetch will not send another Host header: node:http does (the {domain}.localhost form, no DNS needed). */
function getWithHost(path: string, token: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: emu.port, path, headers: { host, authorization: `Bearer ${token}` } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end()
  })
}

const statusPath = (project: number, step: number, lang: string) => `/api/v2/projects/${project}/workflow-steps/${step}/languages/${lang}/status`

describe('organizations', () => {
  it('lists each organization with its own id, domain, secret, project and step', () => {
    const orgs = emu.organizations()
    expect(orgs.map((o) => [o.id, o.domain, o.appSecret, o.projectId, o.stepId, o.languages])).toEqual([
      ['200000', 'acme', 'secret1', 42, 7001, ['de', 'fr']],
      ['300000', 'globex', 'secret2', 77, 8001, ['ja']],
    ])
    expect(emu.info().apiUrlTemplate).toBe(`${emu.url}/o/{organization_domain}`)
    expect(orgs[1]!.apiUrl).toBe(`${emu.url}/o/globex`)
  })

  it('serves each organization under /o/{domain}, the address the worker builds from API_URL', async () => {
    const base = apiUrlFor({ apiUrl: emu.info().apiUrlTemplate }, 'globex')
    expect(base).toBe(`${emu.url}/o/globex`)
    const own = await get(`/o/globex${statusPath(77, 8001, 'ja')}?limit=500`, t2)
    expect(own.status).toBe(200)
    expect(own.body.data).toHaveLength(5)
    // The first organization keeps its un-prefixed routes, and has them under its domain too.
    expect((await get(statusPath(42, 7001, 'de'), t1)).status).toBe(200)
    expect((await get(`/o/acme${statusPath(42, 7001, 'de')}`, t1)).status).toBe(200)
    // Host form: {domain}.localhost.
    expect(await getWithHost(statusPath(77, 8001, 'ja'), t2, `globex.localhost:${emu.port}`)).toBe(200)
    expect((await get(`/o/nowhere${statusPath(77, 8001, 'ja')}`, t2)).status).toBe(404)
    emu.assertNoMistakes()
  })

  it("refuses one organization's token on another's domain (401) and records it", async () => {
    const res = await get(`/o/globex${statusPath(77, 8001, 'ja')}`, t1)
    expect(res.status).toBe(401)
    expect(emu.mistakes()).toMatchObject([{ kind: 'token-of-another-organization', organizationId: '300000' }])
    expect(emu.mistakes()[0]!.path).toMatch(/^GET \/api\/v2\/projects\/77\//)
  })

  it('records requests without a token or with an unknown one; an expired token is no mistake', async () => {
    expect((await get(statusPath(42, 7001, 'de'), null)).status).toBe(401)
    expect((await get(statusPath(42, 7001, 'de'), 'made-up')).status).toBe(401)
    const fresh = (await emu.authorizeDirect()).access_token
    emu.expireAccessTokens('acme')
    expect((await get(statusPath(42, 7001, 'de'), fresh)).status).toBe(401)
    expect(emu.mistakes().map((m) => m.kind)).toEqual(['no-token', 'invalid-token'])
    // Only acme's tokens expired.
    expect((await get(`/o/globex${statusPath(77, 8001, 'ja')}`, t2)).status).toBe(200)
    t1 = (await emu.authorizeDirect()).access_token
  })

  it('authorizes in the organization whose address the browser came to', async () => {
    const res = await fetch(`${emu.url}/o/globex/oauth/authorize?client_id=${emu.clientId}&redirect_uri=${encodeURIComponent('http://localhost:3000/oauth/callback')}&response_type=code&scope=project&state=s`, { redirect: 'manual' })
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!
    const token = await fetch(`${emu.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: emu.clientId, client_secret: emu.clientSecret, redirect_uri: 'http://localhost:3000/oauth/callback', code }),
    })
    const { access_token } = (await token.json()) as { access_token: string }
    expect((await get(`/o/globex${statusPath(77, 8001, 'ja')}`, access_token)).status).toBe(200)
    expect((await get(statusPath(42, 7001, 'de'), access_token)).status).toBe(401)
    emu.clearMistakes()
  })

  it("signs each organization's batches with its own secret, its id and domain in headers and body", async () => {
    const report = await emu.sendPending({ limit: 2, anyStatus: true })
    expect(report.batches).toBe(2)
    const byOrg = new Map(receiver.received.map((r) => [r.headers['x-service-id'], r]))
    for (const [id, domain, secret] of [['200000', 'acme', 'secret1'], ['300000', 'globex', 'secret2']] as const) {
      const r = byOrg.get(id)!
      expect(r.headers['x-service-domain']).toBe(domain)
      expect(r.headers['x-service-signature']).toBe(createHmac('sha256', secret).update(r.raw).digest('hex'))
      expect(r.headers['x-module-key']).toBe('switchyard-webhook')
      const events = JSON.parse(r.raw.toString()).events as any[]
      expect(events.every((e) => e.stringStatus.organizationId === id)).toBe(true)
    }
    receiver.received.length = 0
    await emu.sendPending({ organization: 'globex', limit: 1, anyStatus: true })
    expect(receiver.received.map((r) => r.headers['x-service-id'])).toEqual(['300000'])
  })

  it('adds an organization later, through the method or the control API', async () => {
    const info = emu.addOrganization({ id: '400000', domain: 'initech', strings: 3 })
    expect(info).toMatchObject({ id: '400000', domain: 'initech', strings: 3 })
    const res = await fetch(`${emu.url}/_control/organizations`, { method: 'POST', body: JSON.stringify({ id: '500000', domain: 'umbrella', strings: 2, languages: ['fr'] }) })
    expect(res.status).toBe(200)
    expect(((await (await fetch(`${emu.url}/_control/organizations`)).json()) as any[]).map((o) => o.domain)).toEqual(['acme', 'globex', 'initech', 'umbrella'])
    expect(() => emu.addOrganization({ id: '600000', domain: 'acme' })).toThrow(/exists/)
  })

  it('keeps faults per organization', async () => {
    emu.configureFaults({ nextStatuses: [503] }, 'globex')
    expect((await get(statusPath(42, 7001, 'de'), t1)).status).toBe(200)
    expect((await get(`/o/globex${statusPath(77, 8001, 'ja')}`, t2)).status).toBe(503)
    expect((await get(`/o/globex${statusPath(77, 8001, 'ja')}`, t2)).status).toBe(200)
    emu.configureFaults(null, 'globex')
  })
})
