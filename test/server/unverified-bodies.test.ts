// Bytes nobody signed cost bounded memory (issue 17): only UNVERIFIED_BODIES bodies are read at
// once (the rest get 503 + Retry-After before their body is read), and uploads or headers that
// stall are cut off by the server's timeouts. Real sockets on 127.0.0.1.
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  while (running.length) await running.pop()!.stop()
})

async function worker(config = {}) {
  const w = await startTestWorker({ pipelines: fakePipelines(), fetch: fakeServiceFetch().fetch, config })
  running.push(w)
  return w
}

/** A client that sends the headers of a 5 MB signed-looking upload, then a little, then stalls. */
function stalledUpload(url: string): Promise<Socket & { received: () => string; ended: Promise<number> }> {
  const { port } = new URL(url)
  const s = connect(Number(port), '127.0.0.1')
  sockets.push(s)
  let data = ''
  s.on('data', (d) => (data += d.toString()))
  s.on('error', () => undefined)
  const started = Date.now()
  const closed = new Promise<number>((r) => s.on('close', () => r(Date.now() - started)))
  return new Promise((resolve) => {
    s.on('connect', () => {
      s.write(
        'POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Service-Signature: 00\r\nX-Module-Key: test-step\r\n' +
          `Content-Length: ${5 * 1024 * 1024}\r\n\r\n{"events":[`,
      )
      resolve(Object.assign(s, { received: () => data, ended: closed }))
    })
  })
}

const batch = () => JSON.stringify({ events: [recalculationEvent({ stringId: 1 })] })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('unverified bodies', { timeout: 15_000 }, () => {
  it('reads at most UNVERIFIED_BODIES bodies at once; the next gets 503 + Retry-After after UNVERIFIED_WAIT_MS', async () => {
    const w = await worker({ unverifiedBodies: 2, unverifiedWaitMs: 200 })
    await stalledUpload(w.url)
    await stalledUpload(w.url)
    await sleep(100)
    const started = Date.now()
    const res = await fetch(`${w.url}/webhooks`, signedRequest(batch(), SECRET))
    expect(res.status).toBe(503)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('a delivery past the bound waits for a slot rather than being refused', async () => {
    const w = await worker({ unverifiedBodies: 2, unverifiedWaitMs: 5000 })
    const a = await stalledUpload(w.url)
    await stalledUpload(w.url)
    await sleep(100)
    const pending = fetch(`${w.url}/webhooks`, signedRequest(batch(), SECRET))
    await sleep(300)
    a.destroy()
    expect((await pending).status).toBe(200)
  })

  it('cuts off a stalled upload after REQUEST_TIMEOUT_MS, freeing its slot', async () => {
    const w = await worker({ unverifiedBodies: 1, headersTimeoutMs: 300, requestTimeoutMs: 1000 })
    const s = await stalledUpload(w.url)
    const ms = await s.ended
    expect(ms).toBeLessThan(3000)
    expect(s.received()).toMatch(/^HTTP\/1.1 408/)
    const res = await fetch(`${w.url}/webhooks`, signedRequest(batch(), SECRET))
    expect(res.status).toBe(200)
  })

  it('cuts off a client that never finishes its headers after HEADERS_TIMEOUT_MS', async () => {
    const w = await worker({ headersTimeoutMs: 300, requestTimeoutMs: 1000 })
    const { port } = new URL(w.url)
    const s = connect(Number(port), '127.0.0.1')
    sockets.push(s)
    s.on('error', () => undefined)
    s.resume()
    const started = Date.now()
    const closed = new Promise<number>((r) => s.on('close', () => r(Date.now() - started)))
    s.on('connect', () => s.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '))
    expect(await closed).toBeLessThan(2500)
  })

  it('defaults fit a service that waits 30 s and a real batch', () => {
    const c = loadConfig({})
    expect(c.requestTimeoutMs).toBeLessThanOrEqual(30_000)
    expect(c.headersTimeoutMs).toBeLessThanOrEqual(c.requestTimeoutMs)
    // A batch of tens of thousands of strings is taken; unverified bytes in memory stay bounded
    // (larger bodies go to disk while they are read, large-body.ts).
    expect(c.bodyLimit).toBeGreaterThanOrEqual(100 * 1024 * 1024)
    expect(c.bodyMemoryLimit).toBeLessThan(c.bodyLimit)
    expect(c.bodyMemoryLimit * c.unverifiedBodies).toBeLessThanOrEqual(128 * 1024 * 1024)
  })
})
