import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import { startReceiver, type Receiver } from './receiver.js'

let emu: Emulator
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver()
  emu = await startEmulator({ strings: 30, languages: ['de', 'fr'], appSecret: 'shh', webhookUrl: receiver.url, settings: { retryDelayMs: 0 } })
})
afterAll(async () => {
  await emu.stop()
  await receiver.close()
})
beforeEach(() => {
  emu.seed()
  receiver.received.length = 0
  receiver.answers.length = 0
  emu.configure({ batchSize: 100, retries: 3, headerPrefix: 'X-Service-' })
})

const parse = (raw: Buffer) => JSON.parse(raw.toString('utf8')) as { events: Array<Record<string, any>> }

describe('webhook sender', () => {
  it('sends every NEED_PROCESS (string, language) once, in batches, with every field of 2.6', async () => {
    emu.configure({ batchSize: 25 })
    const report = await emu.sendPending()
    expect(report).toMatchObject({ batches: 3, events: 60, delivered: 3, failedBatches: 0, failedStrings: [] })
    expect(receiver.received).toHaveLength(3)
    const events = receiver.received.flatMap((r) => parse(r.raw).events)
    expect(events).toHaveLength(60)
    expect(new Set(events.map((e) => `${e.stringStatus.translation.id}:${e.stringStatus.affectedLanguage.id}`)).size).toBe(60)
    const e = events[0]!
    expect(e.event).toBe('string.status_on_step.recalculation_triggered')
    const s = e.stringStatus
    expect(s).toMatchObject({ status: 'NEED_PROCESS', output: '', originEvent: 'string.added', organizationId: '200000' })
    expect(Object.keys(s.translation).sort()).toEqual(
      ['id', 'identifier', 'key', 'text', 'type', 'context', 'maxLength', 'isHidden', 'isDuplicate', 'masterStringId', 'revision', 'hasPlurals', 'labelIds', 'url', 'createdAt', 'updatedAt', 'file', 'project'].sort(),
    )
    expect(typeof s.translation.maxLength).toBe('string')
    expect(Object.keys(s.translation.file).sort()).toEqual(['id', 'name', 'title', 'type', 'path', 'status', 'revision', 'branch', 'directory', 'project'].sort())
    expect(s.translation.project).toMatchObject({ id: 42, sourceLanguageId: 'en', targetLanguageIds: ['de', 'fr'], isExternal: false })
    for (const lang of [s.sourceLanguage, s.affectedLanguage]) {
      expect(Object.keys(lang).sort()).toEqual(['id', 'name', 'editorCode', 'twoLettersCode', 'threeLettersCode', 'locale', 'androidCode', 'osxCode', 'osxLocale', 'textDirection', 'dialectOf'].sort())
    }
    expect(s.sourceLanguage.id).toBe('en')
    expect(s.workflowStep).toMatchObject({ id: 7001, type: 'Application', languages: ['de', 'fr'], applicationModule: { moduleKey: 'qa-gate' } })
    expect(Object.keys(s.user).sort()).toEqual(['avatarUrl', 'fullName', 'id', 'username'])
    // Sent, not yet answered: still NEED_PROCESS.
    expect(emu.summary().languages.de!.byStatus).toEqual({ NEED_PROCESS: 30 })
  })

  it('signs the raw body with the app secret (lower-case hex HMAC-SHA256) and sends the 5.3 headers', async () => {
    await emu.sendPending({ limit: 3 })
    const { raw, headers } = receiver.received[0]!
    expect(headers['x-service-signature']).toBe(createHmac('sha256', 'shh').update(raw).digest('hex'))
    expect(headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/)
    expect(headers).toMatchObject({ 'user-agent': 'Service-Webhook', 'content-type': 'application/json', 'x-service-id': '200000', 'x-service-domain': 'acme', 'x-module-key': 'switchyard-webhook' })
    expect(parse(raw).events).toHaveLength(3)
  })

  it('uses the configured header prefix', async () => {
    emu.configure({ headerPrefix: 'X-Crowdin-' })
    await emu.sendPending({ limit: 1 })
    const { headers, raw } = receiver.received[0]!
    expect(headers['x-crowdin-signature']).toBe(createHmac('sha256', 'shh').update(raw).digest('hex'))
    expect(headers['x-service-signature']).toBeUndefined()
  })

  it('sends a chosen set only', async () => {
    const ids = emu.sample.strings.slice(0, 2).map((s) => s.id)
    const report = await emu.sendPending({ stringIds: ids, languageIds: ['fr'] })
    expect(report.events).toBe(2)
    const events = parse(receiver.received[0]!.raw).events
    expect(events.map((e) => [e.stringStatus.translation.id, e.stringStatus.affectedLanguage.id])).toEqual(ids.map((id) => [id, 'fr']))
  })

  it('retries a non-2XX, then marks the strings FAILED; resend brings them back', async () => {
    emu.configure({ retries: 2 })
    receiver.answers.push(500, 502, 500)
    const report = await emu.sendPending({ stringIds: [emu.sample.strings[0]!.id] })
    expect(report).toMatchObject({ batches: 1, attempts: 3, delivered: 0, failedBatches: 1, non2xx: { 500: 2, 502: 1 } })
    expect(report.failedStrings).toHaveLength(2)
    expect(emu.status(emu.sample.strings[0]!.id, 'de')!.status).toBe('FAILED')
    expect(emu.summary().languages.fr!.byStatus.FAILED).toBe(1)
    // FAILED strings are not resent until Resend.
    expect((await emu.sendPending({ stringIds: [emu.sample.strings[0]!.id] })).events).toBe(0)
    expect(emu.resend()).toBe(2)
    expect(emu.status(emu.sample.strings[0]!.id, 'de')!.status).toBe('NEED_PROCESS')
  })

  it('delivers after a failure when a retry succeeds, on its own schedule: Retry-After is ignored', async () => {
    emu.configure({ retryDelayMs: 20 })
    receiver.answers.push([503, { 'Retry-After': '30' }])
    const started = Date.now()
    const report = await emu.sendPending({ limit: 1 })
    expect(Date.now() - started).toBeLessThan(5000)
    expect(report).toMatchObject({ attempts: 2, delivered: 1, statuses: { 503: 1, 200: 1 }, failedStrings: [] })
  })

  it('counts an unreachable receiver as failed', async () => {
    emu.configure({ retries: 1 })
    const report = await emu.sendPending({ limit: 1, url: 'http://127.0.0.1:1/webhooks' })
    expect(report.statuses).toEqual({ network: 2 })
    expect(report.failedStrings).toHaveLength(1)
  })

  it('sends arbitrary events and raw bodies', async () => {
    const report = await emu.sendEvents([{ event: 'project.translated', project: { id: 42 }, targetLanguage: { id: 'de' } }])
    expect(report.delivered).toBe(1)
    expect(parse(receiver.received[0]!.raw)).toEqual({ events: [{ event: 'project.translated', project: { id: 42 }, targetLanguage: { id: 'de' } }] })
    receiver.answers.push(401)
    const raw = await emu.sendRaw({ body: '{"events":[', headers: { 'X-Service-Signature': 'bad' } })
    expect(raw.status).toBe(401)
    expect(receiver.received[1]!.raw.toString()).toBe('{"events":[')
    expect(receiver.received[1]!.headers['x-service-signature']).toBe('bad')
    expect(receiver.received[1]!.headers['x-module-key']).toBe('switchyard-webhook')
  })

  it('keeps totals across sends', async () => {
    emu.resetCounters()
    await emu.sendPending({ limit: 10, batchSize: 5 })
    await emu.sendPending({ limit: 4, batchSize: 5 })
    expect(emu.deliveries()).toMatchObject({ batches: 3, delivered: 3 })
  })
})

