// Issue 16 with QUEUE=bullmq: strings of a held organization (forbidden, or without a token) wait
// in Redis apart from the queue, however long the hold lasts; they never use up BullMQ's attempts
// and end in its failed set (parked: forgotten while the service still waits for them). They go
// back to the queue when the organization can be reported for again, on this instance or after a
// restart; strings whose output was decided before the hold are reported without running again.
import { afterAll, beforeEach, expect, it } from 'vitest'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'
import { describeWithService } from '../support/services.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { Directory } from '../support/directory.js'
import { REDIS_BYTES_PER_HELD_STRING, type BullmqJournal } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'

// A database of its own, emptied before each test. The worker's queue is named by QUEUE_NAME (the
// keys below are found only if the worker passes it on to BullMQ).
const DB = 10
const QUEUE_NAME = 'held-test'

const job = (stringId: number, domain = 'acme'): Job =>
  ({ key: `${domain}|7|11|de|${stringId}|1`, organizationId: domain, domain, moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1, batchId: '', attempts: 0, string: { key: '', context: '', maxLength: 0, text: 't', isPlural: false, fileType: '', filePath: '', labelIds: [] } }) as unknown as Job
const batch = (ids: number[], languageId = 'de') => JSON.stringify({ events: ids.map((stringId) => recalculationEvent({ stringId, languageId })) })
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)

