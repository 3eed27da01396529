// POST /webhooks with a body over BODY_MEMORY_LIMIT (large-body.ts): written to a file as it
// arrives, verified from the digests computed on the way, then decoded in slices, each journaled
// as a batch of its own. The service's batches have no documented size; refusing a large signed
// one would cost its strings (FAILED after the service's retries). Every refusal must leave no
// file behind and nothing accepted.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { IncomingJobs, IntakeResult } from '../../src/queue/intake.js'
import { createLogger } from '../../src/util/logger.js'
import { createDecodePool, decodeThreadFile } from '../../src/webhooks/decode-pool.js'
import { createWebhookHandler } from '../../src/webhooks/receive-webhook.js'
import { decodeSpooled, SpoolError } from '../../src/webhooks/large-body.js'
import { createHmac } from 'node:crypto'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'
import { serveHandler } from '../support/serve-handler.js'

const SECRET = 'hook-secret'
const cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!()
})

interface Options {
  secrets?: string[]
  bodyLimit?: number
  /** The intake's answer to the nth accept (0-based); accepted otherwise. */
  busyAt?: number
  refusal?: string
  threads?: number
  /** Where bodies go (default: a fresh directory). */
  dir?: string
}

async function setup(o: Options = {}) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'switchyard-large-'))
  cleanup.push(() => rmSync(base, { recursive: true, force: true }))
  const dir = o.dir ?? base
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const counted: string[] = []
  const counter = (name: string) => ({ inc: (labels: Record<string, string>, n = 1) => void counted.push(`${name} ${JSON.stringify(labels)} ${n}`) })
  const accepted: Array<{ batchId: string; jobs: IncomingJobs }> = []
  const others: Array<{ events: unknown[]; batchId: string }> = []
  const asked: Array<[string, number]> = []
  const secrets = o.secrets ?? [SECRET]
  const decoder = createDecodePool({ threads: o.threads ?? 0, secrets, inlineBelow: 1024 })
  cleanup.push(() => decoder.close())
  let ids = 0
  const handler = createWebhookHandler({
    appSecrets: () => secrets,
    decoder,
    headerPrefix: 'X-Service-',
    bodyLimit: o.bodyLimit ?? 10_000_000,
    spool: { memoryLimit: 20_000, dir, sliceBytes: 16_000 },
    log,
    metrics: { batches: counter('batches'), events: counter('events'), invalidEvents: counter('invalid') } as never,
    knownModuleKey: () => true,
    hasPipeline: () => true,
    newBatchId: () => `batch-${++ids}`,
    resolveDomain: async (_organizationId, header) => header,
    accept: async (batchId, jobs): Promise<IntakeResult> => {
      if (accepted.length === o.busyAt) return { status: 'busy', retryAfterSeconds: 60, reason: 'the backlog on disk is full' }
      accepted.push({ batchId, jobs })
      return { status: 'accepted', accepted: jobs.count, duplicates: 0 }
    },
    refusal: (organization, bytes) => {
      asked.push([organization, bytes])
      return o.refusal
    },
    otherEvents: async (events, origin) => void others.push({ events, batchId: origin.batchId }),
  })
  const served = await serveHandler(handler)
  cleanup.push(served.close)
  const url = served.url
  /** POST `body`; `chunked` sends it without a Content-Length, in pieces. */
  const post = async (body: string, o2: { headers?: Record<string, string>; secret?: string; chunked?: boolean } = {}) => {
    const headers = { 'content-type': 'application/json', 'X-Service-Id': '200000', 'X-Service-Domain': 'acme', 'X-Module-Key': 'switchyard-webhook', 'X-Service-Signature': signBody(body, o2.secret ?? SECRET), ...o2.headers }
    const payload = o2.chunked ? chunks(Buffer.from(body)) : body
    const res = await fetch(url, { method: 'POST', headers, body: payload, ...(o2.chunked ? { duplex: 'half' } : {}) } as RequestInit)
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> }
  }
  const strings = () => accepted.flatMap((a) => a.jobs.jobs().map((j) => j.stringId))
  return { post, lines, counted, accepted, others, asked, strings, files: () => readdirSync(dir), url }
}

function chunks(bytes: Buffer): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.subarray(at, at + 7_000))
      at += 7_000
    },
  })
}

const events = (n: number, from = 1) => Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: from + i }))
const body = (list: unknown[]) => JSON.stringify({ events: list })
const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

