// The intake across a restart: the new process does not remember what the last one finished, so
// for as long as that memory would have lasted, a string it does not know is checked with the
// service before it runs; a first start (nothing recorded) takes new strings as new.
import { afterEach, describe, expect, it } from 'vitest'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { tempDir } from '../durability/harness.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const batch = (ids: number[]) => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId })) })

describe('Intake after a restart', () => {
  it('checks with the service a string the last process finished, and does not report it again', async () => {
    const data = tempDir('intake-restart')
    const storeUrl = `sqlite://${data.dir}/state.sqlite`
    try {
      const service = fakeServiceFetch()
      const tokens = new StaticTokenProvider(new Map([['*', 'token']]))
      const first = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, tokens, config: { storeUrl } })
      expect((await fetch(`${first.url}/webhooks`, signedRequest(batch([1, 2]), SECRET))).status).toBe(200)
      await first.idle()
      await first.stop()
      await first.stores.close()
      expect(service.patches.flatMap((p) => p.ops)).toHaveLength(2)

      const second = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, tokens, config: { storeUrl } })
      running.push({ stop: async () => { await second.stop(); await second.stores.close() } })
      await second.replayed
      // The same delivery again (a sender's retry), and a string never seen.
      expect((await fetch(`${second.url}/webhooks`, signedRequest(batch([1, 2, 3]), SECRET))).status).toBe(200)
      await second.idle()
      expect(service.patches.flatMap((p) => p.ops.map((o) => o.path))).toEqual(['/1/output', '/2/output', '/3/output'])
      expect(await second.metrics.registry.metrics()).toMatch(/switchyard_status_rechecks_total\{status="DONE"\} 2/)
    } finally {
      data.remove()
    }
  })

  it('a first start takes new strings as new: no status check', async () => {
    const service = fakeServiceFetch()
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch })
    running.push(w)
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch([5]), SECRET))).status).toBe(200)
    await w.idle()
    expect(service.fake.requestsTo('status', 'GET')).toHaveLength(0)
    expect(service.patches.flatMap((p) => p.ops)).toHaveLength(1)
  })
})
