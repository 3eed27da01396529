// QUEUE=bullmq with the queue on its own Redis (QUEUE_REDIS_URL) beside another store: when that
// Redis goes away the worker cannot take a webhook, and /readyz must say so (docs/deployment.md:
// "200 when the worker can take webhooks (store reachable, ...)").
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/util/free-port.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { serviceAvailable } from '../support/services.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const hasRedis = await serviceAvailable('redis')
/** redis-server, to start a Redis of its own and kill it (it comes with the Redis the suite needs; .ci/run installs it). */
const redisServer = spawnSync('redis-server', ['--version']).status === 0
if (hasRedis && !redisServer && !process.env.CI) console.warn('skipped: the queue Redis readiness test needs the redis-server command to start a Redis of its own')

// Under CI a missing redis-server fails the test rather than skipping it.
describe.skipIf(!hasRedis || (!redisServer && !process.env.CI))('QUEUE=bullmq: the queue\'s own Redis goes away', () => {
  let redis: ChildProcess | undefined
  let port = 0
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined

  beforeAll(async () => {
    port = await freePort()
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    const kill = () => redis?.kill('SIGKILL')
    process.once('exit', kill)
    for (let i = 0; i < 100; i++) {
      const up = await fetch(`http://127.0.0.1:${port}`).then(() => true, (e: Error & { cause?: { code?: string } }) => e.cause?.code !== 'ECONNREFUSED')
      if (up) break
      await sleep(50)
    }
    worker = await startTestWorker({ pipelines: fakePipelines(), config: { queue: 'bullmq', queueName: 'readiness', queueRedisUrl: `redis://127.0.0.1:${port}` } })
  })

  afterAll(async () => {
    await worker?.stop({ deadlineMs: 500 }).catch(() => undefined)
    redis?.kill('SIGKILL')
  })

  it('is ready with it; without it, not ready, and a webhook gets a 5XX in seconds', async () => {
    let before = 0
    for (let i = 0; i < 100 && before !== 200; i++) {
      if (i) await sleep(50)
      before = (await fetch(`${worker!.url}/readyz`)).status
    }
    expect(before).toBe(200)
    redis!.kill('SIGKILL')
    await new Promise((r) => redis!.once('exit', r))
    await sleep(300)
    const body = JSON.stringify({ events: [recalculationEvent({ stringId: 1 })] })
    const t0 = Date.now()
    const hook = await fetch(`${worker!.url}/webhooks`, { ...signedRequest(body, SECRET, { moduleKey: 'switchyard-webhook' }), signal: AbortSignal.timeout(40_000) }).then((r) => r.status, (e: Error) => `no answer: ${e.name}`)
    const waited = Date.now() - t0
    const after = await fetch(`${worker!.url}/readyz`, { signal: AbortSignal.timeout(10_000) })
    const checks = (await after.json()) as Record<string, unknown>
    // The webhook was not taken (there is nowhere to put it) ...
    expect(hook).not.toBe(200)
    // ... and readiness says the worker cannot take webhooks.
    expect({ status: after.status, checks }).toMatchObject({ status: 503, checks: { checks: { queue: false } } })
    // The webhook is answered with a 5XX (the service delivers it again), not left hanging past
    // the service's 30 s (docs/reliability.md: "If the journal write fails, the answer is a 5XX").
    expect(String(hook)).toMatch(/^5/)
    expect(waited).toBeLessThan(15_000)
  }, 90_000)
})