describe('POST /webhooks with a body over BODY_MEMORY_LIMIT', () => {
  it('accepts it in slices, every string once and in order, and leaves no file', async () => {
    const t = await setup()
    const text = body(events(60))
    expect(Buffer.byteLength(text)).toBeGreaterThan(100_000) // over the memory limit five times
    const res = await t.post(text)
    expect(res).toMatchObject({ status: 200, body: { accepted: 60, duplicates: 0, events: 0, invalid: 0 } })
    expect(t.accepted.length).toBeGreaterThan(4)
    expect(t.strings()).toEqual(ids(60))
    expect(new Set(t.accepted.map((a) => a.batchId)).size).toBe(t.accepted.length)
    expect(t.accepted.every((a) => a.jobs.organizationId === '200000' && a.jobs.domain === 'acme')).toBe(true)
    // The budget was asked once for all of it, before the first part.
    expect(t.asked).toHaveLength(1)
    expect(t.asked[0]![0]).toBe('200000')
    expect(t.counted.filter((c) => c.startsWith('batches'))).toEqual(['batches {"result":"accepted"} 1'])
    expect(t.files()).toEqual([])
    // Asked once, the parts are not refused one by one (intake.ts).
    expect(t.accepted.every((a) => a.jobs.admitted === true)).toBe(true)
  })

  it('does the same through the ingest threads', async (ctx) => {
    if (!decodeThreadFile()) ctx.skip()
    const t = await setup({ threads: 2 })
    expect((await t.post(body(events(60)))).status).toBe(200)
    expect(t.strings()).toEqual(ids(60))
  })

  it('spools a body of unknown length once it passes the limit, and keeps a small one in memory', async () => {
    const t = await setup()
    expect((await t.post(body(events(40)), { chunked: true })).body).toMatchObject({ accepted: 40 })
    expect(t.accepted.length).toBeGreaterThan(1)
    const small = await setup()
    expect((await small.post(body(events(3)), { chunked: true })).body).toMatchObject({ accepted: 3 })
    expect(small.accepted).toHaveLength(1)
  })

  it('reports unusable and other events with their index in the whole delivery', async () => {
    const t = await setup()
    const list: unknown[] = events(50)
    const noText = recalculationEvent({ stringId: 99 }) as { stringStatus: { translation: Record<string, unknown> } }
    delete noText.stringStatus.translation.text
    list.splice(45, 0, noText, { event: 'project.translated', projectId: 7 })
    const res = await t.post(body(list))
    expect(res.body).toMatchObject({ accepted: 51, events: 1, invalid: 1 })
    const warning = t.lines.find((l) => l.level === 40)
    expect(warning).toMatchObject({ index: 45, parked: true, delivery: 'batch-1' })
    expect(warning!.msg).toContain('event 45 of the delivery cannot be used (/events/45/stringStatus/translation: missing field "text")')
    expect(t.others).toHaveLength(1)
    expect(t.others[0]!.events).toEqual([{ event: 'project.translated', projectId: 7 }])
  })

  it('refuses a bad signature with 401 once the body is read: nothing parsed, no file left', async () => {
    const t = await setup()
    const res = await t.post(body(events(60)), { secret: 'not-the-secret' })
    expect(res).toMatchObject({ status: 401, body: { code: 'bad_signature' } })
    expect(t.accepted).toEqual([])
    expect(t.files()).toEqual([])
  })

  it('refuses an organization with no secret before reading the body', async () => {
    const t = await setup({ secrets: ['1=other-secret'] })
    const res = await t.post(body(events(60)))
    expect(res).toMatchObject({ status: 401, body: { code: 'unknown_organization' } })
    expect(t.files()).toEqual([])
  })

  it('refuses a body of unknown length with 413 when it passes BODY_LIMIT as it is written', async () => {
    const t = await setup({ bodyLimit: 60_000 })
    const res = await t.post(body(events(60)), { chunked: true })
    expect(res).toMatchObject({ status: 413, body: { code: 'too_large', message: 'body is over the limit of 60000 bytes' } })
    expect(t.accepted).toEqual([])
    expect(t.files()).toEqual([])
  })

  it('refuses the whole delivery when a later slice names another organization', async () => {
    const t = await setup()
    const res = await t.post(body([...events(50), recalculationEvent({ stringId: 51, organizationId: '300000' })]))
    expect(res).toMatchObject({ status: 401, body: { code: 'organization_mismatch' } })
    expect(res.body.message).toContain('event 50 is from "300000"')
    expect(t.accepted).toEqual([])
  })

  it('answers 503 without journaling anything when the budget refuses the whole delivery', async () => {
    const t = await setup({ refusal: 'the backlog on disk is full' })
    const res = await t.post(body(events(60)))
    expect(res).toMatchObject({ status: 503, retryAfter: '60', body: { code: 'busy' } })
    expect(t.accepted).toEqual([])
  })

  it('answers 503 when a later part is refused (the worker closing), and says the parts before it were journaled', async () => {
    const t = await setup({ busyAt: 2 })
    const res = await t.post(body(events(60)))
    expect(res).toMatchObject({ status: 503, body: { code: 'busy' } })
    expect(t.accepted).toHaveLength(2)
    expect(t.lines.find((l) => l.level === 40)!.msg).toMatch(/^batch refused with 503: the backlog on disk is full \(the first 2 of its \d+ parts were journaled; their strings sent again are absorbed as repeats\)$/)
  })

  it('slices a batch with other members and any spacing, and decodes one of another shape whole', async () => {
    const t = await setup()
    const spaced = JSON.stringify({ sentAt: 'now', events: events(40), more: { n: [1, 2] } }, null, 2)
    expect((await t.post(spaced)).body).toMatchObject({ accepted: 40 })
    expect(t.accepted.length).toBeGreaterThan(1)
    expect(t.strings()).toEqual(ids(40))
    // `events` twice: decoded whole, which refuses it (JSON.parse would keep only the last).
    const twice = await setup()
    expect(await twice.post(`{"events":[],${body(events(40)).slice(1)}`)).toMatchObject({ status: 400, body: { code: 'invalid_batch' } })
    expect(twice.accepted).toHaveLength(0)
    expect(twice.files()).toEqual([])
    const broken = await setup()
    const res = await broken.post(body(events(40)).replace('"events":[{', '"events":[{,'))
    expect(res).toMatchObject({ status: 400, body: { code: 'malformed_json' } })
    expect(broken.files()).toEqual([])
  })

  it('answers 503 (never 400) and tells the operator when the body cannot be written to disk', async () => {
    const blocker = path.join(mkdtempSync(path.join(os.tmpdir(), 'switchyard-large-')), 'incoming')
    writeFileSync(blocker, 'a file where the directory should be')
    cleanup.push(() => rmSync(path.dirname(blocker), { recursive: true, force: true }))
    const t = await setup({ dir: blocker })
    const res = await t.post(body(events(60)))
    expect(res).toMatchObject({ status: 503, retryAfter: '60', body: { code: 'spool_failed', message: 'the worker could not store the body; deliver it again' } })
    expect(t.accepted).toEqual([])
    const error = t.lines.find((l) => l.level === 50)
    expect(error!.msg).toMatch(/^a webhook body over BODY_MEMORY_LIMIT could not be stored on disk \(could not create .*\): check that DATA_DIR\/incoming is writable and has room/)
  })

  it('takes a large body only from a delivery that names its organization (its secrets alone are hashed)', async () => {
    const t = await setup()
    const text = body(events(60))
    const named = await t.post(text, { headers: { 'X-Service-Id': '' } })
    expect(named).toMatchObject({ status: 413, body: { code: 'too_large' } })
    expect(named.body.message).toContain('without an organization id header')
    expect((await t.post(text, { headers: { 'X-Service-Id': '' }, chunked: true })).status).toBe(413)
    expect((await t.post(body(events(3)), { headers: { 'X-Service-Id': '' }, chunked: true })).status).toBe(200)
    expect(t.files()).toEqual([])
  })

  it('leaves no file when the sender hangs up mid-body', async () => {
    const t = await setup()
    const text = body(events(60))
    const { port } = new URL(t.url)
    await new Promise<void>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/webhooks', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'X-Service-Id': '200000', 'X-Module-Key': 'switchyard-webhook', 'X-Service-Signature': signBody(text, SECRET) } })
      req.on('error', () => resolve())
      req.write(text.slice(0, 50_000), () => setTimeout(() => req.destroy(), 50))
      req.on('close', () => resolve())
    })
    for (let i = 0; i < 50 && t.files().length; i++) await new Promise((r) => setTimeout(r, 20))
    expect(t.files()).toEqual([])
    expect(t.accepted).toEqual([])
  })
})

