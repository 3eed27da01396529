// An older revision's status update being retried inside the API client (503, Retry-After) when
// a newer revision of the string is decided: the newer one goes only after it, so the service
// receives the newest output last (before, the older one's retry landed after the newer one).
import { afterEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const delivery = (revision: number, text: string) => JSON.stringify({ events: [recalculationEvent({ stringId: 5, revision, text })] })

it('an older revision whose PATCH is retried is not sent after the newer revision was reported', async () => {
  let first = true
  const service = fakeServiceFetch(({ method }) => {
    if (method !== 'PATCH' || !first) return undefined
    first = false
    return { status: 503, body: { error: { code: 503, message: 'busy' } }, headers: { 'retry-after': '2' } }
  })
  const pipelines = fakePipelines('test-step', (item) => (item.source === 'Old text' ? 'translated' : 'approved'))
  const w = await startTestWorker({ pipelines, fetch: service.fetch })
  running.push(w)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(1, 'Old text'), SECRET))).status).toBe(200)
  // Revision 1's PATCH got 503 and waits out its Retry-After in the API client.
  await expect.poll(() => service.fake.requestsTo('status', 'PATCH').length, { timeout: 5000, interval: 10 }).toBe(1)
  expect((await fetch(`${w.url}/webhooks`, signedRequest(delivery(2, 'New text'), SECRET))).status).toBe(200)
  await w.idle(15_000)
  const sent = service.patches.flatMap((p) => p.ops.map((o) => o.value))
  // The newest revision's output must be the last one the service received (and the old one is not needed at all).
  expect(sent.at(-1)).toBe('approved')
  expect(service.fake.statusOf(7, 11, 'de', 5)?.output).toBe('approved')
}, 30_000)

it('what an error that is no answer of the service means: held (the token store failing), parked (an error of the code itself)', async () => {
  const { verdictOf } = await import('../../src/platform/reporter.js')
  expect(verdictOf(new Error('could not write the tokens'))).toEqual({ kind: 'hold', cause: 'unavailable' })
  expect(verdictOf(new TypeError("Cannot read properties of undefined (reading 'x')"))).toEqual({ kind: 'park' })
  expect(verdictOf(new RangeError('Maximum call stack size exceeded'))).toEqual({ kind: 'park' })
})

it('only the strings with an earlier update under way wait for it; the others of their group go at once', async () => {
  const { Reporter } = await import('../../src/platform/reporter.js')
  const { createLogger } = await import('../../src/util/logger.js')
  const sent: string[] = []
  let release!: () => void
  const first = new Promise<void>((r) => (release = r))
  const api = {
    patchStatuses: async (_d: string, _p: number, _s: number, _l: string, ops: Array<{ path: string; value: string }>) => {
      sent.push(ops.map((o) => `${o.path}=${o.value}`).join(' '))
      if (sent.length === 1) await first
    },
  }
  const reported: string[] = []
  const reporter = new Reporter({
    api: api as never, log: createLogger({ level: 'silent' }), lingerMs: 1,
    hooks: { reported: (ds) => void reported.push(ds.map((d) => `${d.job.stringId}@${d.job.revision}`).join(' ')), superseded: () => {}, rejected: () => {}, dropped: () => {}, parked: () => {}, held: () => {} },
  })
  const j = (stringId: number, revision: number) => ({ domain: 'acme', projectId: 7, stepId: 11, languageId: 'de', stringId, revision, organizationId: '1' }) as never
  reporter.add({ job: j(1, 1), port: 'old' })
  await expect.poll(() => sent.length).toBe(1)
  reporter.add({ job: j(1, 2), port: 'new' })
  reporter.add({ job: j(2, 1), port: 'ok' })
  await expect.poll(() => sent.length).toBe(2)
  expect(sent).toEqual(['/1/output=old', '/2/output=ok'])
  release()
  await reporter.flush()
  expect(sent).toEqual(['/1/output=old', '/2/output=ok', '/1/output=new'])
  expect(reported).toEqual(['2@1', '1@1', '1@2'])
})
