import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { startReceiver, type Receiver } from './receiver.js'

let emu: Emulator
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver()
  emu = await startEmulator({ strings: 20 })
})
afterAll(async () => {
  await emu.stop()
  await receiver.close()
})

async function control(method: string, path: string, body?: unknown) {
  const res = await fetch(new URL(`/_control${path}`, emu.url), {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  })
  return { status: res.status, body: (await res.json()) as any }
}

describe('control API over HTTP', () => {
  it('seeds, configures, sends, and reports', async () => {
    const seeded = await control('POST', '/seed', { strings: 40, languages: ['ja', 'ru'], seed: 3 })
    expect(seeded.body).toMatchObject({ strings: 40, languages: ['ja', 'ru'], organization: { id: '200000', domain: 'acme' } })
    const settings = await control('POST', '/settings', { webhookUrl: receiver.url, batchSize: 10, appSecret: 'abc' })
    expect(settings.body).toMatchObject({ webhookUrl: receiver.url, batchSize: 10 })
    const sent = await control('POST', '/send', {})
    expect(sent.body).toMatchObject({ batches: 8, events: 80, delivered: 8 })
    expect(receiver.received).toHaveLength(8)

    const auth = await control('POST', '/authorize', {})
    expect(auth.body.token_type).toBe('bearer')
    const id = emu.sample.strings[0]!.id
    const patch = await fetch(new URL(`/api/v2/projects/42/workflow-steps/7001/languages/ja/status`, emu.url), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${auth.body.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ op: 'replace', path: `/${id}/output`, value: 'translated' }]),
    })
    expect(patch.status).toBe(200)

    const done = await control('GET', '/statuses?status=DONE')
    expect(done.body.total).toBe(1)
    expect(done.body.data[0]).toMatchObject({ stringId: id, languageId: 'ja', output: 'translated', patches: 1 })
    const summary = (await control('GET', '/summary')).body
    expect(summary.languages.ja.byStatus).toEqual({ DONE: 1, NEED_PROCESS: 39 })
    expect(summary.languages.ja.byOutput).toEqual({ translated: 1, '': 39 })
    const expected = emu.status(id, 'ja')!.expected
    expect(summary.wrongOutput).toBe(expected === 'translated' ? 0 : 1)
    expect(summary.notDone).toBe(79)

    const requests = (await control('GET', '/requests')).body
    expect(requests.counts['PATCH /api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status']).toEqual({ 200: 1 })
    expect(requests.maxInFlight).toEqual({ 200000: 1 })
    expect(Object.keys(requests.counts).some((k) => k.includes('_control'))).toBe(false)
  })

  it('lists sample strings with translations and expected verdicts', async () => {
    const res = await control('GET', '/strings?limit=5')
    expect(res.body.data).toHaveLength(5)
    expect(res.body.data[0].translations.ja).toHaveProperty('expected')
  })

  it('sets faults and refuses bad settings with 400', async () => {
    expect((await control('POST', '/settings', { faults: { rateLimitRate: 1 } })).body.faults.rateLimitRate).toBe(1)
    expect((await control('POST', '/settings', { faults: { rateLimitRate: 1.5 } })).status).toBe(400)
    expect((await control('POST', '/settings', { nonsense: 1 })).status).toBe(400)
    expect((await control('POST', '/seed', { languages: ['xx'] })).status).toBe(400)
    await control('POST', '/settings', { faults: { rateLimitRate: 0 } })
  })

  it('expires tokens and sends raw requests', async () => {
    const token = (await control('POST', '/authorize', {})).body.access_token
    expect((await control('POST', '/expire-tokens')).body.expired).toBeGreaterThan(0)
    const res = await fetch(new URL(`/api/v2/projects/42/workflow-steps/7001/languages/ja/status`, emu.url), { headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBe(401)
    receiver.answers.push(400)
    const raw = await control('POST', '/send-raw', { body: 'not json', standardHeaders: false, headers: { 'content-type': 'text/plain' } })
    expect(raw.body.status).toBe(400)
    expect(receiver.received.at(-1)!.headers['x-service-signature']).toBeUndefined()
  })
})
