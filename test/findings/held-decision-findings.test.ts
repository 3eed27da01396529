// A string held after its pipeline ran (its organization's status updates refused with 403 for a
// while, or its API down past the retries) is reported later with the output decided then, not
// run again. Its findings must come with it: once the service accepts that status, the findings
// log says why, the issue of a string sent back is raised, and the issue of a string that passed
// is resolved (docs/findings.md: "An issue is raised or resolved only after the service accepted
// the status update of its string"). Before, a held decision kept only its output: the log had
// no entry, no issue was raised, and an issue raised on an earlier pass stayed open on a string
// that passed, for good (the log still said "sent back, issue open", which the catch-up takes as
// nothing owed). On disk (QUEUE=memory) and in Redis (QUEUE=bullmq), across instances.
import { afterEach, describe, expect, it } from 'vitest'
import type { Finding, Item } from '../../src/engine/types.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { describeWithService } from '../support/services.js'

const REDIS_DB = 14
const QUEUE_NAME = `held-findings-${process.pid}`

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

const send = (url: string, ids: number[], revision = 1) =>
  fetch(`${url}/webhooks`, signedRequest(JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, revision, text: `Hello {name} ${stringId}` })) }), SECRET))

function scenario(config: () => Record<string, unknown>) {
  return async () => {
    // Odd strings fail with a missing placeholder until `fixed`; even ones pass.
    const state = { fixed: false, forbidden: false }
    const broken = (item: Item) => !state.fixed && item.id % 2 === 1
    const pipelines = fakePipelines('test-step', (item) => (broken(item) ? 'translated' : 'approved'), {
      issues: { outputs: ['translated'] },
      findings: (item): Finding[] => (broken(item) ? [{ check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', code: 'placeholder.missing', span: { start: 6, end: 12, in: 'source' } }] : []),
    })
    const service = fakeServiceFetch(({ method, url }) => (state.forbidden && method === 'PATCH' && url.includes('/status') ? { status: 403, body: { error: { code: 403, message: 'may not update statuses' } } } : undefined))
    const w = await startTestWorker({ pipelines, fetch: service.fetch, heldRecheckMs: 20, heldBaseDelayMs: 100, config: config() })
    running.push(w)
    const reported = () => service.patches.flatMap((p) => p.ops.map((o) => `${o.path}=${o.value}`))

    // Sent back while the organization's updates are refused: held with their outputs.
    state.forbidden = true
    expect((await send(w.url, [1, 2, 3, 4])).status).toBe(200)
    await expect.poll(() => w.held.list().length, { timeout: 10_000 }).toBe(1)
    state.forbidden = false
    await expect.poll(() => reported().length, { timeout: 15_000 }).toBe(4)
    expect(reported().sort()).toEqual(['/1/output=translated', '/2/output=approved', '/3/output=translated', '/4/output=approved'])
    await w.findingsIdle()
    // The log says why, and each string sent back got its issue.
    expect(await w.findings.search({ stringId: 1 })).toEqual([expect.objectContaining({ outcome: 'translated', sentBack: true, findings: [expect.objectContaining({ check: 'placeholders' })] })])
    await expect.poll(() => service.comments.map((c) => [c.stringId, c.issueStatus]).sort(), { timeout: 5000 }).toEqual([[1, 'unresolved'], [3, 'unresolved']])

    // Fixed, and passed while the updates are refused again: once reported, their issues are resolved.
    state.fixed = true
    state.forbidden = true
    expect((await send(w.url, [1, 3], 2)).status).toBe(200)
    await expect.poll(() => w.held.list().length, { timeout: 10_000 }).toBe(1)
    state.forbidden = false
    await expect.poll(() => reported().length, { timeout: 15_000 }).toBe(6)
    await w.findingsIdle()
    await expect.poll(() => service.comments.map((c) => c.issueStatus), { timeout: 5000 }).toEqual(['resolved', 'resolved'])
    expect((await w.findings.search({ stringId: 1 }))[0]).toMatchObject({ outcome: 'approved', sentBack: false })
  }
}

describe('findings of a held decision (QUEUE=memory)', () => {
  it('are logged, and its issues raised or resolved, once the held decision is reported', scenario(() => ({})), 40_000)
})

await describeWithService('redis', 'findings of a held decision (QUEUE=bullmq)', (REDIS) => {
  const url = `${REDIS}/${REDIS_DB}`
  afterEach(async () => {
    const { redisClient } = await import('../../src/queue/bullmq-journal.js')
    const client = redisClient(url)
    try {
      const keys = await client.keys(`bull:${QUEUE_NAME}:*`)
      if (keys.length) await client.del(...keys)
    } finally {
      client.disconnect()
    }
  })
  it('are logged, and its issues raised or resolved, once the held decision is reported', scenario(() => ({ queue: 'bullmq', queueName: QUEUE_NAME, queueRedisUrl: url, apiMaxAttempts: 2, queueLockMs: 10_000 })), 40_000)
})
