// Signed but odd content must not break a batch on every delivery (issue 17): event names that
// are Object.prototype's own, a non-string event nested 100,000 deep, a string event whose
// language record holds such a field, and a flood of made-up event names that would otherwise
// each become a metric label.
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decodeBatch } from '../../src/webhooks/decode-batch.js'
import { eventLabel } from '../../src/webhooks/event-label.js'
import { CUT_MARKER } from '../../src/webhooks/limit-depth.js'
import { decodeJobs } from '../../src/queue/job-codec.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { SECRET } from '../support/start-test-worker.js'
import { webhookWorkers } from '../support/webhook-workers.js'

const { worker } = webhookWorkers()

const deep = (depth: number) => `{"event":"project.translated","payload":${'['.repeat(depth)}${']'.repeat(depth)}}`

describe('hostile but signed events', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    it(`an event named ${name} is accepted with the batch`, async () => {
      const { post } = await worker()
      const body = JSON.stringify({ events: [{ event: name }, recalculationEvent({ stringId: 1 }), { event: name }] })
      const res = await post(body)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ accepted: 1, events: 2 })
    })
  }

  for (const threads of [0, 2]) {
    it(`a non-string event nested 100,000 deep is cut, and the batch kept (INGEST_THREADS=${threads})`, async () => {
      const { w, post } = await worker({ ingestThreads: threads })
      const body = `{"events":[${JSON.stringify(recalculationEvent({ stringId: 9 }))},${deep(100_000).slice(0, -1)}}]}`
      const res = await post(body)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ accepted: 1, events: 1 })
      await w.idle()
    })
  }

  // The language records are kept whole for plugins (fields we don't know included), so a field
  // nested 100,000 deep in one overflowed the stack when the jobs were encoded: 500 on every try.
  const withDeepLanguage = (stringId: number, field: 'extra' | 'name') => {
    const event = recalculationEvent({ stringId }) as { stringStatus: { affectedLanguage: Record<string, unknown> } }
    event.stringStatus.affectedLanguage[field] = '__DEEP__'
    return JSON.stringify(event).replace('"__DEEP__"', '['.repeat(100_000) + ']'.repeat(100_000))
  }

  for (const threads of [0, 2]) {
    it(`a language record with a field nested 100,000 deep is cut, and its string worked on (INGEST_THREADS=${threads})`, async () => {
      const { w, service, post } = await worker({ ingestThreads: threads })
      const body = `{"events":[${JSON.stringify(recalculationEvent({ stringId: 8 }))},${withDeepLanguage(9, 'extra')}]}`
      const res = await post(body)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ accepted: 2 })
      await w.idle()
      const reported = service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort()
      expect(reported).toEqual(['/8/output', '/9/output'])
    })
  }

  it('the decoder cuts a language record\'s deep field, keeping the rest of the record', () => {
    for (const field of ['extra', 'name'] as const) {
      const raw = Buffer.from(`{"events":[${withDeepLanguage(4, field)}]}`)
      const r = decodeBatch(raw, sign(raw), [SECRET])
      expect(r.ok).toBe(true)
      if (!r.ok) return
      expect(() => structuredClone(r)).not.toThrow()
      const [job] = decodeJobs(r.jobs, { organizationId: '', domain: '', batchId: 'b' })
      expect(job!.targetLanguage).toMatchObject({ id: 'de', locale: expect.any(String) })
      expect(JSON.stringify((job!.targetLanguage as unknown as Record<string, unknown>)[field])).toContain(CUT_MARKER)
      expect(job!.sourceLanguage.id).toBe('en')
    }
  })

  it('the decoder cuts a deep event to a bounded depth that survives structuredClone', () => {
    const raw = Buffer.from(`{"events":[${deep(100_000)}]}`)
    const r = decodeBatch(raw, sign(raw), [SECRET])
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(() => structuredClone(r)).not.toThrow()
    expect(r.eventCounts).toBeInstanceOf(Map)
  })

  it('metric labels come from a fixed set: made-up names count as "other"', async () => {
    const { w, post } = await worker()
    const names = Array.from({ length: 50 }, (_, i) => ({ event: `made.up.${i}` }))
    const res = await post(JSON.stringify({ events: [...names, { event: 'project.translated' }, recalculationEvent({ stringId: 3 })] }))
    expect(res.status).toBe(200)
    const text = await w.metrics.registry.getSingleMetricAsString('switchyard_webhook_events_total')
    expect(text).not.toMatch(/made\.up/)
    expect(text).toMatch(/event="other"} 50/)
    expect(text).toMatch(/event="project.translated"} 1/)
    expect(eventLabel('constructor')).toBe('other')
    expect(eventLabel('string.status_on_step.recalculation_triggered')).toBe('string.status_on_step.recalculation_triggered')
  })
})

function sign(raw: Buffer): string {
  return createHmac('sha256', SECRET).update(raw).digest('hex')
}