describe('a confirmed arrival is not sent again by itself', () => {
  it('sends NEED_PROCESS strings once; a send-back, a Resend or redeliver sends them again', async () => {
    const first = await emu.sendPending()
    expect(first.events).toBe(60)
    // Still NEED_PROCESS (the app reported nothing), but their delivery was confirmed.
    expect((await emu.sendPending()).events).toBe(0)
    expect((await emu.sendPending({ redeliver: true })).events).toBe(60)
    expect((await emu.sendPending({ anyStatus: true, limit: 5 })).events).toBe(5)
    // A failed delivery is not a confirmation: FAILED, then Resend: sent again.
    emu.seed()
    receiver.answers.push(500, 500, 500, 500)
    const failed = await emu.sendPending({ stringIds: [emu.sample.strings[0]!.id] })
    expect(failed.failedStrings).toHaveLength(2)
    expect(emu.resend()).toBe(2)
    expect((await emu.sendPending()).events).toBe(60)
  })

  it('a string sent back is a new arrival: sent once more', async () => {
    const id = emu.sample.strings[3]!.id
    await emu.sendPending()
    emu.org().statuses.apply(id, 'de', 'approved')
    expect(emu.sendBack({ stringIds: [id] })).toHaveLength(1)
    const again = await emu.sendPending()
    expect(again.events).toBe(1)
  })
})
