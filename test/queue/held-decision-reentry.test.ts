// A status update applied by the service whose answer was lost (504 from a gateway after the
// backend applied it) is held as unavailable with its output. The string, DONE at the service, is
// sent back, fixed by the translator and comes back to the step with the same revision while the
// organization is still held. When the hold ends it runs on its current translation: a decision
// held after an outage is checked with the service first (platform notes, "A string comes back":
// "Each arrival is new work, on the translation as it is now"), where before the old decision was
// PATCHed and the new arrival absorbed as its duplicate.
import { afterEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const body = JSON.stringify({ events: [recalculationEvent({ stringId: 5, revision: 1, text: 'Text' })] })

it('a string that came back during a hold runs on its current translation, not on the held decision', async () => {
  let lossy = true
  const translations = { de: { 5: { text: 'bad' } } as Record<number, { text: string }> }
  const service = fakeServiceFetch(undefined, { translations })
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await service.fetch(input, init)
    // Applied at the service, but the answer is lost on the way back.
    if (lossy && init?.method === 'PATCH') return new Response('gateway timeout', { status: 504 })
    return response
  }) as typeof fetch
  const pipelines = fakePipelines('test-step', (item) => (item.translation === 'good' ? 'approved' : 'translated'), { needsTranslation: true })
  const w = await startTestWorker({ pipelines, fetch: fetchImpl, heldRecheckMs: 50, heldBaseDelayMs: 3000, config: { apiMaxAttempts: 2 } })
  running.push(w)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))).status).toBe(200)
  await expect.poll(() => w.held.cause('acme'), { timeout: 10_000, interval: 10 }).toBe('unavailable')
  expect(service.fake.statusOf(7, 11, 'de', 5)).toMatchObject({ status: 'DONE', output: 'translated' })
  lossy = false
  // A reviewer sends it back, the translator fixes it, it reaches the step again (same revision).
  translations.de[5]!.text = 'good'
  service.fake.setStatuses(7, [{ stringId: 5, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' }])
  expect((await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))).status).toBe(200)
  await expect.poll(() => w.held.cause('acme'), { timeout: 10_000, interval: 20 }).toBeUndefined()
  await w.idle(15_000)
  // The new arrival must be processed on the fixed translation.
  expect(service.fake.statusOf(7, 11, 'de', 5)).toMatchObject({ status: 'DONE', output: 'approved' })
}, 40_000)
