// Correctly signed bodies that JSON.parse reads without complaint but whose value is not what the
// sender wrote: `events` given twice (the last one wins, the first one's strings were dropped while
// the batch was answered 200), and ids a JSON number cannot hold (1e400 parses to Infinity, which
// Ajv counts as an integer and which was reported as "/null/output"; 9007199254740993 parses to
// 9007199254740992, another string's id, which was reported in its place).
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decodeBatch } from '../../src/webhooks/decode-batch.js'
import { errorOf, recalculationEvent, signedRequest } from '../support/events.js'
import { SECRET } from '../support/start-test-worker.js'
import { webhookWorkers } from '../support/webhook-workers.js'

const workers = webhookWorkers()

async function worker(config = {}) {
  const { w, service, post } = await workers.worker(config)
  const reported = () => service.patches.flatMap((p) => p.ops.map((o) => `${o.path}=${JSON.stringify(o.value)}`)).sort()
  return { w, reported, post }
}

const event = (stringId: number, o: { revision?: number } = {}) => JSON.stringify(recalculationEvent({ stringId, ...o }))
const sign = (raw: Buffer) => createHmac('sha256', SECRET).update(raw).digest('hex')

describe('a batch with "events" twice', () => {
  for (const threads of [0, 2]) {
    it(`is refused whole with 400, nothing journaled (INGEST_THREADS=${threads})`, async () => {
      const { w, reported, post } = await worker({ ingestThreads: threads })
      for (const body of [`{"events":[${event(1)}],"events":[${event(2)}]}`, `{ "events": [${event(3)}], "ev\\u0065nts": [${event(4)}] }`]) {
        const res = await post(body)
        expect(res.status).toBe(400)
        expect(await errorOf(res)).toMatchObject({ code: 'invalid_batch', message: expect.stringContaining('"events" is given twice') })
      }
      await w.idle()
      expect(reported()).toEqual([])
    })
  }

  it('a body over BODY_MEMORY_LIMIT (decoded whole, the cutter cannot vouch for it) is refused the same way', async () => {
    const { w, reported, post } = await worker({ bodyMemoryLimit: 64 * 1024 })
    const res = await post(`{"events":[${event(5)}],"pad":"${'x'.repeat(100 * 1024)}","events":[${event(6)}]}`)
    expect(res.status).toBe(400)
    expect((await errorOf(res)).code).toBe('invalid_batch')
    await w.idle()
    expect(reported()).toEqual([])
  })

  it('"events" once, with another member that holds the word, is a batch as before', () => {
    const raw = Buffer.from(`{"note":"events","events":[${event(7)}],"x":{"events":[]}}`)
    const r = decodeBatch(raw, sign(raw), [SECRET])
    expect(r).toMatchObject({ ok: true, count: 1 })
  })
})

describe('ids and revisions a JSON number cannot hold', () => {
  const withNumber = (stringId: number, path: 'id' | 'project' | 'step' | 'revision', literal: string) => {
    const json = event(stringId, { revision: 424242 })
    if (path === 'id') return json.replace(`"id":${stringId},`, `"id":${literal},`)
    if (path === 'project') return json.replace('"project":{"id":7,', `"project":{"id":${literal},`)
    if (path === 'step') return json.replace('"workflowStep":{"id":11,', `"workflowStep":{"id":${literal},`)
    return json.replace('"revision":424242', `"revision":${literal}`)
  }

  for (const literal of ['1e400', '9007199254740993']) {
    for (const path of ['id', 'project', 'step'] as const) {
      it(`a string ${path === 'id' ? '' : `${path} `}id of ${literal} is an unusable event, logged; the others are worked on`, async () => {
        const { w, reported, post } = await worker()
        const body = `{"events":[${event(1)},${withNumber(2, path, literal)},${event(3)}]}`
        expect(body).toContain(literal)
        const res = await post(body)
        expect(res.status).toBe(200)
        expect(await res.json()).toMatchObject({ accepted: 2, invalid: 1 })
        await w.idle()
        // Never another string's id, a step or project it is not of, nor "/null/output".
        expect(reported()).toEqual(['/1/output="approved"', '/3/output="approved"'])
      })
    }
  }

  for (const literal of ['1e400', '9007199254740993', '-1e400']) {
    it(`a revision of ${literal} parks the string with "" (its ids are known); the others are worked on`, async () => {
      const { w, reported, post } = await worker()
      const res = await post(`{"events":[${event(1)},${withNumber(2, 'revision', literal)}]}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ accepted: 2, invalid: 1 })
      await w.idle()
      expect(reported()).toEqual(['/1/output="approved"', '/2/output=""'])
    })
  }

  it('1.1e1 is the id 11, as JSON reads it', () => {
    const raw = Buffer.from(`{"events":[${withNumber(11, 'id', '1.1e1')}]}`)
    expect(decodeBatch(raw, sign(raw), [SECRET])).toMatchObject({ ok: true, count: 1, invalid: [] })
  })
})
