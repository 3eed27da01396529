// A string sent back while the status update that routed it still waits for its answer (the service
// applied it and answers late: emulator fault `holdAnswers`), and delivered again meanwhile: that
// arrival is new work (platform notes, "A string comes back"), not a repeat of the copy still
// running. Before, the worker absorbed it as a repeat of that copy, and every such string waited at
// the service (NEED_PROCESS) for good. The default queue (journal on SQLite), across a restart too,
// and QUEUE=bullmq, where the second delivery reaches another instance than the one running the copy.
import { afterEach, beforeEach, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'
import type { Config } from '../../src/config/load-config.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { loadPipelines, sleep, tempDir } from '../durability/harness.js'
import { describeWithService, flushRedis } from '../support/services.js'
import { startTestWorker } from '../support/start-test-worker.js'
import type { BullmqJournal } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import type { Redis } from 'ioredis'

const DB = 9 // a Redis database of its own (7, 8 and 10-15 are other files')
const SECRET = 'sent-back-during-update-secret'
const STRINGS = 30

type TestWorker = Awaited<ReturnType<typeof startTestWorker>>
let emu: Emulator | undefined
const workers: TestWorker[] = []
let data: ReturnType<typeof tempDir> | undefined

beforeEach(() => {
  data = tempDir('sent-back-during-update')
})
afterEach(async () => {
  emu?.configureFaults({ holdAnswers: false })
  for (const w of workers.splice(0)) {
    await w.stop().catch(() => undefined)
    await w.stores.close().catch(() => undefined)
  }
  await emu?.stop()
  emu = undefined
  data?.remove()
})

async function startService(seed: number): Promise<{ emu: Emulator; tokens: StaticTokenProvider }> {
  const e = await startEmulator({ moduleKey: 'qa-gate', seed, strings: STRINGS, languages: ['de'], appSecret: SECRET, defectRate: 0.5, settings: { retries: 3, retryDelayMs: 100 } })
  emu = e
  const token = (await e.authorizeDirect()).access_token
  return { emu: e, tokens: new StaticTokenProvider(new Map([[e.info().organization.domain, token]])) }
}

async function startWorker(e: Emulator, tokens: StaticTokenProvider, config: Partial<Config>): Promise<TestWorker> {
  const w = await startTestWorker({ pipelines: await loadPipelines(), config: { apiUrl: e.info().apiUrlTemplate, appSecrets: [SECRET], storeUrl: `sqlite://${data!.dir}/state.sqlite`, ...config }, tokens })
  workers.push(w)
  return w
}

async function waitFor(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(emu?.progress())} ${JSON.stringify(emu?.statuses({}).filter((s) => s.status !== 'DONE').slice(0, 2))}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/**
 * Every string routed by an update whose answer is held; then each is sent back (the defective
 * ones fixed) and delivered again, to `url`, before that answer comes. Returns the defective ones.
 */
async function sendBackWhileAnswersHeld(e: Emulator, url: () => Promise<string> | string): Promise<number[]> {
  const defective = e.statuses({}).filter((s) => s.defect !== null).map((s) => s.stringId)
  expect(defective.length).toBeGreaterThan(5)
  e.configureFaults({ holdAnswers: true })
  const first = await e.sendPending({ batchSize: 40 })
  expect(first.delivered).toBe(first.batches)
  // Carried out at the service; the worker has not heard yet.
  await waitFor('every string routed', () => e.progress().done === STRINGS, 20_000)
  e.configure({ webhookUrl: `${await url()}/webhooks` })
  expect(e.sendBack({ stringIds: e.statuses({}).map((s) => s.stringId) })).toHaveLength(STRINGS)
  const again = await e.sendPending({ batchSize: 40 })
  expect(again.delivered).toBe(again.batches)
  return defective
}

/** Every string DONE on the port its translation now deserves, at most one output per arrival, no protocol mistake. */
function assertEveryArrivalAnswered(e: Emulator, defective: number[]): void {
  for (const v of e.statuses({ stringIds: defective })) expect(v, JSON.stringify(v)).toMatchObject({ status: 'DONE', output: e.sample.passOutput })
  expect(e.summary().notDone).toBe(0)
  expect(e.summary().wrongOutput).toBe(0)
  expect(e.statuses({}).filter((s) => s.answered > s.arrivals)).toEqual([])
  expect(e.mistakes(), JSON.stringify(e.mistakes().slice(0, 3))).toEqual([])
}

it('default queue: the string sent back and delivered again while its update is under way runs again once that update is answered', async () => {
  const { emu, tokens } = await startService(61)
  const worker = await startWorker(emu, tokens, {})
  emu.configure({ webhookUrl: `${worker.url}/webhooks` })
  const defective = await sendBackWhileAnswersHeld(emu, () => worker.url)
  emu.configureFaults({ holdAnswers: false })
  await waitFor('every string DONE again', () => emu.progress().done === STRINGS, 20_000)
  await worker.idle(20_000)
  await worker.reporter.flush()
  assertEveryArrivalAnswered(emu, defective)
  expect(worker.stats()).toMatchObject({ depth: 0, journal: 0 })
}, 60_000)

it('default queue: a restart while that arrival waits for the update still finds it in the journal', async () => {
  const { emu, tokens } = await startService(62)
  const first = await startWorker(emu, tokens, {})
  emu.configure({ webhookUrl: `${first.url}/webhooks` })
  const defective = await sendBackWhileAnswersHeld(emu, () => first.url)
  // The worker stops while the update is under way; its answer comes during the stop.
  const stopping = first.stop({ deadlineMs: 300 })
  await sleep(600)
  emu.configureFaults({ holdAnswers: false })
  await stopping
  await first.stores.close()
  workers.splice(workers.indexOf(first), 1)
  expect(emu.progress().done).toBe(0)
  const second = await startWorker(emu, tokens, {})
  await second.replayed
  await waitFor('every string DONE after the restart', () => emu.progress().done === STRINGS, 20_000)
  await second.idle(20_000)
  await second.reporter.flush()
  assertEveryArrivalAnswered(emu, defective)
}, 60_000)

await describeWithService('redis', 'QUEUE=bullmq: a string sent back while its update is under way', (REDIS) => {
  const url = `${REDIS}/${DB}`
  beforeEach(() => flushRedis(url))

  it('delivered again to another instance, it runs once that update is answered', async () => {
    const { emu, tokens } = await startService(63)
    const bullmq: Partial<Config> = { queue: 'bullmq', queueName: 'sent-back', queueRedisUrl: url }
    const running = await startWorker(emu, tokens, bullmq)
    emu.configure({ webhookUrl: `${running.url}/webhooks` })
    // The other instance starts once every string is running on the first (their updates held).
    const defective = await sendBackWhileAnswersHeld(emu, async () => (await startWorker(emu, tokens, { ...bullmq, storeUrl: `sqlite://${data!.dir}/other.sqlite` })).url)
    emu.configureFaults({ holdAnswers: false })
    await waitFor('every string DONE again', () => emu.progress().done === STRINGS, 20_000)
    for (const w of workers) await w.idle(20_000)
    for (const w of workers) await w.reporter.flush()
    assertEveryArrivalAnswered(emu, defective)
  }, 60_000)

  // What Redis keeps for it, journal by journal (the BullMQ journal alone, no worker around it).
  const QUEUE = 'kept'
  const key = (name: string) => `bull:${QUEUE}:${name}`
  const job = (stringId: number, batchId = ''): Job =>
    ({ key: `1|7|11|de|${stringId}|1`, organizationId: '1', domain: 'acme', moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1, batchId, attempts: 0, string: { key: '', context: '', maxLength: 0, text: 't', isPlural: false, fileType: '', filePath: '', labelIds: [] } }) as unknown as Job
  const journals: BullmqJournal[] = []
  const journal = async (lockMs = 5000) => {
    const { BullmqJournal } = await import('../../src/queue/bullmq-journal.js')
    const j = new BullmqJournal({ redisUrl: url, name: QUEUE, concurrency: 4, attempts: 1, backoffMs: 10, lockMs, dedupeTtlMs: 60_000, log: silentLogger() })
    journals.push(j)
    return j
  }
  const redis = async <T>(fn: (client: Redis) => Promise<T>): Promise<T> => {
    const client = (await import('../../src/queue/bullmq-journal.js')).redisClient(url)
    try {
      return await fn(client)
    } finally {
      client.disconnect()
    }
  }
  afterEach(async () => {
    for (const j of journals.splice(0)) await j.close()
  })

  it('Redis: an arrival before the running copy\'s update goes out is absorbed; one after is kept, then queued with recheck once that copy ends, and the mark goes', async () => {
    const j = await journal()
    const taken: Job[] = []
    j.start((t) => taken.push(t))
    await j.append('b1', [job(1), job(2)])
    await expect.poll(() => taken.length).toBe(2)
    await j.append('b2', [job(1)])
    expect(await redis((c) => c.hlen(key('kept')))).toBe(0)
    await j.sending([taken.find((t) => t.stringId === 1)!])
    await j.append('b3', [job(1), job(2)])
    expect(await redis((c) => c.hkeys(key('kept')))).toEqual([job(1).key])
    // Kept strings wait like queued ones (an idle check waits for them).
    await expect.poll(async () => j.backlog(), { timeout: 3000 }).toBe(3)
    await new Promise((r) => setTimeout(r, 200))
    expect(taken).toHaveLength(2)
    await j.done(taken.find((t) => t.stringId === 1)!)
    await expect.poll(() => taken.length, { timeout: 5000 }).toBe(3)
    expect(taken[2]).toMatchObject({ stringId: 1, recheck: true })
    expect(await redis((c) => c.hlen(key('kept')))).toBe(0)
    expect(await redis((c) => c.hlen(key('sending')))).toBe(0)
  })

  it('Redis: the instance running the copy stops before it ends; the instance that takes it over lets go of what was kept behind it', async () => {
    const first = await journal(1000)
    const taken: Job[] = []
    first.start((t) => taken.push(t))
    await first.append('b1', [job(3)])
    await expect.poll(() => taken.length).toBe(1)
    await first.sending([taken[0]!])
    await first.append('b2', [job(3, 'b2')])
    await first.close()
    expect(await redis((c) => c.hkeys(key('kept')))).toEqual([job(3).key])
    const second = await journal(1000)
    const again: Job[] = []
    second.start((t) => {
      again.push(t)
      void second.done(t)
    })
    // Its lock lapses: taken again (checked with the service), then what was kept behind it.
    await expect.poll(() => again.length, { timeout: 10_000 }).toBe(2)
    expect(again.map((t) => t.recheck)).toEqual([true, true])
    await expect.poll(async () => redis((c) => c.hlen(key('kept'))), { timeout: 3000 }).toBe(0)
  }, 20_000)

  it('Redis: the end of a copy leaves the mark of a later copy of the string, and what is kept behind that one', async () => {
    const j = await journal()
    const taken: Job[] = []
    j.start((t) => taken.push(t))
    await j.append('b1', [job(7)])
    await expect.poll(() => taken.length).toBe(1)
    await j.sending([taken[0]!])
    // As if this copy finished and a later copy of the string, run elsewhere, marked itself and had
    // an arrival kept behind it before this copy's end was let go of (one turn later).
    await redis(async (c) => {
      await c.hset(key('sending'), job(7).key, 'a later copy')
      await c.hset(key('kept'), job(7).key, JSON.stringify(job(7, 'b2')))
    })
    await j.done(taken[0]!)
    await expect.poll(async () => redis((c) => c.hget(key(job(7).key), 'finishedOn'))).not.toBeNull()
    await new Promise((r) => setTimeout(r, 300))
    expect(await redis((c) => c.hget(key('sending'), job(7).key))).toBe('a later copy')
    expect(await redis((c) => c.hkeys(key('kept')))).toEqual([job(7).key])
    expect(taken).toHaveLength(1)
  })

  it('Redis: what an instance left kept behind a copy that ended goes back with the sweep of parked strings; behind a copy under way, it stays with its mark and goes without', async () => {
    const j = await journal()
    const taken: Job[] = []
    j.start((t) => taken.push(t))
    await j.append('b1', [job(4), job(5), job(6)])
    await expect.poll(() => taken.length).toBe(3)
    await j.done(taken.find((t) => t.stringId === 4)!)
    await expect.poll(async () => redis((c) => c.hget(key(job(4).key), 'finishedOn'))).not.toBeNull()
    // As an instance lost between a job's end and letting go of it would leave them (and marks
    // with nothing kept behind them: of a copy that finished, 4's own below, and of one gone, 8).
    await redis(async (c) => {
      await c.hset(key('sending'), job(4).key, '1', job(5).key, '1', job(8).key, '1')
      await c.hset(key('kept'), job(4).key, JSON.stringify(job(4, 'b2')), job(5).key, JSON.stringify(job(5, 'b2')), job(6).key, JSON.stringify(job(6, 'b2')))
    })
    expect(await j.replayParked()).toBe(1)
    await expect.poll(() => taken.length, { timeout: 5000 }).toBe(4)
    expect(taken[3]).toMatchObject({ stringId: 4, recheck: true })
    // 5 runs with its mark: its end releases it; 6 runs unmarked: it answers for the arrival.
    expect(await redis((c) => c.hkeys(key('kept')))).toEqual([job(5).key])
    expect(await redis((c) => c.hkeys(key('sending')))).toEqual([job(5).key])
  })
})