describe('decodeSpooled', () => {
  const spooledOf = (received: string, onDisk: string) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-large-'))
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'body-1')
    writeFileSync(file, onDisk)
    const digests = [createHmac('sha256', SECRET).update(received).digest()]
    return { file, size: Buffer.byteLength(received), digests, remove: async () => rmSync(file, { force: true }) }
  }

  it('refuses to decode bytes read back that are not the bytes received (a disk that lost or changed some)', async () => {
    const decoder = createDecodePool({ threads: 0, secrets: [SECRET] })
    const received = body(events(30))
    const twice = `{"events":[],${received.slice(1)}` // not sliceable: decoded whole
    const cases: Array<[string, string]> = [
      [received, received.replace('Text 17', 'Text 71')], // a byte changed
      [received, body(events(29))], // an event lost
      [twice, twice.replace('Text 17', 'Text 71')], // whole
    ]
    for (const [got, onDisk] of cases) {
      await expect(decodeSpooled(spooledOf(got, onDisk), signBody(got, SECRET), [SECRET], '200000', decoder, 4096)).rejects.toBeInstanceOf(SpoolError)
    }
    // The same bytes on disk as received: decoded, in slices or whole.
    const parts = await decodeSpooled(spooledOf(received, received), signBody(received, SECRET), [SECRET], '200000', decoder, 4096)
    expect(Array.isArray(parts) && parts.length).toBeGreaterThan(1)
    expect(await decodeSpooled(spooledOf(twice, twice), signBody(twice, SECRET), [SECRET], '200000', decoder, 4096)).toMatchObject({ ok: false, code: 'invalid_batch' })
  })
})
