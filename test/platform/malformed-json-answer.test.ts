// A 2XX whose body is not JSON (a proxy's HTML page, a body cut short) on a read made for a
// group (the translations, or the recheck's GET status) is no answer: tried again like a network
// error, the strings held as unavailable and reported by themselves once the API answers, never
// parked until a restart (before: a SyntaxError, taken as a refusal, parked them).
import { afterEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const body = JSON.stringify({ events: [recalculationEvent({ stringId: 5, revision: 1, text: 'Text' })] })

async function run(fault: () => Response) {
  let broken = true
  const service = fakeServiceFetch(undefined, { translations: { de: { 5: { text: 'Texte' } } } })
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input)
    if (broken && url.includes('/translations')) return fault()
    return service.fetch(input, init)
  }) as typeof fetch
  const pipelines = fakePipelines('test-step', () => 'approved', { needsTranslation: true })
  const w = await startTestWorker({ pipelines, fetch: fetchImpl, heldRecheckMs: 50, heldBaseDelayMs: 200, config: { apiMaxAttempts: 2 } })
  running.push(w)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))).status).toBe(200)
  // Both attempts of the group fail (about 2 s apart), then the API answers properly again.
  await expect.poll(() => w.stats().parked + w.held.count(), { timeout: 10_000, interval: 20 }).toBeGreaterThan(0)
  broken = false
  // The service still waits for the string: it must be reported without a restart.
  await expect.poll(() => service.fake.statusOf(7, 11, 'de', 5)?.status, { timeout: 10_000, interval: 50 }).toBe('DONE')
}

it('control: 503 on the translations read, then the API recovers: the string is reported by itself', async () => {
  await run(() => new Response(JSON.stringify({ error: { code: 503, message: 'down' } }), { status: 503 }))
}, 40_000)

it('200 with a body that is not JSON on the translations read, then the API recovers: the string is reported by itself', async () => {
  await run(() => new Response('<html><body>Bad gateway</body></html>', { status: 200, headers: { 'content-type': 'text/html' } }))
}, 40_000)
