// What the platform does to an app at its least convenient: revoked status updates (403 for a
// while; a refresh does not help), a language taken out of the step (404), strings sent back and
// resent (new arrivals), missing translations, unknown fields and a malformed event in a batch,
// and a token endpoint that takes JSON only and wants client_secret on refresh.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { startReceiver, type Receiver } from './receiver.js'

let emu: Emulator
let receiver: Receiver
let token: string

beforeAll(async () => {
  receiver = await startReceiver()
  emu = await startEmulator({ strings: 20, languages: ['de', 'fr', 'ru'], webhookUrl: receiver.url, settings: { retryDelayMs: 0 } })
  token = (await emu.authorizeDirect()).access_token
})
afterAll(async () => {
  await emu.stop()
  await receiver.close()
})
beforeEach(() => {
  emu.seed()
  emu.restore()
  emu.addLanguage('de')
  emu.clearMistakes()
  emu.resetCounters()
  receiver.received.length = 0
})

const statusPath = (lang: string) => `/api/v2/projects/42/workflow-steps/7001/languages/${lang}/status`
const replace = (id: number, value: string) => ({ op: 'replace', path: `/${id}/output`, value })

async function call(method: string, path: string, body?: unknown, auth = token) {
  const res = await fetch(new URL(path, emu.url), {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

const control = async (path: string, body: unknown = {}) => {
  const res = await fetch(`${emu.url}/_control${path}`, { method: 'POST', body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as any }
}

describe('revoked status updates', () => {
  it('answers 403 to PATCH for the window, whatever the token; GET still works; then 200', async () => {
    const id = emu.sample.strings[0]!.id
    // Until restored (a timed window on a busy machine could end before the first request).
    emu.revoke(undefined)
    expect((await call('PATCH', statusPath('de'), [replace(id, 'approved')])).status).toBe(403)
    const fresh = (await emu.authorizeDirect()).access_token
    expect((await call('PATCH', statusPath('de'), [replace(id, 'approved')], fresh)).status).toBe(403)
    expect((await call('GET', `${statusPath('de')}?stringIds=${id}`)).status).toBe(200)
    expect(emu.status(id, 'de')!.status).toBe('NEED_PROCESS')
    // A timed window ends by itself.
    emu.revoke(undefined, 50)
    await new Promise((r) => setTimeout(r, 120))
    expect((await call('PATCH', statusPath('de'), [replace(id, 'approved')])).status).toBe(200)
    expect(emu.patchRequests({ status: 403 })).toBe(2)
    expect(emu.patchRequests({ languageId: 'de' })).toBe(3)
    emu.assertNoMistakes()
  })

  it('revokes until restored, also through the control API', async () => {
    const id = emu.sample.strings[0]!.id
    expect((await control('/revoke', {})).status).toBe(200)
    expect((await call('PATCH', statusPath('de'), [replace(id, 'approved')])).status).toBe(403)
    await control('/restore', {})
    expect((await call('PATCH', statusPath('de'), [replace(id, 'approved')])).status).toBe(200)
  })
})

describe('refused tokens (401 after a refresh)', () => {
  it('answers 401 to every API request of the organization for the window, fresh tokens included; not a mistake', async () => {
    emu.refuseTokens(undefined, 300)
    expect((await call('GET', statusPath('de'))).status).toBe(401)
    const fresh = (await emu.authorizeDirect()).access_token
    expect((await call('GET', statusPath('de'), undefined, fresh)).status).toBe(401)
    await new Promise((r) => setTimeout(r, 320))
    expect((await call('GET', statusPath('de'), undefined, fresh)).status).toBe(200)
    emu.assertNoMistakes()
  })
})

describe('a language taken out of the step', () => {
  it('answers 404 to PATCH and GET for it, and sends nothing more in it', async () => {
    const id = emu.sample.strings[0]!.id
    expect((await control('/remove-language', { languageId: 'de' })).status).toBe(200)
    expect((await call('PATCH', statusPath('de'), [replace(id, 'approved')])).status).toBe(404)
    expect((await call('GET', statusPath('de'))).status).toBe(404)
    expect((await call('PATCH', statusPath('fr'), [replace(id, 'approved')])).status).toBe(200)
    const report = await emu.sendPending()
    const languages = receiver.received.flatMap((r) => JSON.parse(r.raw.toString()).events.map((e: any) => e.stringStatus.affectedLanguage.id))
    expect(new Set(languages)).toEqual(new Set(['fr', 'ru']))
    expect(report.events).toBe(20 * 2 - 1)
    expect(emu.organizations()[0]!.stepLanguages).toEqual(['fr', 'ru'])
    emu.assertNoMistakes()
  })
})

describe('arrivals', () => {
  it('sends a finished string back with its translation fixed: NEED_PROCESS again, re-delivered, same revision', async () => {
    const broken = emu.sample.strings.find((s) => s.translations.get('de')!.defect !== null)!
    const before = broken.translations.get('de')!.text
    await call('PATCH', statusPath('de'), [replace(broken.id, 'translated')])
    const res = await control('/send-back', { stringIds: [broken.id], languageId: 'de' })
    expect(res.body).toEqual({ sentBack: 1, strings: [{ stringId: broken.id, languageId: 'de' }] })
    const t = broken.translations.get('de')!
    expect(t).toMatchObject({ defect: null, expected: 'approved' })
    expect(t.text).not.toBe(before)
    const translations = await call('GET', `/api/v2/projects/42/languages/de/translations?stringIds=${broken.id}`)
    expect(translations.body.data[0].data.text).toBe(t.text)
    await emu.sendPending({ stringIds: [broken.id], languageIds: ['de'] })
    const event = JSON.parse(receiver.received[0]!.raw.toString()).events[0]
    expect(event.stringStatus.translation).toMatchObject({ id: broken.id, revision: broken.revision })
    expect(emu.status(broken.id, 'de')).toMatchObject({ status: 'NEED_PROCESS', arrivals: 2, answered: 1 })
    emu.assertNoMistakes()
  })

  it('Resend moves FAILED and parked (TODO) strings back to NEED_PROCESS, each a new arrival', async () => {
    const [a, b] = emu.sample.strings
    await call('PATCH', statusPath('fr'), [replace(a!.id, '')])
    emu.org().statuses.set(b!.id, 'fr', 'FAILED')
    expect(emu.resend({ languageId: 'fr' })).toBe(2)
    expect(emu.status(a!.id, 'fr')).toMatchObject({ status: 'NEED_PROCESS', arrivals: 2 })
    expect(emu.status(b!.id, 'fr')).toMatchObject({ status: 'NEED_PROCESS', arrivals: 2 })
  })
})

describe('translations', () => {
  it('leaves untranslated strings out of the list; serves plural forms as plurals', async () => {
    const ids = emu.sample.strings.slice(0, 4).map((s) => s.id)
    await control('/untranslated', { stringIds: [ids[1]], languageId: 'de' })
    const res = await call('GET', `/api/v2/projects/42/languages/de/translations?stringIds=${ids.join(',')}`)
    expect(res.body.data.map((d: any) => d.data.stringId)).toEqual([ids[0], ids[2], ids[3]])
    expect((await call('GET', `/api/v2/projects/42/languages/fr/translations?stringIds=${ids.join(',')}`)).body.data).toHaveLength(4)
    const plural = emu.sample.strings.find((s) => s.hasPlurals)
    if (plural) {
      const p = await call('GET', `/api/v2/projects/42/languages/ru/translations?stringIds=${plural.id}`)
      expect(p.body.data[0].data.plurals.map((f: any) => f.plural)).toEqual(['one', 'few', 'many', 'other'])
      expect(p.body.data[0].data.text).toBeUndefined()
    }
  })
})

describe('batches', () => {
  it('puts unknown fields and events without a string id into a batch', async () => {
    const [a, b] = emu.sample.strings
    await emu.sendPending({ stringIds: [a!.id, b!.id], languageIds: ['de'], unknownFields: true, malformedStringIds: [b!.id] })
    const events = JSON.parse(receiver.received[0]!.raw.toString()).events
    expect(events).toHaveLength(2)
    expect(events[0].deliveryAttemptHint).toBeDefined()
    expect(events[0].stringStatus.translation.id).toBe(a!.id)
    expect(events[1].stringStatus.translation.id).toBeUndefined()
    expect(events[1].stringStatus.translation.key).toBe(b!.key)
  })

  it('retries on its own schedule, ignoring Retry-After, then marks the strings FAILED', async () => {
    emu.configure({ retries: 3, retryDelayMs: 10 })
    receiver.answers.push([429, { 'Retry-After': '60' }], [503, { 'Retry-After': '60' }], 500, 500)
    const started = Date.now()
    const report = await emu.sendPending({ stringIds: [emu.sample.strings[0]!.id], languageIds: ['de'] })
    expect(Date.now() - started).toBeLessThan(3000)
    expect(report).toMatchObject({ attempts: 4, delivered: 0, failedStrings: [{ stringId: emu.sample.strings[0]!.id, languageId: 'de' }] })
    expect(emu.status(emu.sample.strings[0]!.id, 'de')!.status).toBe('FAILED')
  })
})

describe('token endpoint', () => {
  const tokenCall = async (body: Record<string, string>) => {
    const res = await fetch(`${emu.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: res.status, body: (await res.json()) as any }
  }

  it('refuses a refresh without client_secret (401 invalid_client), rotates on refresh, and records misuse', async () => {
    const first = await emu.authorizeDirect()
    const noSecret = await tokenCall({ grant_type: 'refresh_token', client_id: emu.clientId, refresh_token: first.refresh_token })
    expect(noSecret).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
    const ok = await tokenCall({ grant_type: 'refresh_token', client_id: emu.clientId, client_secret: emu.clientSecret, refresh_token: first.refresh_token })
    expect(ok.status).toBe(200)
    expect(ok.body.refresh_token).not.toBe(first.refresh_token)
    const reused = await tokenCall({ grant_type: 'refresh_token', client_id: emu.clientId, client_secret: emu.clientSecret, refresh_token: first.refresh_token })
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    expect(emu.mistakes().map((m) => m.kind)).toEqual(['refresh-without-secret', 'refresh-token-reused'])
  })
})

describe('mistakes through the control API', () => {
  it('lists and clears them', async () => {
    await call('GET', statusPath('de'), undefined, 'nonsense')
    const listed = (await (await fetch(`${emu.url}/_control/mistakes`)).json()) as any
    expect(listed).toMatchObject({ count: 1, data: [{ kind: 'invalid-token', organizationId: '200000' }] })
    await control('/mistakes/clear')
    expect(emu.mistakes()).toEqual([])
  })
})
