// A slow run of an older revision (an AI check) ends after the newer revision was reported and the
// memory of it has gone (DEDUPE_TTL_MS, or DEDUPE_MAX finished strings: at 5,000 strings/s, 100,000
// finish in 20 s): its output is not reported over the newer one's. Before, whether it was current
// was decided from the de-duplication memory only, and it was PATCHed last.
import { afterEach, expect, it } from 'vitest'
import type { Pipeline } from '../../src/engine/pipeline.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const delivery = (stringId: number, revision: number, text: string) => JSON.stringify({ events: [recalculationEvent({ stringId, revision, text })] })

it('a slow run of revision 1 is not reported after revision 2 was reported and forgotten', async () => {
  const service = fakeServiceFetch()
  const pipelines = fakePipelines('test-step', (item) => (item.source === 'Old text' ? 'translated' : 'approved'))
  const p = pipelines.current.get('test-step') as Pipeline
  const run = p.run.bind(p)
  p.run = async (items, o) => {
    if (items.some((i) => i.source === 'Old text')) await new Promise((r) => setTimeout(r, 2000))
    return run(items, o)
  }
  const w = await startTestWorker({ pipelines, fetch: service.fetch, config: { dedupeTtlMs: 200 } })
  running.push(w)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(5, 1, 'Old text'), SECRET))).status).toBe(200)
  await new Promise((r) => setTimeout(r, 100))
  expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(5, 2, 'New text'), SECRET))).status).toBe(200)
  await expect.poll(() => service.fake.statusOf(7, 11, 'de', 5)?.output, { timeout: 5000, interval: 10 }).toBe('approved')
  await new Promise((r) => setTimeout(r, 400))
  // Other traffic: the memory of finished strings is trimmed as strings arrive.
  expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(6, 1, 'Other'), SECRET))).status).toBe(200)
  await w.idle(15_000)
  expect(service.patches.flatMap((x) => x.ops).filter((o) => o.path === '/5/output').map((o) => o.value)).toEqual(['approved'])
}, 30_000)
