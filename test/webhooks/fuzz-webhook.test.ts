// 10,000 generated requests against the real HTTP route: bodies, headers, signatures and sizes.
// The worker must stay up, queue nothing from a request that is not validly signed, and answer
// every request with a 2XX or one of the documented 4XX/5XX codes.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const DOCUMENTED = new Set([200, 400, 401, 404, 413, 503])
const LIMIT = 64 * 1024

let w: Awaited<ReturnType<typeof startTestWorker>>
const service = fakeServiceFetch()
beforeAll(async () => {
  w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, config: { bodyLimit: LIMIT, queueLimit: 100_000, reportLingerMs: 5 } })
})
afterAll(async () => {
  await w.stop()
})

const validEvent = fc.record({ stringId: fc.integer({ min: 1, max: 5000 }), languageId: fc.constantFrom('de', 'fr', 'ja'), revision: fc.integer({ min: 1, max: 3 }) }).map((o) => recalculationEvent(o))
const anyJson = fc.jsonValue({ maxDepth: 3 })
const body = fc.oneof(
  { weight: 3, arbitrary: fc.array(validEvent, { minLength: 0, maxLength: 5 }).map((events) => JSON.stringify({ events })) },
  { weight: 2, arbitrary: fc.array(fc.oneof(validEvent, anyJson, fc.record({ event: fc.string() })), { maxLength: 4 }).map((events) => JSON.stringify({ events })) },
  { weight: 2, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a).toString('latin1')) },
  { weight: 1, arbitrary: fc.integer({ min: LIMIT - 100, max: LIMIT + 2000 }).map((n) => `{"events":[],"pad":"${'x'.repeat(n)}"}`) },
)
const signature = fc.oneof(
  { weight: 4, arbitrary: fc.constant('valid') },
  { weight: 1, arbitrary: fc.constant('prefixed') },
  { weight: 1, arbitrary: fc.constant('wrong-secret') },
  { weight: 1, arbitrary: fc.constant('missing') },
  { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-f]{64}$/) },
)
const moduleKey = fc.oneof({ weight: 6, arbitrary: fc.constant('switchyard-webhook') }, { weight: 1, arbitrary: fc.constant('test-step') }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: fc.constant('') })
const request = fc.record({ body, signature, moduleKey, contentType: fc.constantFrom('application/json', 'text/plain', '') })

describe('webhook fuzz', () => {
  it('stays up, queues nothing unsigned, and answers only documented codes over 10,000 requests', async () => {
    let signedAccepted = 0
    let unsignedAccepted = 0
    const statuses = new Map<number, number>()
    const samples = fc.sample(request, { numRuns: 10_000, seed: 20261121 })
    const send = async (r: (typeof samples)[number]) => {
      const raw = Buffer.from(r.body, 'utf8')
      const headers: Record<string, string> = { 'X-Module-Key': r.moduleKey, 'X-Service-Id': '200000', 'X-Service-Domain': 'acme' }
      if (r.contentType) headers['content-type'] = r.contentType
      const valid = r.signature === 'valid' || r.signature === 'prefixed'
      if (r.signature === 'valid') headers['X-Service-Signature'] = signBody(raw, SECRET)
      else if (r.signature === 'prefixed') headers['X-Service-Signature'] = `sha256=${signBody(raw, SECRET)}`
      else if (r.signature === 'wrong-secret') headers['X-Service-Signature'] = signBody(raw, 'not-the-secret')
      else if (r.signature !== 'missing') headers['X-Service-Signature'] = r.signature.replace(/[^\x20-\x7e]/g, '')
      const res = await fetch(`${w.url}/webhooks`, { method: 'POST', headers, body: raw })
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      expect(DOCUMENTED.has(res.status), `status ${res.status} for ${JSON.stringify(r).slice(0, 200)}`).toBe(true)
      if (res.status === 200) {
        const { accepted } = (await res.json()) as { accepted: number }
        if (valid) signedAccepted += accepted
        else unsignedAccepted += accepted
      } else await res.arrayBuffer()
      if (!valid) expect(res.status).not.toBe(200)
    }
    // A few requests at a time, as a sender with parallel deliveries would.
    for (let i = 0; i < samples.length; i += 8) await Promise.all(samples.slice(i, i + 8).map(send))
    expect(unsignedAccepted).toBe(0)
    expect(statuses.get(200)).toBeGreaterThan(1000)
    expect(statuses.get(401)).toBeGreaterThan(500)
    expect(statuses.get(413)).toBeGreaterThan(50)
    await w.idle(30_000)
    // Every string the worker acknowledged was reported, superseded by a newer revision of itself
    // that was reported, or (arriving again after it was reported) absorbed because the service
    // no longer waited for it; and nothing else.
    const reported = service.patches.reduce((n, p) => n + p.ops.length, 0)
    const jobs = (await w.metrics.jobs.get()).values
    const count = (outcome: string) => jobs.filter((v) => v.labels.outcome === outcome).reduce((n, v) => n + v.value, 0)
    expect(reported + count('superseded') + count('absorbed')).toBe(signedAccepted)
    expect((await fetch(`${w.url}/healthz`)).status).toBe(200)
  }, 120_000)
})
