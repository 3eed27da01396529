// The worker's requests against the contract fake (test/support/contract-fake.ts), not our
// emulator: the whole wire format of every call (method, path, query, headers, body), the API
// client's own refresh on 401, the reconciliation's status filter and plural translations.
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { ApiClient } from '../../src/platform/api-client.js'
import { TokenManager } from '../../src/platform/token-manager.js'
import { silentLogger } from '../../src/util/logger.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { contractFake, type ContractFake } from '../support/contract-fake.js'
import { fakePipelines } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import type { Item } from '../../src/engine/types.js'

const API = 'http://api.test'
const AUTH = 'http://auth.test'
const DOMAIN = 'acme'

async function connected(fake: ContractFake) {
  const config = loadConfig({}, { apiUrl: API, authUrl: AUTH, clientId: 'cid', clientSecret: 'csecret', baseUrl: 'https://worker.test', storeUrl: 'memory://', oauthTokenFormat: 'json' })
  // A fixed key: the value does not matter, and nothing in a test is drawn unseeded.
  const tokens = new TokenManager({ config, store: new Keyv(), log: silentLogger(), fetch: fake.fetch, key: Buffer.alloc(32, 7) })
  await tokens.saveTokenResponse(DOMAIN, fake.issue())
  const api = new ApiClient({ config, tokens, log: silentLogger(), fetch: fake.fetch, baseDelayMs: 1 })
  return { config, tokens, api }
}

const STATUS_PATH = '/api/v2/projects/7/workflow-steps/11/languages/de/status'

