// A status update applied at the service though its answer was lost (a 503 from a gateway, a
// timeout) may have landed: it is not sent again as it was, but held, and checked with the service
// before an output is reported; the next request for it is refused with 403 (the token lost its
// right for a while), which holds it again, and the check still comes first. Meanwhile the string may have been sent back, fixed and returned to the step
// (platform notes, "A string comes back": each arrival is new work on the translation as it is
// now): it runs again on the fixed translation instead of getting the old output.
import { afterEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

it('a PATCH that landed (answer lost), held, then refused with 403 is checked with the service before an output is reported again', async () => {
  let phase: 'lost-then-403' | '403' | 'ok' = 'lost-then-403'
  let fixed = false
  const service = fakeServiceFetch(({ method }) => {
    if (method !== 'PATCH') return undefined
    if (phase === 'lost-then-403') {
      // The service applies the update (string 1 is DONE on `translated`), the gateway answers 503;
      // before the worker hears more, a reviewer sends the string back and the translator fixes it.
      service.fake.setStatuses(7, [{ stringId: 1, languageId: 'de', stepId: 11, status: 'DONE', output: 'translated' }])
      service.fake.setStatuses(7, [{ stringId: 1, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' }])
      fixed = true
      phase = '403'
      return { status: 503 }
    }
    if (phase === '403') return { status: 403, body: { error: { code: 403, message: 'may not update statuses' } } }
    return undefined
  })
  // The translator's text is bad on the first run, fixed afterwards: the pipeline passes it then.
  const pipelines = fakePipelines('test-step', () => (fixed ? 'approved' : 'translated'))
  const w = await startTestWorker({ pipelines, fetch: service.fetch, heldRecheckMs: 10, heldBaseDelayMs: 300 })
  running.push(w)
  ;(w.api as unknown as { baseDelayMs: number }).baseDelayMs = 5
  const body = JSON.stringify({ events: [recalculationEvent({ stringId: 1 })] })
  expect((await fetch(`${w.url}/webhooks`, signedRequest(body, SECRET))).status).toBe(200)
  await expect.poll(() => w.held.list()[0]?.cause, { timeout: 5000 }).toBe('forbidden')
  // While the organization is refused: the string (DONE) moved on, was sent back, the translator
  // fixed it, and it is waiting at the step again; the right comes back.
  service.fake.setStatuses(7, [{ stringId: 1, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' }])
  fixed = true
  phase = 'ok'
  await expect.poll(() => service.patches.length, { timeout: 10_000 }).toBeGreaterThan(0)
  await w.idle()
  // The service is asked (it waits for the string again: new work) and the pipeline runs on the
  // fixed translation: `approved`, not the held `translated`.
  expect(service.fake.statusOf(7, 11, 'de', 1)).toMatchObject({ status: 'DONE', output: 'approved' })
})
