// POST /webhooks on its own (the handler in a bare Koa app, with recording fakes of the intake and
// the metrics): the answer to every kind of request, what the operator reads in the log about it
// (with the delivery's organization, domain and batch), what is counted, and what the intake gets.
import http from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import type { IncomingJobs, IntakeResult } from '../../src/queue/intake.js'
import { createLogger } from '../../src/util/logger.js'
import { createDecodePool as createBatchDecoder } from '../../src/webhooks/decode-pool.js'
import { createWebhookHandler, INVALID_EVENTS_LOGGED } from '../../src/webhooks/receive-webhook.js'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'
import { serveHandler } from '../support/serve-handler.js'

const SECRET = 'hook-secret'
const servers: http.Server[] = []
afterEach(async () => {
  while (servers.length) await new Promise((resolve) => servers.pop()!.close(resolve))
})

interface Options {
  secrets?: string[]
  result?: IntakeResult
  level?: string
  knownModule?: boolean
  hasPipeline?: boolean
  bodyLimit?: number
  decodeError?: boolean
}

async function setup(o: Options = {}) {
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: o.level ?? 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const counted: string[] = []
  const counter = (name: string) => ({ inc: (labels: Record<string, string>, n = 1) => void counted.push(`${name} ${JSON.stringify(labels)} ${n}`) })
  const accepted: Array<{ batchId: string; jobs: IncomingJobs; encoded: { organizationId: string; domain: string; text: string } }> = []
  const others: Array<{ events: unknown[]; origin: unknown }> = []
  const secrets = o.secrets ?? [SECRET]
  const decoder = createBatchDecoder({ threads: 0, secrets })
  const handler = createWebhookHandler({
    appSecrets: () => secrets,
    decoder: o.decodeError ? { threads: 0, running: 0, close: async () => {}, decode: async () => Promise.reject(new Error('thread died')) } : decoder,
    headerPrefix: 'X-Service-',
    bodyLimit: o.bodyLimit ?? 100_000,
    log,
    metrics: { batches: counter('batches'), events: counter('events'), invalidEvents: counter('invalid') } as never,
    knownModuleKey: () => o.knownModule ?? true,
    hasPipeline: () => o.hasPipeline ?? true,
    newBatchId: () => 'batch-1',
    resolveDomain: async (organizationId, header) => (header ? `${header}.bound` : `org-${organizationId}`),
    accept: async (batchId, jobs, encoded) => {
      accepted.push({ batchId, jobs, encoded })
      return o.result ?? { status: 'accepted', accepted: jobs.count, duplicates: 0 }
    },
    otherEvents: async (events, origin) => void others.push({ events, origin }),
  })
  const served = await serveHandler(handler)
  servers.push(served.server)
  const url = served.url
  const post = async (body: string, headers: Record<string, string> = {}, sign = true) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Service-Id': '200000', 'X-Service-Domain': 'acme', 'X-Module-Key': 'switchyard-webhook', ...(sign ? { 'X-Service-Signature': signBody(body, SECRET) } : {}), ...headers }, body })
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> }
  }
  return { post, lines, counted, accepted, others, url }
}

const events = (n: number) => Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: i + 1 }))
const body = (list: unknown[]) => JSON.stringify({ events: list })