describe('the contract fake refuses what the service would refuse', () => {
  async function send(fake: ContractFake, init: RequestInit & { path?: string; base?: string }) {
    return fake.fetch(`${init.base ?? API}${init.path ?? STATUS_PATH}`, init)
  }
  const ok = { authorization: 'Bearer token', 'content-type': 'application/json' }
  const cases: Array<{ name: string; init: RequestInit & { path?: string }; status: number; violation: RegExp }> = [
    { name: 'op "add"', init: { method: 'PATCH', headers: ok, body: JSON.stringify([{ op: 'add', path: '/1/output', value: 'approved' }]) }, status: 400, violation: /only "replace"/ },
    { name: 'a path that is not /<id>/output', init: { method: 'PATCH', headers: ok, body: JSON.stringify([{ op: 'replace', path: '/1/status', value: 'approved' }]) }, status: 400, violation: /expected "\/<stringId>\/output"/ },
    { name: 'a value that is not a string', init: { method: 'PATCH', headers: ok, body: JSON.stringify([{ op: 'replace', path: '/1/output', value: 1 }]) }, status: 400, violation: /not a string/ },
    { name: 'an extra field', init: { method: 'PATCH', headers: ok, body: JSON.stringify([{ op: 'replace', path: '/1/output', value: 'approved', from: 'x' }]) }, status: 400, violation: /expected exactly op, path, value/ },
    { name: 'an object instead of an array', init: { method: 'PATCH', headers: ok, body: JSON.stringify({ op: 'replace', path: '/1/output', value: 'approved' }) }, status: 400, violation: /non-empty JSON array/ },
    { name: 'no Content-Type', init: { method: 'PATCH', headers: { authorization: 'Bearer token' }, body: JSON.stringify([{ op: 'replace', path: '/1/output', value: 'approved' }]) }, status: 415, violation: /not application\/json/ },
    { name: 'no "Bearer " prefix', init: { method: 'GET', headers: { authorization: 'token' } }, status: 401, violation: /not "Bearer <token>"/ },
    { name: 'no Authorization', init: { method: 'GET' }, status: 401, violation: /no Authorization header/ },
    { name: 'more than 500 stringIds', init: { method: 'GET', headers: ok, path: `${STATUS_PATH}?stringIds=${Array.from({ length: 501 }, (_, i) => i + 1).join(',')}` }, status: 400, violation: /at most 500/ },
    { name: 'limit over 500', init: { method: 'GET', headers: ok, path: `${STATUS_PATH}?limit=501` }, status: 400, violation: /limit=501 is outside 1..500/ },
    { name: 'an unknown status', init: { method: 'GET', headers: ok, path: `${STATUS_PATH}?status=OPEN` }, status: 400, violation: /status=OPEN is not one of/ },
    { name: 'an unknown endpoint', init: { method: 'GET', headers: ok, path: '/api/v2/projects/7/strings' }, status: 404, violation: /no such endpoint/ },
    { name: 'DELETE on a status endpoint', init: { method: 'DELETE', headers: ok }, status: 405, violation: /takes GET or PATCH/ },
    { name: 'translations without stringIds', init: { method: 'GET', headers: ok, path: '/api/v2/projects/7/languages/de/translations?limit=500' }, status: 400, violation: /stringIds is required/ },
  ]
  for (const c of cases) {
    it(`${c.name}: ${c.status}, and recorded as a violation`, async () => {
      const fake = contractFake({ apiUrl: API })
      const res = await send(fake, c.init)
      expect(res.status).toBe(c.status)
      expect(fake.violations.splice(0)).toEqual([expect.stringMatching(c.violation)])
    })
  }

  it('a refresh without client_secret, or form-encoded, is a violation', async () => {
    const fake = contractFake()
    const { refresh_token } = fake.issue()
    const post = (headers: Record<string, string>, body: string) => fake.fetch(`${AUTH}/oauth/token`, { method: 'POST', headers, body })
    expect((await post({ 'content-type': 'application/json' }, JSON.stringify({ grant_type: 'refresh_token', client_id: 'cid', refresh_token }))).status).toBe(401)
    expect((await post({ 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams({ grant_type: 'refresh_token', client_id: 'cid', client_secret: 'csecret', refresh_token }).toString())).status).toBe(415)
    expect(fake.violations.splice(0)).toEqual([expect.stringMatching(/without the right client_secret/), expect.stringMatching(/not application\/json/)])
    // The refresh token is still live: neither request was accepted.
    expect((await post({ 'content-type': 'application/json' }, JSON.stringify({ grant_type: 'refresh_token', client_id: 'cid', client_secret: 'csecret', refresh_token }))).status).toBe(200)
  })

  it('an expired token is answered 401 but is not a wire-format violation', async () => {
    const fake = contractFake({ apiUrl: API })
    fake.expireAccessTokens()
    expect((await send(fake, { method: 'GET', headers: ok })).status).toBe(401)
    expect(fake.violations).toEqual([])
  })
})

describe('ApiClient: the wire format of each call', () => {
  it('PATCH: method, path, Bearer token, JSON content type, body of replace operations', async () => {
    const fake = contractFake({ apiUrl: API })
    const { api } = await connected(fake)
    const ops = [{ op: 'replace' as const, path: '/1/output', value: 'approved' }, { op: 'replace' as const, path: '/2/output', value: '' }]
    const answer = await api.patchStatuses(DOMAIN, 7, 11, 'de', ops)
    const [req] = fake.requests
    expect(req!.method).toBe('PATCH')
    expect(req!.url.toString()).toBe(`${API}${STATUS_PATH}`)
    expect(req!.headers.get('authorization')).toBe('Bearer access-1')
    expect(req!.headers.get('content-type')).toBe('application/json')
    expect(req!.body).toEqual(ops)
    // Its answer is not read: a 2XX is all that counts (a body that is not JSON must not make an
    // applied update look failed).
    expect(answer).toBeUndefined()
  })

  it('GET statuses: status filter, limit <= 500, no body, records of section 2.7', async () => {
    const fake = contractFake({ apiUrl: API })
    fake.setStatuses(7, [
      { stringId: 1, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' },
      { stringId: 2, languageId: 'de', stepId: 11, status: 'DONE', output: 'approved' },
      { stringId: 3, languageId: 'fr', stepId: 11, status: 'NEED_PROCESS', output: '' },
    ])
    const { api } = await connected(fake)
    const records = await api.getStatuses(DOMAIN, 7, 11, 'de', { status: 'NEED_PROCESS' })
    expect(records).toEqual([{ stringId: 1, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' }])
    const [req] = fake.requests
    expect(req!.method).toBe('GET')
    expect(Object.fromEntries(req!.url.searchParams)).toEqual({ status: 'NEED_PROCESS', limit: '500', offset: '0' })
    expect(req!.headers.get('content-type')).toBeNull()
    expect(req!.body).toBeUndefined()
    expect(await api.getStatuses(DOMAIN, 7, 11, 'de', { stringIds: [1, 2] })).toHaveLength(2)
    // "comma-separated" (platform notes), as the translations call sends them: literal commas,
    // not %2C, for a service that reads the query as written.
    expect(fake.requests.at(-1)!.url.search).toContain('stringIds=1,2&')
  })

  it('GET translations: 500 ids a call, plain texts and plural forms', async () => {
    const ids = Array.from({ length: 700 }, (_, i) => i + 1)
    const de: Record<number, { text?: string; plurals?: Array<{ plural: string; text: string }> }> = {}
    for (const id of ids) de[id] = { text: `Text ${id}` }
    de[5] = { plurals: [{ plural: 'one', text: 'eine Datei' }, { plural: 'other', text: '{count} Dateien' }] }
    const fake = contractFake({ apiUrl: API, translations: { de } })
    const { api } = await connected(fake)
    const got = await api.getTranslations(DOMAIN, 7, 'de', ids)
    const calls = fake.requestsTo('translations', 'GET')
    expect(calls.map((c) => c.url.searchParams.get('stringIds')!.split(',').length)).toEqual([500, 200])
    for (const c of calls) expect(c.url.searchParams.get('limit')).toBe('500')
    expect(got.size).toBe(700)
    expect(got.get(4)).toMatchObject({ stringId: 4, text: 'Text 4' })
    expect(got.get(5)).toMatchObject({ stringId: 5, plurals: [{ plural: 'one', text: 'eine Datei' }, { plural: 'other', text: '{count} Dateien' }] })
  })
})

describe('ApiClient: refresh on 401, by the client itself', () => {
  it('a 401 makes the client refresh once (JSON body with client_secret) and retry with the new token', async () => {
    const fake = contractFake({ apiUrl: API })
    const { api } = await connected(fake)
    fake.expireAccessTokens()
    await api.patchStatuses(DOMAIN, 7, 11, 'de', [{ op: 'replace', path: '/1/output', value: 'approved' }])
    expect(fake.refreshes()).toBe(1)
    const [refresh] = fake.tokenRequests
    expect(refresh!.contentType).toBe('application/json')
    expect(refresh!.body).toEqual({ grant_type: 'refresh_token', client_id: 'cid', client_secret: 'csecret', refresh_token: 'refresh-1' })
    const patches = fake.requestsTo('status', 'PATCH')
    expect(patches.map((p) => [p.status, p.headers.get('authorization')])).toEqual([[401, 'Bearer access-1'], [200, 'Bearer access-2']])
    expect(fake.statusOf(7, 11, 'de', 1)).toMatchObject({ status: 'DONE', output: 'approved' })
  })

  it('a token that expires during a run is refreshed for the worker, and its strings are reported', async () => {
    const fake = contractFake({ apiUrl: API })
    const { tokens } = await connected(fake)
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: fake.fetch, tokens, config: { apiUrl: API, authUrl: AUTH, clientId: 'cid', clientSecret: 'csecret' } })
    try {
      fake.expireAccessTokens()
      const body = JSON.stringify({ events: [1, 2].map((stringId) => recalculationEvent({ stringId })) })
      expect((await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET, { domain: DOMAIN }))).status).toBe(200)
      await w.idle()
      await w.reporter.flush()
      expect(fake.refreshes()).toBe(1)
      expect(fake.patches.flatMap((p) => p.ops)).toEqual([
        { op: 'replace', path: '/1/output', value: 'approved' },
        { op: 'replace', path: '/2/output', value: 'approved' },
      ])
    } finally {
      await w.stop()
    }
  })
})

describe('the worker against the contract fake', () => {
  it('reports each string with op replace, its own path and the port its pipeline chose', async () => {
    const fake = contractFake()
    const w = await startTestWorker({ pipelines: fakePipelines('test-step', (item) => (item.id % 2 ? 'approved' : 'translated')), fetch: fake.fetch })
    try {
      const body = JSON.stringify({ events: [1, 2, 3].map((stringId) => recalculationEvent({ stringId, languageId: 'fr', projectId: 9, stepId: 12 })) })
      await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))
      await w.idle()
      await w.reporter.flush()
      expect(fake.patches).toHaveLength(1)
      expect(fake.patches[0]).toMatchObject({ projectId: 9, stepId: 12, languageId: 'fr' })
      expect(fake.patches[0]!.ops.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
        { op: 'replace', path: '/1/output', value: 'approved' },
        { op: 'replace', path: '/2/output', value: 'translated' },
        { op: 'replace', path: '/3/output', value: 'approved' },
      ])
      const [patch] = fake.requestsTo('status', 'PATCH')
      expect(patch!.headers.get('authorization')).toBe('Bearer token')
      expect(patch!.headers.get('content-type')).toBe('application/json')
    } finally {
      await w.stop()
    }
  })

  it('reconciliation asks only for NEED_PROCESS strings and counts those with no job here', async () => {
    const fake = contractFake()
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: fake.fetch })
    try {
      await fetch(`${w.url}/webhooks`, signedRequest(JSON.stringify({ events: [1, 2].map((stringId) => recalculationEvent({ stringId })) }), SECRET))
      await w.idle()
      await w.reporter.flush()
      // At the service: 1 and 2 are DONE now; 3 and 4 wait with no job here; 5 failed long ago.
      fake.setStatuses(7, [
        { stringId: 3, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' },
        { stringId: 4, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' },
        { stringId: 5, languageId: 'de', stepId: 11, status: 'FAILED', output: '' },
      ])
      expect(await w.reconcile()).toEqual({ orphans: 2, checked: 2 })
      const [get] = fake.requestsTo('status', 'GET')
      expect(get!.url.searchParams.get('status')).toBe('NEED_PROCESS')
    } finally {
      await w.stop()
    }
  })

  it('a pipeline that needs the translation gets plural forms, with the "other" form as its text', async () => {
    const seen: Item[] = []
    const fake = contractFake({ translations: { de: { 1: { text: 'Datei speichern' }, 2: { plurals: [{ plural: 'one', text: 'eine Datei' }, { plural: 'other', text: '{n} Dateien' }] } } } })
    const pipelines = fakePipelines('test-step', (item) => {
      seen.push(item)
      return 'approved'
    }, { needsTranslation: true })
    const w = await startTestWorker({ pipelines, fetch: fake.fetch })
    try {
      await fetch(`${w.url}/webhooks`, signedRequest(JSON.stringify({ events: [1, 2].map((stringId) => recalculationEvent({ stringId })) }), SECRET))
      await w.idle()
      const byId = new Map(seen.map((i) => [i.id, i]))
      expect(byId.get(1)).toMatchObject({ translation: 'Datei speichern', isPlural: false })
      expect(byId.get(1)!.plurals).toBeUndefined()
      expect(byId.get(2)).toMatchObject({ translation: '{n} Dateien', isPlural: true, plurals: [{ plural: 'one', text: 'eine Datei' }, { plural: 'other', text: '{n} Dateien' }] })
      const gets = fake.requestsTo('translations', 'GET')
      for (const get of gets) expect(get.url.pathname).toBe('/api/v2/projects/7/languages/de/translations')
      expect(gets.flatMap((get) => get.url.searchParams.get('stringIds')!.split(',').map(Number)).sort()).toEqual([1, 2])
    } finally {
      await w.stop()
    }
  })
})
