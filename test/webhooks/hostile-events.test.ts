// Signed but odd content must not break a batch on every delivery (issue 17): event names that
// are Object.prototype's own, a non-string event nested 100,000 deep, and a flood of made-up
// event names that would otherwise each become a metric label.
import { createHmac } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeBatch } from '../../src/webhooks/decode-batch.js'
import { eventLabel } from '../../src/webhooks/event-label.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

async function worker(config = {}) {
  const w = await startTestWorker({ pipelines: fakePipelines(), fetch: fakeServiceFetch().fetch, config })
  running.push(w)
  return { w, post: (body: string) => fetch(`${w.url}/webhooks`, signedRequest(body, SECRET)) }
}

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