describe('POST /webhooks answers', () => {
  it('accepts a batch: the intake gets its count, origin and text, and makes jobs only when asked', async () => {
    const t = await setup()
    const res = await t.post(body(events(2)))
    expect(res).toMatchObject({ status: 200, body: { accepted: 2, duplicates: 0, events: 0, invalid: 0 } })
    const [call] = t.accepted
    expect(call!.batchId).toBe('batch-1')
    expect(call!.jobs).toMatchObject({ count: 2, organizationId: '200000', domain: 'acme.bound' })
    expect(call!.encoded).toMatchObject({ organizationId: '200000', domain: 'acme.bound' })
    expect(JSON.parse(call!.encoded.text).jobs).toHaveLength(2)
    const jobs = call!.jobs.jobs()
    expect(jobs.map((j) => [j.stringId, j.domain, j.batchId])).toEqual([[1, 'acme.bound', 'batch-1'], [2, 'acme.bound', 'batch-1']])
    expect(call!.jobs.jobs()).toBe(jobs) // made once
    expect(t.others).toEqual([]) // no other events: nothing to hand on
    expect(t.counted).toEqual(['events {"event":"string.status_on_step.recalculation_triggered"} 2', 'batches {"result":"accepted"} 1'])
    expect(t.lines).toEqual([])
  })

  it('takes the module key from the prefixed header too', async () => {
    const t = await setup()
    expect((await t.post(body(events(1)), { 'X-Module-Key': '', 'X-Service-Module-Key': 'switchyard-webhook' })).status).toBe(200)
  })

  it('hands other events on with the origin, counts them by label, and says how many', async () => {
    const t = await setup()
    const res = await t.post(body([{ event: 'project.translated', projectId: 7 }, { event: 'made.up' }, ...events(1)]))
    expect(res.body).toMatchObject({ accepted: 1, events: 2 })
    expect(t.others).toEqual([{ events: [{ event: 'project.translated', projectId: 7 }, { event: 'made.up' }], origin: { organizationId: '200000', domain: 'acme.bound', batchId: 'batch-1' } }])
    expect(t.counted).toContain('events {"event":"project.translated"} 1')
    expect(t.counted).toContain('events {"event":"other"} 1')
  })

  it('counts and logs each event it cannot use, saying whether its string is parked', async () => {
    const t = await setup()
    const noText = recalculationEvent({ stringId: 9 }) as { stringStatus: { translation: Record<string, unknown> } }
    delete noText.stringStatus.translation.text
    const res = await t.post(body([noText, 42, ...events(1)]))
    expect(res.body).toMatchObject({ invalid: 2 })
    expect(t.counted).toContain('invalid {"result":"parked"} 1')
    expect(t.counted).toContain('invalid {"result":"logged"} 1')
    const warnings = t.lines.filter((l) => l.level === 40)
    expect(warnings[0]).toMatchObject({ index: 0, parked: true, organization: '200000', domain: 'acme', delivery: 'batch-1' })
    expect(warnings[0]!.msg).toBe('event 0 of the delivery cannot be used (/events/0/stringStatus/translation: missing field "text"); its string is reported with "" (parked as TODO)')
    expect(warnings[1]).toMatchObject({ index: 1, parked: false })
    expect(warnings[1]!.msg).toBe('event 1 of the delivery cannot be used (/events/1: not an event object with a name); it names no string to report')
  })

  // A delivery of thousands of unusable events wrote a warning for each: the log flooded, the
  // lines that matter lost among them. The first few are logged, the rest counted in one line.
  it('logs the first INVALID_EVENTS_LOGGED unusable events one by one and the rest in one line, counting all', async () => {
    const t = await setup()
    const noText = (stringId: number) => {
      const e = recalculationEvent({ stringId }) as { stringStatus: { translation: Record<string, unknown> } }
      delete e.stringStatus.translation.text
      return e
    }
    const res = await t.post(body([...Array.from({ length: 30 }, (_, i) => noText(100 + i)), ...Array.from({ length: 20 }, () => 42), ...events(1)]))
    expect(res.body).toMatchObject({ accepted: 31, invalid: 50 })
    expect(t.counted.filter((c) => c === 'invalid {"result":"parked"} 1')).toHaveLength(30)
    expect(t.counted.filter((c) => c === 'invalid {"result":"logged"} 1')).toHaveLength(20)
    const warnings = t.lines.filter((l) => l.level === 40)
    expect(warnings).toHaveLength(INVALID_EVENTS_LOGGED + 1)
    expect(warnings.slice(0, INVALID_EVENTS_LOGGED).map((w) => w.index)).toEqual(Array.from({ length: INVALID_EVENTS_LOGGED }, (_, i) => i))
    expect(warnings.at(-1)).toMatchObject({ notLogged: 40, parked: 20, delivery: 'batch-1' })
    expect(warnings.at(-1)!.msg).toBe('40 more events of the delivery cannot be used (not logged one by one; counted in switchyard_webhook_invalid_events_total): 20 of them reported with "" (parked as TODO), the others name no string to report')
  })

  it('refuses a request without signature or module key with 400, and counts it', async () => {
    const t = await setup()
    expect(await t.post(body(events(1)), {}, false)).toMatchObject({ status: 400, body: { code: 'missing_signature', message: 'missing X-Service-Signature header', expose: true } })
    expect(await t.post(body(events(1)), { 'X-Module-Key': '' })).toMatchObject({ status: 400, body: { code: 'missing_module_key', message: 'missing X-Module-Key header' } })
    expect(t.counted).toEqual(['batches {"result":"missing_signature"} 1', 'batches {"result":"missing_module_key"} 1'])
    expect(t.accepted).toEqual([])
  })

  it('refuses everything with 401 when no secret is configured, and tells the operator what to set', async () => {
    const t = await setup({ secrets: [] })
    expect(await t.post(body(events(1)))).toMatchObject({ status: 401, body: { code: 'no_secret', message: 'webhook signatures cannot be verified: the worker has no app secret configured' } })
    expect(t.lines.find((l) => l.level === 50)).toMatchObject({ organization: '200000', domain: 'acme', msg: 'a webhook arrived but no APP_SECRET is configured: set APP_SECRET to the app secret the service shows for this app' })
  })

  it('refuses a body over the limit with 413, by its declared length or as it is read', async () => {
    const t = await setup({ bodyLimit: 50 })
    const big = body(events(1))
    expect(await t.post(big)).toMatchObject({ status: 413, body: { code: 'too_large', message: `body of ${Buffer.byteLength(big)} bytes is over the limit of 50` } })
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close() } })
    const res = await fetch(t.url, { method: 'POST', headers: { 'X-Service-Signature': signBody(big, SECRET), 'X-Module-Key': 'k' }, body: stream, duplex: 'half' } as RequestInit)
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ code: 'too_large', message: 'body is over the limit of 50 bytes' })
    const exact = await setup({ bodyLimit: Buffer.byteLength(big) })
    expect((await exact.post(big)).status).toBe(200)
  })

  it('counts a delivery cut off in the middle of its body (the sender hung up) as bad_body, and takes nothing from it', async () => {
    const t = await setup()
    const whole = body(events(1))
    const server = servers.at(-1)!
    const arrived = new Promise((resolve) => server.once('request', () => setImmediate(resolve)))
    const req = http.request(t.url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(whole)), 'X-Service-Signature': signBody(whole, SECRET), 'X-Module-Key': 'k' } })
    req.on('error', () => undefined)
    req.write(whole.slice(0, 20))
    await arrived
    req.destroy()
    while (t.counted.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(t.counted).toEqual(['batches {"result":"bad_body"} 1'])
    expect(t.accepted).toEqual([])
  })

  it('says which secret to check when a signature does not match', async () => {
    const t = await setup()
    const res = await t.post(body(events(1)), { 'X-Service-Signature': 'sha256=' + '0'.repeat(64), 'X-Module-Key': 'my-module' })
    expect(res).toMatchObject({ status: 401, body: { code: 'bad_signature' } })
    const warning = t.lines.find((l) => l.level === 40)
    expect(warning).toMatchObject({ moduleKey: 'my-module', bytes: Buffer.byteLength(body(events(1))), organization: '200000' })
    expect(warning!.msg).toMatch(/^webhook signature does not match: check that APP_SECRET holds this organization's app secret/)
  })

  it('says to add a secret for an organization that has none, and names the id header of a mismatch', async () => {
    const unknown = await setup({ secrets: ['1001=other'] })
    expect((await unknown.post(body(events(1)))).body).toMatchObject({ code: 'unknown_organization' })
    expect(unknown.lines.find((l) => l.level === 40)).toMatchObject({ bytes: Buffer.byteLength(body(events(1))), msg: 'a webhook arrived from an organization with no app secret here: add ORG_ID=SECRET for it to APP_SECRET' })
    const mismatch = await setup({ secrets: [`200000=${SECRET}`] })
    const res = await mismatch.post(body([recalculationEvent({ stringId: 1, organizationId: '300' })]))
    expect(res.body).toMatchObject({ code: 'organization_mismatch' })
    expect(mismatch.lines.find((l) => l.level === 40)!.bytes).toBe(Buffer.byteLength(body([recalculationEvent({ stringId: 1, organizationId: '300' })])))
    expect(mismatch.lines.find((l) => l.level === 40)!.msg).toMatch(/^a signed webhook names another organization than its X-Service-Id header: refused \(the delivery claims organization "200000"/)
  })

  it('warns of nothing for a body that is not JSON or not a batch: the answer says it all', async () => {
    const t = await setup()
    expect((await t.post('{"events": [')).body).toMatchObject({ code: 'malformed_json' })
    expect((await t.post(JSON.stringify({ items: [] }))).body).toMatchObject({ code: 'invalid_batch' })
    expect(t.lines).toEqual([])
  })

  it('cuts long module keys short in its answers and lines', async () => {
    const key = 'k'.repeat(150)
    const cut = 'k'.repeat(100)
    const unknown = await setup({ knownModule: false })
    expect((await unknown.post(body(events(1)), { 'X-Module-Key': key })).body).toMatchObject({ code: 'unknown_module', message: `no module with key "${cut}"` })
    expect(unknown.lines.find((l) => l.level === 40)).toMatchObject({ moduleKey: cut, msg: `webhook for module key "${cut}" that no pipeline declares` })
    const badSignature = await setup()
    await badSignature.post(body(events(1)), { 'X-Module-Key': key, 'X-Service-Signature': 'sha256=' + '0'.repeat(64) })
    expect(badSignature.lines.find((l) => l.level === 40)!.moduleKey).toBe(cut)
    const orphan = await setup({ hasPipeline: false })
    expect((await orphan.post(body([recalculationEvent({ stringId: 1, moduleKey: key })]))).status).toBe(200)
    expect(orphan.lines.find((l) => l.level === 40)).toMatchObject({ moduleKey: cut })
    expect(orphan.lines.find((l) => l.level === 40)!.msg).toMatch(new RegExp(`^strings arrived for module key "${cut}" that no pipeline declares`))
  })

  it('names the decoded organization (cut short) and the delivery in lines after decoding, also when it logged before', async () => {
    const organization = '8'.repeat(80)
    const t = await setup({ hasPipeline: false })
    const noText = recalculationEvent({ stringId: 9, organizationId: organization }) as { stringStatus: { translation: Record<string, unknown> } }
    delete noText.stringStatus.translation.text
    const res = await t.post(body([recalculationEvent({ stringId: 1, organizationId: organization }), noText]), { 'X-Service-Id': organization, 'X-Service-Domain': 'd'.repeat(250) })
    expect(res).toMatchObject({ status: 200, body: { accepted: 2, invalid: 1 } }) // the invalid one parked
    // The domain header goes to the domain lookup cut to 200 characters.
    expect(t.accepted[0]!.jobs.domain).toBe('d'.repeat(200) + '.bound')
    const [orphan, invalid] = t.lines.filter((l) => l.level === 40)
    expect(orphan!.msg).toMatch(/^strings arrived for module key "test-step"/)
    expect(orphan!.delivery).toBeUndefined()
    expect(invalid).toMatchObject({ index: 1, organization: '8'.repeat(64), delivery: 'batch-1' })
    // The same with no line before decoding: the first line is made from the decoded organization.
    const quiet = await setup()
    await quiet.post(body([recalculationEvent({ stringId: 1, organizationId: organization }), noText]), { 'X-Service-Id': organization })
    expect(quiet.lines.find((l) => l.level === 40)).toMatchObject({ index: 1, organization: '8'.repeat(64), delivery: 'batch-1' })
  })

  it('answers 500 when decoding fails, for the service to deliver again', async () => {
    const t = await setup({ decodeError: true })
    expect(await t.post(body(events(1)))).toMatchObject({ status: 500, body: { code: 'decode_failed', message: 'the worker could not decode the batch; deliver it again' } })
    const error = t.lines.find((l) => l.level === 50)
    expect(error).toMatchObject({ msg: 'decoding the webhook failed', bytes: Buffer.byteLength(body(events(1))) })
    expect(JSON.stringify(error)).toContain('thread died')
  })

  it('refuses a module key no pipeline declares with 404, and warns about strings for one without a pipeline', async () => {
    const unknown = await setup({ knownModule: false })
    expect(await unknown.post(body(events(1)), { 'X-Module-Key': 'nobody' })).toMatchObject({ status: 404, body: { code: 'unknown_module', message: 'no module with key "nobody"' } })
    expect(unknown.lines.find((l) => l.level === 40)).toMatchObject({ moduleKey: 'nobody', msg: 'webhook for module key "nobody" that no pipeline declares' })
    const orphan = await setup({ hasPipeline: false })
    expect((await orphan.post(body(events(1)))).status).toBe(200)
    expect(orphan.lines.find((l) => l.level === 40)).toMatchObject({ moduleKey: 'test-step' })
    expect(orphan.lines.find((l) => l.level === 40)!.msg).toMatch(/^strings arrived for module key "test-step" that no pipeline declares/)
  })

  it('answers 503 with Retry-After when the intake is busy, saying why', async () => {
    const full = await setup({ result: { status: 'busy', retryAfterSeconds: 60, reason: 'the backlog is full' } })
    expect(await full.post(body(events(2)))).toMatchObject({ status: 503, retryAfter: '60', body: { code: 'busy', message: 'the backlog is full; retry later' } })
    expect(full.lines.find((l) => l.level === 40)).toMatchObject({ strings: 2, retryAfter: 60, delivery: 'batch-1', msg: 'batch refused with 503: the backlog is full' })
    expect(full.counted).toContain('batches {"result":"busy"} 1')
    expect(full.counted).not.toContain('batches {"result":"accepted"} 1')
    const stopping = await setup({ result: { status: 'busy', retryAfterSeconds: 5 } })
    expect(await stopping.post(body(events(1)))).toMatchObject({ status: 503, retryAfter: '5', body: { message: 'the worker is stopping; retry later' } })
    expect(stopping.lines.find((l) => l.level === 30)).toMatchObject({ retryAfter: 5, msg: 'stopping: the listener has closed; batch refused with 503' })
  })

  it('names the organization and domain of the headers in its lines, cut short, and the domain of a delivery without one', async () => {
    const t = await setup({ knownModule: false })
    await t.post(body(events(1)), { 'X-Service-Id': '9'.repeat(100), 'X-Service-Domain': 'd'.repeat(300) })
    expect(t.lines[0]).toMatchObject({ organization: '9'.repeat(64), domain: 'd'.repeat(100) })
    const bare = await setup({ knownModule: false })
    await bare.post(body(events(1)), { 'X-Service-Id': '', 'X-Service-Domain': '' })
    expect(bare.lines[0]!.organization).toBeUndefined()
    expect(bare.lines[0]!.domain).toBeUndefined()
    const noDomain = await setup()
    await noDomain.post(body(events(1)), { 'X-Service-Domain': '' })
    expect(noDomain.accepted[0]!.jobs.domain).toBe('org-200000')
  })

  it('logs an accepted batch at debug level', async () => {
    const t = await setup({ level: 'debug' })
    await t.post(body([{ event: 'project.translated' }, ...events(2)]))
    expect(t.lines.find((l) => l.msg === 'batch accepted')).toMatchObject({ accepted: 2, duplicates: 0, events: 1, invalid: 0, delivery: 'batch-1' })
  })
})