await describeWithService('redis', 'QUEUE=bullmq: held organizations', (REDIS) => {
  const url = `${REDIS}/${DB}`
  const running: Array<{ stop(): Promise<void> }> = []
  const redis = async () => (await import('../../src/queue/bullmq-journal.js')).redisClient(url)

  beforeEach(async () => {
    while (running.length) await running.pop()!.stop()
    const client = await redis()
    await client.flushdb()
    client.disconnect()
  })
  afterAll(async () => {
    while (running.length) await running.pop()!.stop()
  })

  /** A journal on the test's database (the worker's queue name), closed after the test. */
  const journalOf = async (o: Partial<ConstructorParameters<typeof BullmqJournal>[0]> = {}) => {
    const { BullmqJournal } = await import('../../src/queue/bullmq-journal.js')
    const journal = new BullmqJournal({ redisUrl: url, name: QUEUE_NAME, concurrency: 10, attempts: 1, backoffMs: 10, lockMs: 5000, dedupeTtlMs: 60_000, log: silentLogger(), ...o })
    running.push({ stop: () => journal.close() })
    return journal
  }
  /** The strings of a domain held in Redis: its hash and, mid-release, its staging hash. */
  const heldFields = async (domain: string) => {
    const client = await redis()
    try {
      const key = `bull:${QUEUE_NAME}:held:${domain}`
      return [...(await client.hkeys(key)), ...(await client.hkeys(`${key}:staging`))].sort()
    } finally {
      client.disconnect()
    }
  }
  const heldValue = async (domain: string, field: string) => {
    const client = await redis()
    try {
      return await client.hget(`bull:${QUEUE_NAME}:held:${domain}`, field)
    } finally {
      client.disconnect()
    }
  }
  const heldCount = async (domain: string) => new Set(await heldFields(domain)).size
  /** Where a queue's strings are, for a failure's message. */
  const whereAreThey = async () => {
    const client = await redis()
    try {
      const q = (k: string) => `bull:${QUEUE_NAME}:${k}`
      const [wait, prioritized, active, completed, failed, delayed] = await Promise.all([client.llen(q('wait')), client.zcard(q('prioritized')), client.llen(q('active')), client.zcard(q('completed')), client.zcard(q('failed')), client.zcard(q('delayed'))])
      return JSON.stringify({ wait, prioritized, active, completed, failed, delayed, held: await heldCount('acme') })
    } finally {
      client.disconnect()
    }
  }

  /** Jobs in BullMQ's failed set: parked, out of its retries. */
  const failedJobs = async () => {
    const client = await redis()
    try {
      return await client.zcard(`bull:${QUEUE_NAME}:failed`)
    } finally {
      client.disconnect()
    }
  }

  const start = (o: Partial<Parameters<typeof startTestWorker>[0]> & { fetch: typeof fetch }) =>
    startTestWorker({
      pipelines: fakePipelines(),
      heldRecheckMs: 20,
      heldBaseDelayMs: 100,
      ...o,
      // Two attempts a string, BullMQ's back-off from 1 s: a hold of a few seconds outlasts them.
      config: { queue: 'bullmq', queueName: QUEUE_NAME, queueRedisUrl: url, apiMaxAttempts: 2, queueLockMs: 2000, ...o.config },
    })

  it('keeps the strings of an organization refused with 403 for longer than BullMQ retries, and reports each once it may again', async () => {
    let forbidden = true
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && forbidden ? { status: 403, body: { error: { message: 'may not update statuses' } } } : undefined))
    // How often each string (and language) went through its pipeline.
    const runs = new Map<string, number>()
    const pipelines = fakePipelines('test-step', (item) => {
      const k = `${item.targetLanguage.id}|${item.id}`
      runs.set(k, (runs.get(k) ?? 0) + 1)
      return 'approved'
    })
    // No sweep: what follows the probe comes from the report that went through. A lock of 10 s:
    // with 2 s, a CI run under load once ran one string twice, as BullMQ does when a lock lapses
    // (its stalled-job recovery); this test is about holds, not locks.
    const w = await start({ fetch: service.fetch, pipelines, heldSweepMs: 600_000, config: { queue: 'bullmq', queueName: QUEUE_NAME, queueRedisUrl: url, apiMaxAttempts: 2, queueLockMs: 10_000 } })
    running.push(w)
    // More than a chunk: once the refusal ends, the back-off's probe puts a chunk back, and the
    // rest follows the first report that goes through.
    for (const languageId of ['de', 'fr']) for (const from of [1, 101, 201, 301]) expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(from, 100), languageId), SECRET))).status).toBe(200)
    await expect.poll(() => w.held.list().length, { timeout: 10_000 }).toBe(1)
    await expect.poll(() => runs.size > 0 && w.stats().depth === 0, { timeout: 10_000 }).toBe(true)
    // Longer than two attempts with their back-off: the strings must still be waiting.
    await new Promise((r) => setTimeout(r, 4000))
    expect(service.patches).toHaveLength(0)
    forbidden = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 15_000 }).toBe(800)
    expect(new Set(service.patches.flatMap((p) => p.ops.map((o) => `${p.languageId}${o.path}`))).size).toBe(800)
    expect(await failedJobs()).toBe(0)
    // Held after their pipeline ran (a PATCH refused): reported as decided, not run again.
    expect(runs.size).toBe(800)
    expect(Math.max(...runs.values())).toBe(1)
  }, 40_000)

  it('shows an organization refused across its probes as one hold: since its first hold, with every string held in Redis', async () => {
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' ? { status: 403, body: { error: { message: 'may not update statuses' } } } : undefined))
    const w = await start({ fetch: service.fetch, heldSweepMs: 600_000, config: { queue: 'bullmq', queueName: QUEUE_NAME, queueRedisUrl: url, apiMaxAttempts: 2, queueLockMs: 10_000 } })
    running.push(w)
    // More than a chunk: each try puts a probe of 500 back in the queue, the rest stays in Redis.
    for (const languageId of ['de', 'fr']) for (const from of [1, 101, 201, 301]) expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(from, 100), languageId), SECRET))).status).toBe(200)
    await expect.poll(() => heldCount('acme'), { timeout: 15_000 }).toBe(800)
    await expect.poll(() => w.held.list().map((h) => h.strings), { timeout: 5000 }).toEqual([800])
    const since = w.held.list()[0]!.since
    // Through at least two probes refused again (each held again gets a new time to try).
    const tries = new Set<number>()
    const deadline = Date.now() + 20_000
    while (tries.size < 3 && Date.now() < deadline) {
      const list = w.held.list()
      expect(list.map((h) => h.since)).toEqual([since])
      for (const h of list) if (h.nextTryAt !== undefined) tries.add(h.nextTryAt)
      await new Promise((r) => setTimeout(r, 5))
    }
    expect(tries.size).toBeGreaterThanOrEqual(3)
    // Held again: every string it has in Redis, not the probe held again.
    await expect.poll(async () => (await fetch(`${w.url}/healthz`)).json(), { timeout: 10_000 }).toMatchObject({ held: 800, heldOrganizations: 1 })
    expect(w.held.list()).toEqual([expect.objectContaining({ domain: 'acme', cause: 'forbidden', since, strings: 800 })])
    expect(service.patches).toHaveLength(0)
  }, 60_000)

  it('keeps the strings of an organization without a token across a restart, and reports them once it is connected', async () => {
    const service = fakeServiceFetch()
    const first = await start({ fetch: service.fetch, tokens: new StaticTokenProvider(new Map()) })
    running.push(first)
    expect((await fetch(`${first.url}/webhooks`, signedRequest(batch(ids(1, 50)), SECRET))).status).toBe(200)
    await expect.poll(() => first.held.list()[0]?.strings ?? 0, { timeout: 10_000 }).toBe(50)
    // Held strings are not work in progress: the worker is idle.
    await first.idle(5000)
    // In Redis, where the operator sees them: the backlog per organization, its metrics, /healthz.
    await expect.poll(() => first.backlogList(), { timeout: 5000 }).toEqual([{ organization: '200000', domain: 'acme', strings: 50, waiting: 50, bytes: 50 * REDIS_BYTES_PER_HELD_STRING, oldestAt: expect.any(Number) }])
    await expect.poll(() => first.metrics.registry.metrics(), { timeout: 5000 }).toMatch(/switchyard_backlog_strings\{organization="200000"\} 50/)
    expect(await first.metrics.registry.metrics()).toMatch(/switchyard_backlog_oldest_seconds\{organization="200000"\} \d/)
    expect(await (await fetch(`${first.url}/healthz`)).json()).toMatchObject({ backlog: { waiting: 50, organizations: 1 } })
    await new Promise((r) => setTimeout(r, 3500))
    await running.pop()!.stop()
    expect(await failedJobs()).toBe(0)
    // A new instance, connected: it finds the held strings in Redis and reports them.
    const second = await start({ fetch: service.fetch })
    running.push(second)
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 20_000 }).toBe(50)
    expect(await failedJobs()).toBe(0)
  }, 40_000)

  it('lets go the strings another instance held under a domain their organization has left, once it is connected under another, and reports them there', async () => {
    const api = 'https://{organization_domain}.api.test'
    const service = fakeServiceFetch(undefined, { apiUrl: api, accessTokens: ['token-acme-new'] })
    const directory = new Directory()
    directory.connect('200000', 'acme')
    directory.tokens.delete('acme') // disconnected: held in Redis under "acme"
    const first = await start({ fetch: service.fetch, tokens: directory, config: { apiUrl: api } })
    running.push(first)
    expect((await fetch(`${first.url}/webhooks`, signedRequest(batch(ids(1, 20)), SECRET))).status).toBe(200)
    await expect.poll(() => heldCount('acme'), { timeout: 10_000 }).toBe(20)
    await running.pop()!.stop()
    // Connected again under a new domain; "acme" never gets a token again. A new instance finds the
    // strings in Redis under "acme" (no instance holds it): its sweep lets them go.
    directory.connect('200000', 'acme-new')
    const second = await start({ fetch: service.fetch, tokens: directory, config: { apiUrl: api }, heldSweepMs: 200 })
    running.push(second)
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 20_000 }).toBe(20)
    expect(new Set(service.patches.map((p) => new URL(p.url).hostname))).toEqual(new Set(['acme-new.api.test']))
    expect(await heldCount('acme')).toBe(0)
    expect(await failedJobs()).toBe(0)
  }, 40_000)

  it('keeps at most DEDUPE_MAX of the strings it reported as finished jobs in Redis', async () => {
    const service = fakeServiceFetch()
    const w = await start({ fetch: service.fetch, config: { dedupeMax: 4 } })
    running.push(w)
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(1, 20)), SECRET))).status).toBe(200)
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 10_000 }).toBe(20)
    await expect.poll(async () => {
      const client = await redis()
      try {
        return await client.zcard(`bull:${QUEUE_NAME}:completed`)
      } finally {
        client.disconnect()
      }
    }, { timeout: 5000 }).toBe(4)
  })

  it('puts the strings parked in BullMQ back in the queue at a start, checked with the service first', async () => {
    let refuse = true
    const service = fakeServiceFetch(({ method }) => (method === 'PATCH' && refuse ? { status: 422, body: { error: { message: 'unprocessable' } } } : undefined))
    const first = await start({ fetch: service.fetch })
    running.push(first)
    expect((await fetch(`${first.url}/webhooks`, signedRequest(batch(ids(1, 30)), SECRET))).status).toBe(200)
    // Refused with a 4XX that no retry helps: parked, in BullMQ's failed set.
    await expect.poll(failedJobs, { timeout: 10_000 }).toBe(30)
    await running.pop()!.stop()
    refuse = false
    const second = await start({ fetch: service.fetch })
    running.push(second)
    await expect.poll(() => service.patches.flatMap((p) => p.ops).length, { timeout: 20_000 }).toBe(30)
    expect(await failedJobs()).toBe(0)
    // Each was asked about first (it may have been reported before the stop).
    expect(service.log.filter((l) => l === 'GET status').length).toBeGreaterThan(0)
  }, 40_000)

  it('tries the strings parked in BullMQ again every PARKED_RETRY_MS, with no restart', async () => {
    let refuse = true
    /** How many times each string's update was refused. */
    const refused = new Map<string, number>()
    const service = fakeServiceFetch(({ method, body }) => {
      if (method !== 'PATCH' || !refuse) return undefined
      for (const op of body as Array<{ path: string }>) refused.set(op.path, (refused.get(op.path) ?? 0) + 1)
      return { status: 409, body: { error: { message: 'conflict' } } }
    })
    const w = await start({ fetch: service.fetch, config: { parkedRetryMs: 500 } })
    running.push(w)
    expect((await fetch(`${w.url}/webhooks`, signedRequest(batch(ids(1, 10)), SECRET))).status).toBe(200)
    // Parked (BullMQ's failed set), taken back, refused and parked again, while the refusal lasts.
    await expect.poll(() => refused.size === 10 && [...refused.values()].every((n) => n >= 2 * 2), { timeout: 15_000 }).toBe(true)
    refuse = false
    await expect.poll(() => service.patches.flatMap((p) => p.ops.map((o) => o.path)).sort(), { timeout: 15_000 }).toEqual(ids(1, 10).map((i) => `/${i}/output`).sort())
    await expect.poll(failedJobs, { timeout: 5000 }).toBe(0)
  }, 30_000)

  it('puts released strings back in turn with the others, keeps what they carried, and lets one copy of a string through', async () => {
    const journal = await journalOf({ maxBytes: 3 * REDIS_BYTES_PER_HELD_STRING })
    const taken: Job[] = []
    let hold = true
    /** Strings kept running (not done) when taken. */
    const keep = new Set<number>()
    journal.start((j) => {
      taken.push(j)
      if (hold) void journal.hold([j.stringId === 2 ? { ...j, decidedPort: 'approved' } : j], 1234)
      else if (!keep.has(j.stringId)) void journal.done(j)
    })
    const before = Date.now()
    await journal.append('b1', [job(1), job(2), job(3)])
    await expect.poll(async () => (await journal.heldDomains()).length).toBe(1)
    const since = (await journal.heldDomains())[0]!.since!
    expect(since).toBeGreaterThanOrEqual(before)
    expect(since).toBeLessThanOrEqual(Date.now())
    await expect.poll(async () => (await journal.backlog(), journal.size)).toBe(3)
    expect(await journal.heldDomains()).toEqual([{ domain: 'acme', organization: 'acme', retryAt: 1234, since }])
    // Held strings take Redis memory as queued ones do: they count against BACKLOG_MAX_MB.
    expect(journal.refuse(1000)).toMatch(/backlog in Redis is full .*3 strings/)
    // Their age: since the organization was first held.
    expect(journal.list()).toEqual([{ organization: 'acme', domain: 'acme', strings: 3, waiting: 3, bytes: 3 * REDIS_BYTES_PER_HELD_STRING, oldestAt: since }])
    // A repeat of string 3 while held: taken again (its held copy finished in BullMQ), held again.
    await journal.append('b2', [job(3)])
    await expect.poll(() => taken.length).toBe(4)
    hold = false
    taken.length = 0
    expect(await journal.release('acme')).toBe(3)
    await expect.poll(() => taken.length).toBe(3)
    await new Promise((r) => setTimeout(r, 300))
    expect(taken.map((j) => j.stringId).sort()).toEqual([1, 2, 3])
    expect(taken.find((j) => j.stringId === 2)!.decidedPort).toBe('approved')
    expect(taken.find((j) => j.stringId === 1)!.recheck).toBeFalsy()
    // The repeat came while a finished copy stood in BullMQ: it is still to be checked first.
    expect(taken.find((j) => j.stringId === 3)!.recheck).toBe(true)
    expect(await journal.heldDomains()).toEqual([])
    expect(await journal.release('acme')).toBe(0)

    // Held, then taken again (a repeat): one copy finishes (reported), one is still running when
    // the release comes. The first goes back to be checked with the service; the second stays held
    // (the running copy may be a hold under way), for a release after it ends.
    hold = true
    taken.length = 0
    await journal.append('b4', [job(4), job(5)])
    await expect.poll(async () => (await journal.backlog(), journal.held)).toBe(2)
    hold = false
    keep.add(5)
    await journal.append('b5', [job(4), job(5)])
    await expect.poll(() => taken.length).toBe(4)
    taken.length = 0
    expect(await journal.release('acme')).toBe(1)
    await expect.poll(() => taken.length).toBe(1)
    await new Promise((r) => setTimeout(r, 300))
    expect(taken).toEqual([expect.objectContaining({ stringId: 4, recheck: true })])
    expect(await heldFields('acme')).toEqual(['acme|7|11|de|5|1'])
    // Its copy may be reported before it is released: then it is checked with the service first.
    expect(JSON.parse((await heldValue('acme', 'acme|7|11|de|5|1'))!)).toMatchObject({ stringId: 5, recheck: true })
    await journal.done(taken.find((j) => j.stringId === 5) ?? { ...job(5) })
  })

  it('loses no string when the released strings are held again at once by another instance, or a hold is under way', async () => {
    const releaser = await journalOf()
    const holder = await journalOf({ concurrency: 200 })
    // The holder keeps its organization held: whatever it takes goes back to Redis.
    holder.start((j) => void holder.hold([j], Date.now() + 60_000))
    const n = 1500
    const allHeldAgain = (when: string) =>
      expect.poll(() => heldCount('acme'), { timeout: 15_000 }).toBe(n).catch(async (e: Error) => {
        throw new Error(`${when}: ${e.message}; where the strings are: ${await whereAreThey()}`)
      })
    for (let i = 0; i < n; i += 500) await holder.append('b', ids(i + 1, 500).map((k) => job(k)))
    await allHeldAgain('at first')
    // A probe puts back about a chunk, not the whole organization.
    const probed = await releaser.release('acme', { probe: true })
    expect(probed).toBeGreaterThan(0)
    expect(probed).toBeLessThan(n)
    await allHeldAgain('after the probe')
    // Released (in chunks) while the holder takes them back as fast as it can: each string is held
    // again or still on its way, never gone.
    expect(await releaser.release('acme')).toBeGreaterThan(0)
    await allHeldAgain('after the release')
    // A hold under way when the release reads its string (written to Redis, its BullMQ job not
    // completed yet): left for a later release, not dropped.
    let go!: () => void
    const pause = new Promise((r) => (go = () => r(undefined)))
    const finishing = holder as unknown as { running: Map<string, { resolve(v: string): void }> }
    const complete = (j: Job) => {
      const { running } = second as unknown as typeof finishing
      const w = running.get(j.key)
      running.delete(j.key)
      w?.resolve('held')
    }
    await holder.close()
    const second = await journalOf({ concurrency: 5 })
    second.start((j) => void (async () => {
      // The hold's write, then a stall before its job completes.
      await (second as unknown as { keepHeld(jobs: Job[], at: number, keep: boolean): Promise<void> }).keepHeld([j], Date.now() + 60_000, false)
      await pause
      complete(j)
    })())
    await second.append('c', [job(1)])
    await expect.poll(() => (second as unknown as typeof finishing).running.size, { timeout: 5000 }).toBe(1)
    await new Promise((r) => setTimeout(r, 200))
    expect(await releaser.release('acme', { only: ['acme|7|11|de|1|1'] })).toBe(0)
    go()
    await expect.poll(() => (second as unknown as typeof finishing).running.size, { timeout: 5000 }).toBe(0)
    expect(await heldFields('acme')).toContain('acme|7|11|de|1|1')
    expect(await heldCount('acme')).toBe(n)
  }, 40_000)

  it('leaves a string whose hold is under way as it was held (its output decided), and marks one whose later copy runs to be checked', async () => {
    const journal = await journalOf({ concurrency: 5 })
    const running = (journal as unknown as { running: Map<string, { resolve(v: string): void }> }).running
    const keepHeld = (jobs: Job[]) => (journal as unknown as { keepHeld(jobs: Job[], at: number, keep: boolean): Promise<void> }).keepHeld(jobs, Date.now() + 60_000, false)
    let go!: () => void
    const pause = new Promise((r) => (go = () => r(undefined)))
    // Its report was refused: held with the output its pipeline decided, then a stall before its
    // BullMQ job completes, and a release (a probe) reads it meanwhile.
    journal.start((j) => void (async () => {
      await keepHeld([{ ...j, decidedPort: 'approved' }])
      await pause
      const w = running.get(j.key)
      running.delete(j.key)
      w?.resolve('held')
    })())
    await journal.append('a', [job(1)])
    await expect.poll(() => heldFields('acme'), { timeout: 5000 }).toEqual(['acme|7|11|de|1|1'])
    expect(await journal.release('acme')).toBe(0)
    const kept = JSON.parse((await heldValue('acme', 'acme|7|11|de|1|1'))!)
    expect(kept).toMatchObject({ stringId: 1, decidedPort: 'approved' })
    expect(kept).not.toHaveProperty('recheck')
    // Written by an earlier copy (another creation time) while this one runs: checked first.
    const client = await redis()
    try {
      await client.hset(`bull:${QUEUE_NAME}:held:acme`, 'acme|7|11|de|1|1', JSON.stringify({ ...kept, hc: 1 }))
    } finally {
      client.disconnect()
    }
    expect(await journal.release('acme')).toBe(0)
    expect(JSON.parse((await heldValue('acme', 'acme|7|11|de|1|1'))!)).toMatchObject({ stringId: 1, recheck: true })
    go()
  })

  it('fails a string back to BullMQ when Redis refuses to keep it held, instead of leaving it running', async () => {
    const journal = await journalOf({ attempts: 3, lockMs: 1000 })
    const client = (journal as unknown as { queueClient: { multi(): unknown } }).queueClient
    const multi = client.multi.bind(client)
    let refusals = 1
    client.multi = () => {
      if (refusals-- <= 0) return multi()
      const tx = { hset: () => tx, hsetnx: () => tx, exec: async () => [[new Error('OOM command not allowed when used memory > maxmemory'), null]] }
      return tx
    }
    let takes = 0
    journal.start((j) => {
      takes++
      void journal.hold([j], Date.now())
    })
    await journal.append('b', [job(7)])
    // Taken again after BullMQ's back-off, then held.
    await expect.poll(() => heldFields('acme'), { timeout: 10_000 }).toEqual(['acme|7|11|de|7|1'])
    expect(takes).toBe(2)
  }, 20_000)

  it('replays at a start only the strings parked before it, each once', async () => {
    const journal = await journalOf({ attempts: 1, concurrency: 100 })
    // Every string is parked whenever it is taken: replayed ones are parked again at once.
    journal.start((j) => void journal.park(j, 'refused'))
    const n = 1000
    await journal.append('b1', ids(1, 500).map((k) => job(k)))
    await journal.append('b2', ids(501, 500).map((k) => job(k)))
    await expect.poll(() => failedJobs(), { timeout: 10_000 }).toBe(n)
    // Each page's strings are parked again before the next page is read.
    const release = journal.release.bind(journal)
    journal.release = async (...a) => {
      const released = await release(...a)
      await new Promise((r) => setTimeout(r, 500))
      return released
    }
    expect(await journal.replayParked()).toBe(n)
    await expect.poll(() => failedJobs(), { timeout: 10_000 }).toBe(n)
  }, 30_000)

  it('gives held strings the age of their first hold, kept while more are held, gone once they are released', async () => {
    const journal = await journalOf()
    let hold = true
    // Held a while after they are taken: the hold's time is not the time they were queued.
    // Beta's string stays running.
    journal.start((j) => void (j.domain === 'beta' ? undefined : hold ? setTimeout(() => void journal.hold([j], 5), 100) : journal.done(j)))
    await journal.append('b1', [job(1)])
    await expect.poll(async () => (await journal.heldDomains()).length).toBe(1)
    const { since } = (await journal.heldDomains())[0]!
    // Once the clock has passed the strings' turn, the held ones still give the organization its age.
    await expect.poll(async () => (await journal.backlog(), journal.list()), { timeout: 5000 }).toEqual([{ organization: 'acme', domain: 'acme', strings: 1, waiting: 1, bytes: REDIS_BYTES_PER_HELD_STRING, oldestAt: since }])
    // The same with a string of another organization in the queue (running).
    await journal.append('b1', [job(1, 'beta')])
    // (The counts are refreshed at most every 250 ms.)
    const fresh = async () => (await new Promise((r) => setTimeout(r, 300)), await journal.backlog())
    await expect.poll(async () => (await fresh(), journal.size), { timeout: 5000 }).toBe(2)
    expect(journal.list().map((b) => [b.domain, b.oldestAt])).toEqual([['acme', since]])
    // Another string held later: the organization was held since the first.
    await journal.append('b2', [job(2)])
    await expect.poll(() => heldFields('acme')).toEqual(['acme|7|11|de|1|1', 'acme|7|11|de|2|1'])
    expect((await journal.heldDomains())[0]!.since).toBe(since)
    await expect.poll(async () => (await journal.backlog(), journal.list()[0]?.oldestAt), { timeout: 5000 }).toBe(since)
    hold = false
    expect(await journal.release('acme')).toBe(2)
    await expect.poll(async () => (await journal.backlog(), journal.list()), { timeout: 5000 }).toEqual([])
  })

  it('keeps the list of held organizations apart from any organization\'s strings, whatever its domain', async () => {
    const journal = await journalOf()
    // Held when first taken; done when released.
    const seen = new Set<string>()
    journal.start((j) => void (seen.has(j.key) ? journal.done(j) : (seen.add(j.key), journal.hold([j], 5))))
    await journal.append('b', [job(1, 'acme'), job(2, 'domains'), job(3, 'held-domains')])
    await expect.poll(async () => (await journal.heldDomains()).map((h) => h.domain)).toEqual(['acme', 'domains', 'held-domains'])
    expect(await journal.release('domains')).toBe(1)
    expect(await journal.release('held-domains')).toBe(1)
    expect((await journal.heldDomains()).map((h) => h.domain)).toEqual(['acme'])
    expect(await heldFields('acme')).toEqual(['acme|7|11|de|1|1'])
  })

  it('replays parked strings without touching a live hold of the same organization', async () => {
    const journal = await journalOf({ attempts: 1 })
    const taken: Job[] = []
    journal.start((j) => {
      taken.push(j)
      if (j.stringId === 1) void journal.hold([j], 999)
      else if (taken.filter((t) => t.stringId === 2).length === 1) void journal.park(j, 'refused')
    })
    await journal.append('b', [job(1), job(2)])
    await expect.poll(() => failedJobs(), { timeout: 5000 }).toBe(1)
    await expect.poll(() => heldFields('acme')).toEqual(['acme|7|11|de|1|1'])
    const [live] = await journal.heldDomains()
    expect(live).toMatchObject({ retryAt: 999, since: expect.any(Number) })
    expect(await journal.replayParked()).toBe(1)
    await expect.poll(() => taken.filter((t) => t.stringId === 2).length).toBe(2)
    expect(taken.at(-1)).toMatchObject({ stringId: 2, recheck: true })
    expect(await failedJobs()).toBe(0)
    expect(await heldFields('acme')).toEqual(['acme|7|11|de|1|1'])
    expect(await journal.heldDomains()).toEqual([{ domain: 'acme', organization: 'acme', retryAt: 999, since: live!.since }])
    await new Promise((r) => setTimeout(r, 300))
    expect(taken.filter((t) => t.stringId === 1)).toHaveLength(1)
  })
})
