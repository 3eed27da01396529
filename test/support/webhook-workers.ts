// Workers for webhook tests: each with the fake pipelines and a fake service that records what it
// is sent, stopped after each test of the file that calls `webhookWorkers()`.
import { afterEach } from 'vitest'
import { signedRequest } from './events.js'
import { fakePipelines, fakeServiceFetch } from './fake-pipelines.js'
import { SECRET, startTestWorker } from './start-test-worker.js'

export function webhookWorkers() {
  const running: Array<{ stop(): Promise<void> }> = []
  afterEach(async () => {
    while (running.length) await running.pop()!.stop()
  })
  async function worker(config = {}) {
    const service = fakeServiceFetch()
    const w = await startTestWorker({ pipelines: fakePipelines(), fetch: service.fetch, config })
    running.push(w)
    return {
      w,
      service,
      /** POST a body signed with the test secret. */
      post: (body: string) => fetch(`${w.url}/webhooks`, signedRequest(body, SECRET)),
      /** POST as given. */
      send: (init: RequestInit) => fetch(`${w.url}/webhooks`, init),
    }
  }
  return { worker, running }
}
