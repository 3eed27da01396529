// The ingest threads (issue 9): a body decoded in a thread of the pool gets exactly the answer it
// gets inline, for good batches and for every kind of bad one; the bytes are moved, not copied,
// and only when the Buffer owns its memory.
import { afterEach, describe, expect, it } from 'vitest'
import { createDecodePool, type DecodePool } from '../../src/webhooks/decode-pool.js'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'

const SECRET = 'decoder-secret'
const open: DecodePool[] = []
afterEach(async () => {
  while (open.length) await open.pop()!.close()
})

function decoders() {
  const threaded = createDecodePool({ threads: 2, secrets: [SECRET], inlineBelow: 0 })
  const inline = createDecodePool({ threads: 0, secrets: [SECRET] })
  open.push(threaded, inline)
  return { threaded, inline }
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
    const { threaded, inline } = decoders()
    const sig = signature ?? signBody(body, SECRET)
    const a = await threaded.decode(own(body), sig)
    const b = await inline.decode(own(body), sig)
    expect(a).toEqual(b)
  })

  it('decodes a good batch into jobs, module keys and event counts', async () => {
    const { threaded } = decoders()
    const body = cases[0]![1]
    const result = await threaded.decode(own(body), signBody(body, SECRET))
    if (!result.ok) throw new Error(result.message)
    expect(result.count).toBe(150)
    expect(result.moduleKeys).toEqual(['test-step'])
    expect(result.eventCounts).toEqual(new Map([['string.status_on_step.recalculation_triggered', 150], ['project.translated', 1]]))
    expect(result.others).toEqual([{ event: 'project.translated', projectId: 7 }])
    const decoded = JSON.parse(result.jobs) as { languages: unknown[]; jobs: unknown[][] }
    expect(decoded.languages).toHaveLength(2)
    expect(decoded.jobs[3]![10]).toBe('Save 3 files — ok')
  })

  // Stryker's sandbox has no dist/, so there is no thread module and bodies are decoded inline
  // (which is what lets it mutate the decoding); nothing is moved there.
  it.skipIf(process.env.STRYKER_MUTATOR_WORKER !== undefined)('moves a Buffer that owns its memory, and copies one that shares Node’s pool', async () => {
    const { threaded } = decoders()
    const body = JSON.stringify({ events: events(2) })
    const moved = own(body)
    await threaded.decode(moved, signBody(body, SECRET))
    expect(moved.buffer.byteLength).toBe(0)

    const pooled = Buffer.from(body)
    const neighbour = Buffer.from('still here')
    expect(pooled.buffer).toBe(neighbour.buffer)
    const result = await threaded.decode(pooled, signBody(body, SECRET))
    expect(result.ok).toBe(true)
    expect(pooled.toString()).toBe(body)
    expect(neighbour.toString()).toBe('still here')
  })

  it('decodes inline with no secret (everything is refused) or no threads', async () => {
    const none = createDecodePool({ threads: 2, secrets: [] })
    open.push(none)
    expect(none.threads).toBe(0)
    expect(await none.decode(own('{}'), 'x')).toMatchObject({ ok: false, status: 401, code: 'unknown_organization' })
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
        decoder: { threads: 1, decode: () => Promise.reject(new Error('worker thread exited')), close: async () => undefined },
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
