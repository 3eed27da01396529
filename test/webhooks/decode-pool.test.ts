// The ingest threads (issue 9): a body decoded in a thread of the pool gets exactly the answer it
// gets inline, for good batches and for every kind of bad one; bodies from 16 KB go to a thread,
// smaller ones stay inline, and the pool says which way each went (switchyard_webhook_decodes_total);
// the bytes are moved, not copied, and only when the Buffer owns all of its memory.
import { afterEach, describe, expect, it } from 'vitest'
import { createDecodePool, decodeThreadFile, type DecodedWhere, type DecodePool, type DecodePoolOptions } from '../../src/webhooks/decode-pool.js'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'

const SECRET = 'decoder-secret'
const open: DecodePool[] = []
afterEach(async () => {
  while (open.length) await open.pop()!.close()
})

// The threads run the build's copy of decode-thread.ts (dist/): the vitest global set-up builds
// it; Stryker's sandbox has it only when dist/ is copied in (docs/testing.md), and without it
// every body is decoded inline and the tests of the thread side are skipped.
const built = decodeThreadFile() !== undefined

/** A pool that records where each body went, and what it warned. */
function pool(options: Partial<DecodePoolOptions> = {}) {
  const went: DecodedWhere[] = []
  const warnings: string[] = []
  const decoder = createDecodePool({ threads: 2, secrets: [SECRET], count: (where) => void went.push(where), warn: (m) => void warnings.push(m), ...options })
  open.push(decoder)
  return { decoder, went, warnings }
}

function decoders() {
  const threaded = pool({ inlineBelow: 0 })
  const inline = pool({ threads: 0 })
  return { threaded: threaded.decoder, inline: inline.decoder, went: { threaded: threaded.went, inline: inline.went } }
}

/** A body of its own memory (as raw-body returns a large one). */
const own = (text: string) => {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(text))
  b.write(text)
  return b
}

const events = (n: number) => Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: i + 1, text: `Save ${i} files — ok` }))
const badEvent = () => {
  const e = recalculationEvent({ stringId: 9 }) as { stringStatus: { translation: Record<string, unknown> } }
  delete e.stringStatus.translation.project
  return e
}

const cases: Array<[string, string, string?]> = [
  ['a good batch, with an event that is not a string', JSON.stringify({ events: [...events(150), { event: 'project.translated', projectId: 7 }] })],
  ['a bad signature', JSON.stringify({ events: events(3) }), 'sha256=' + '0'.repeat(64)],
  ['malformed JSON', '{"events": [' + '{"a":1},'.repeat(3000)],
  ['a batch without events', JSON.stringify({ items: events(2) })],
  ['an invalid string event', JSON.stringify({ events: [...events(2), badEvent()] })],
]

describe('batch decoder', () => {
  it.each(cases)('answers %s the same in a thread as inline', async (_name, body, signature) => {
    const { threaded, inline, went } = decoders()
    const sig = signature ?? signBody(body, SECRET)
    const a = await threaded.decode(own(body), sig)
    const b = await inline.decode(own(body), sig)
    expect(a).toEqual(b)
    expect(went).toEqual({ threaded: [built ? 'thread' : 'inline'], inline: ['inline'] })
  })

  it('decodes a good batch into jobs, module keys and event counts', async () => {
    const { threaded } = decoders()
    const body = cases[0]![1]
    const result = await threaded.decode(own(body), signBody(body, SECRET))
    if (!result.ok) throw new Error(result.message)
    // No X-…-Id header given: the organization is the one the events name.
    expect(result.organizationId).toBe('200000')
    expect(result.count).toBe(150)
    expect(result.moduleKeys).toEqual(['test-step'])
    expect(result.eventCounts).toEqual(new Map([['string.status_on_step.recalculation_triggered', 150], ['project.translated', 1]]))
    expect(result.others).toEqual([{ event: 'project.translated', projectId: 7 }])
    const decoded = JSON.parse(result.jobs) as { languages: unknown[]; jobs: unknown[][] }
    expect(decoded.languages).toHaveLength(2)
    expect(decoded.jobs[3]![10]).toBe('Save 3 files — ok')
  })

  it('decodes inline with no secret (everything is refused)', async () => {
    const { decoder: none, went, warnings } = pool({ secrets: [], inlineBelow: 0 })
    expect(none.threads).toBe(0)
    expect(await none.decode(own('{}'), 'x')).toMatchObject({ ok: false, status: 401, code: 'unknown_organization' })
    expect(went).toEqual(['inline'])
    // Threads were asked for: without the build's thread module (Stryker's sandbox without dist/)
    // the operator is told so, once, when the pool is made.
    expect(warnings).toEqual(built ? [] : ['the ingest thread module is missing (run the build); webhooks are decoded on the main thread'])
  })

  it('decodes everything inline with no threads (INGEST_THREADS=0), large bodies too, and warns of nothing', async () => {
    const { decoder, went, warnings } = pool({ threads: 0 })
    expect(decoder.threads).toBe(0)
    const body = padded(JSON.stringify({ events: events(2) }), 64 * 1024)
    const result = await decoder.decode(own(body), signBody(body, SECRET))
    expect(result).toMatchObject({ ok: true, organizationId: '200000', count: 2 })
    expect(went).toEqual(['inline'])
    expect(warnings).toEqual([])
  })
})

/** Resolves once `ok()` holds; fails the test after 5 s. */
async function waitFor(ok: () => boolean): Promise<void> {
  const until = Date.now() + 5000
  while (!ok()) {
    if (Date.now() > until) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** `json` with trailing spaces (still the same JSON) up to `length` bytes. */
const padded = (json: string, length: number) => {
  expect(Buffer.byteLength(json)).toBeLessThanOrEqual(length)
  return json + ' '.repeat(length - Buffer.byteLength(json))
}

describe.skipIf(!built)('batch decoder: which bodies go to a thread', () => {
  it('sends bodies of 16 KB and more to a thread and decodes smaller ones inline, with the same answers', async () => {
    const { decoder, went, warnings } = pool()
    expect(decoder.threads).toBe(2)
    const json = JSON.stringify({ events: events(3) })
    for (const length of [Buffer.byteLength(json), 16 * 1024 - 1, 16 * 1024, 20_000]) {
      const body = padded(json, length)
      const result = await decoder.decode(own(body), signBody(body, SECRET))
      expect(result).toMatchObject({ ok: true, organizationId: '200000', count: 3 })
    }
    expect(went).toEqual(['inline', 'inline', 'thread', 'thread'])
    expect(warnings).toEqual([])
  })

  it('takes another size to go to a thread (inlineBelow): that size and more do', async () => {
    const { decoder, went } = pool({ inlineBelow: 2000 })
    const json = JSON.stringify({ events: events(1) })
    for (const length of [1999, 2000]) {
      const body = padded(json, length)
      expect(await decoder.decode(own(body), signBody(body, SECRET))).toMatchObject({ ok: true, count: 1 })
    }
    expect(went).toEqual(['inline', 'thread'])
  })

  // Issue 16: an idle thread waits in Atomics.wait, where V8 never collects, so it kept its heap
  // and the last bodies it decoded for as long as the worker ran.
  it('stops a thread idle for idleMs and starts one again for the next large body, with the same answers', async () => {
    const { decoder, went } = pool({ inlineBelow: 0, idleMs: 100 })
    const body = JSON.stringify({ events: events(2) })
    expect(decoder.running).toBe(0)
    const first = await decoder.decode(own(body), signBody(body, SECRET))
    expect(first).toMatchObject({ ok: true, count: 2 })
    expect(decoder.running).toBe(1)
    await waitFor(() => decoder.running === 0)
    expect(await decoder.decode(own(body), signBody(body, SECRET))).toEqual(first)
    expect(decoder.running).toBe(1)
    expect(went).toEqual(['thread', 'thread'])
  })

  it('keeps its threads with idleMs 0', async () => {
    const { decoder } = pool({ inlineBelow: 0, idleMs: 0 })
    const body = JSON.stringify({ events: events(2) })
    await decoder.decode(own(body), signBody(body, SECRET))
    await new Promise((r) => setTimeout(r, 300))
    expect(decoder.running).toBe(1)
  })

  it('passes the organization header on to the thread', async () => {
    const { decoder, went } = pool({ inlineBelow: 0 })
    const body = JSON.stringify({ events: events(2) })
    expect(await decoder.decode(own(body), signBody(body, SECRET), '200000')).toMatchObject({ ok: true, organizationId: '200000' })
    expect(await decoder.decode(own(body), signBody(body, SECRET), '31337')).toMatchObject({ ok: false, status: 401, code: 'organization_mismatch' })
    expect(await decoder.decode(own(body), signBody(body, SECRET))).toMatchObject({ ok: true, organizationId: '200000' })
    expect(went).toEqual(['thread', 'thread', 'thread'])
  })

  it('moves a Buffer that owns its memory, and copies one that shares Node’s pool', async () => {
    const { decoder } = pool({ inlineBelow: 0 })
    const body = JSON.stringify({ events: events(2) })
    const moved = own(body)
    expect(await decoder.decode(moved, signBody(body, SECRET))).toMatchObject({ ok: true, count: 2 })
    expect(moved.buffer.byteLength).toBe(0)

    const pooled = Buffer.from(body)
    const neighbour = Buffer.from('still here')
    expect(pooled.buffer).toBe(neighbour.buffer)
    const result = await decoder.decode(pooled, signBody(body, SECRET))
    expect(result.ok).toBe(true)
    expect(pooled.toString()).toBe(body)
    expect(neighbour.toString()).toBe('still here')
  })

  it('copies a Buffer that is only part of its memory, leaving the rest where it was', async () => {
    const { decoder, went } = pool({ inlineBelow: 0 })
    const body = JSON.stringify({ events: events(2) })
    const sig = signBody(body, SECRET)
    // The body after 8 bytes of something else, and the body followed by something else.
    const after = Buffer.allocUnsafeSlow(8 + Buffer.byteLength(body))
    after.write('before: ')
    after.write(body, 8)
    const tail = after.subarray(8)
    expect(await decoder.decode(tail, sig)).toMatchObject({ ok: true, count: 2 })
    expect(after.buffer.byteLength).toBe(8 + Buffer.byteLength(body))
    expect(after.toString()).toBe('before: ' + body)

    const before = Buffer.allocUnsafeSlow(Buffer.byteLength(body) + 7)
    before.write(body)
    before.write(' :after', Buffer.byteLength(body))
    const head = before.subarray(0, Buffer.byteLength(body))
    expect(await decoder.decode(head, sig)).toMatchObject({ ok: true, count: 2 })
    expect(before.toString()).toBe(body + ' :after')
    expect(went).toEqual(['thread', 'thread'])
  })
})

describe('webhook handler when decoding fails', () => {
  it('answers 500 (the service delivers again), logs it and accepts nothing', async () => {
    const Koa = (await import('koa')).default
    const { createWebhookHandler } = await import('../../src/webhooks/receive-webhook.js')
    const { createMetrics } = await import('../../src/util/metrics.js')
    const { silentLogger } = await import('../../src/util/logger.js')
    const accepted: unknown[] = []
    const log = silentLogger()
    const errors: unknown[] = []
    log.error = ((...args: unknown[]) => void errors.push(args)) as typeof log.error
    const app = new Koa()
    app.use(
      createWebhookHandler({
        appSecrets: () => [SECRET],
        decoder: { threads: 1, running: 1, decode: () => Promise.reject(new Error('worker thread exited')), close: async () => undefined },
        headerPrefix: 'X-Service-',
        bodyLimit: 1 << 20,
        log,
        metrics: createMetrics(),
        knownModuleKey: () => true,
        hasPipeline: () => true,
        newBatchId: () => 'b1',
        resolveDomain: async (_id, domain) => domain,
        accept: async (...args) => {
          accepted.push(args)
          return { status: 'accepted', accepted: 0, duplicates: 0 }
        },
        otherEvents: async () => undefined,
      }),
    )
    const server = app.listen(0, '127.0.0.1')
    await new Promise((r) => server.once('listening', r))
    try {
      const { port } = server.address() as { port: number }
      const body = JSON.stringify({ events: events(2) })
      const res = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        body,
        headers: { 'X-Service-Signature': signBody(body, SECRET), 'X-Module-Key': 'test-step', 'content-type': 'application/json' },
      })
      expect(res.status).toBe(500)
      expect(await res.text()).toMatch(/could not decode the batch; deliver it again/)
      expect(accepted).toHaveLength(0)
      expect(errors).toHaveLength(1)
    } finally {
      await new Promise((r) => server.close(r))
    }
  })
})
