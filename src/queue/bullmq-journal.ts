// QUEUE=bullmq: several instances share one queue on Redis. The journal's contract holds with
// BullMQ in its place: `append` adds the batch's jobs in one addBulk before the 2XX (Redis keeps
// them), with the de-duplication key as job id so a repeat delivery, to any instance, is absorbed
// while the first is queued or running. A job that finished (kept for DEDUPE_TTL_MS) is replaced by
// the new arrival, marked to be checked with the service first: it may have come back to the step. Any instance's BullMQ
// worker takes jobs and feeds them to its local pipeline, which still groups them per (organization,
// project, step, language) for one PATCH; `done` completes the BullMQ job, `park` fails it so
// BullMQ's own attempts and back-off apply. A killed instance's jobs are taken over by the others
// once their lock expires (BullMQ's stalled-job recovery).
//
// Fairness (issue 16): one queue is first in, first out, so one organization's backlog of a
// million strings would keep another's small batches waiting behind it. Organizations are served
// in turn by priority instead (start-time fair queueing): each organization has a position on a
// shared virtual clock (Redis), a batch's strings take the next positions of their organization
// but never start before the clock (a newcomer or an organization that was idle starts now, not in
// the past), and a string's BullMQ priority is its position in turns of FAIR_TURN strings. The
// clock is the turn of the strings taken last. So each organization with strings waiting gets
// FAIR_TURN strings per turn, oldest first within it. The positions also give each organization's
// share of the backlog (waiting = its position minus the clock), which BACKLOG_ORGANIZATION_SHARE
// bounds as in the local backlog. Clock and positions start again from 0 when the queue is empty.
import { Queue, Worker as BullWorker } from 'bullmq'
import { Redis } from 'ioredis'
import type { Logger } from '../util/logger.js'
import type { IntakeJournal } from './intake-journal.js'
import { newBatchId } from './journal.js'
import type { Job } from '../protocol/job.js'

export interface BullmqJournalOptions {
  redisUrl: string
  /** Queue name; instances that share it share the work. */
  name?: string
  /** Jobs one instance works on at once: enough to fill a group of 500 for one PATCH. */
  concurrency: number
  /** Pipeline runs plus reports of one string before it stays failed (parked). */
  attempts: number
  backoffMs: number
  /** How long a job stays locked to an instance that stopped renewing it. */
  lockMs: number
  dedupeTtlMs: number
  /** Budget of the backlog in Redis (bytes): past it, webhooks get 503. */
  maxBytes?: number
  /** The fraction of it one organization may fill (default 1). */
  organizationShare?: number
  log: Logger
}

/** Redis memory one waiting string takes (BullMQ job hash, id in the wait list), measured: docs/performance.md. */
export const REDIS_BYTES_PER_STRING = 1700
/** Strings of one organization per turn (the priority step). */
export const FAIR_TURN = 100
/** BullMQ's highest priority number (lowest priority); turns past it share it (first in, first out). */
const PRIORITY_LIMIT = 2 ** 21 - 1

/** Take the next `n` positions of organization ARGV[1], from the clock if it is behind; returns the first. */
const TAKE_POSITIONS = `
local clock = tonumber(redis.call('GET', KEYS[2]) or '0') * tonumber(ARGV[3])
local at = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if at < clock then at = clock end
redis.call('HSET', KEYS[1], ARGV[1], at + tonumber(ARGV[2]))
return at`
/** Move the clock forward to turn ARGV[1] (never back). */
const ADVANCE_CLOCK = `
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`
/** With nothing waiting, delayed or running, clock and positions start again from 0. */
const RESET_WHEN_EMPTY = `
if redis.call('LLEN', KEYS[3]) + redis.call('ZCARD', KEYS[4]) + redis.call('LLEN', KEYS[5]) + redis.call('ZCARD', KEYS[6]) + redis.call('LLEN', KEYS[7]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1`

/**
 * A Redis client for BullMQ. BullMQ 6 leaves the client to us (ioredis is an optional peer); its
 * workers block on Redis, so commands must never be given up on (maxRetriesPerRequest: null).
 */
export function redisClient(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false })
}

interface Waiting {
  resolve(): void
  reject(error: Error): void
}

export class BullmqJournal implements IntakeJournal {
  private readonly queue: Queue
  private readonly queueClient: Redis
  private workerClient?: Redis
  private worker?: BullWorker
  private readonly waiting = new Map<string, Waiting>()
  private counts = { backlog: 0, failed: 0, at: 0 }
  /** Strings waiting per organization, as the positions and the clock said at the last refresh. */
  private waitingByOrganization = new Map<string, number>()
  private refreshing?: Promise<void>
  /** The highest turn this instance has taken a string of, and whether the clock has it yet. */
  private taken = { turn: 0, told: 0 }
  private clockTimer?: NodeJS.Timeout

  constructor(private readonly options: BullmqJournalOptions) {
    this.queueClient = redisClient(options.redisUrl)
    this.queue = new Queue(options.name ?? 'switchyard-strings', { connection: this.queueClient })
    this.queue.on('error', (error) => options.log.error({ err: error }, 'bullmq queue error'))
  }

  newBatchId(): string {
    return newBatchId()
  }

  private get positionsKey(): string {
    return this.queue.toKey('fair:positions')
  }

  private get clockKey(): string {
    return this.queue.toKey('fair:clock')
  }

  /** Each job's priority: its organization's next positions on the clock, in turns. */
  private async priorities(jobs: Job[]): Promise<number[]> {
    const out: number[] = []
    // A batch is one organization's; grouped anyway, in order.
    const byOrganization = new Map<string, number[]>()
    jobs.forEach((job, i) => {
      const o = job.organizationId || job.domain
      const list = byOrganization.get(o) ?? []
      list.push(i)
      byOrganization.set(o, list)
    })
    for (const [organization, indexes] of byOrganization) {
      const first = Number(await this.queueClient.eval(TAKE_POSITIONS, 2, this.positionsKey, this.clockKey, organization, indexes.length, FAIR_TURN))
      indexes.forEach((i, k) => { out[i] = Math.min(PRIORITY_LIMIT, Math.floor((first + k) / FAIR_TURN) + 1) })
    }
    return out
  }

  async append(_batchId: string, jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return
    await this.replaceFinished(jobs)
    const keepDone = Math.max(1, Math.ceil(this.options.dedupeTtlMs / 1000))
    const priorities = await this.priorities(jobs)
    await this.queue.addBulk(
      jobs.map((job, i) => ({
        name: 'string',
        data: job,
        opts: {
          jobId: job.key,
          priority: priorities[i]!,
          attempts: this.options.attempts,
          backoff: { type: 'exponential', delay: this.options.backoffMs },
          removeOnComplete: { age: keepDone },
          removeOnFail: false,
        },
      })),
    )
    this.counts.backlog += jobs.length
  }

  /**
   * Jobs whose id is a finished (completed or failed) BullMQ job: remove that one, so addBulk takes
   * the new arrival, and mark it to be checked with the service before it runs. One round trip for
   * the whole batch.
   */
  private async replaceFinished(jobs: Job[]): Promise<void> {
    const pipeline = this.queueClient.pipeline()
    for (const job of jobs) pipeline.hget(this.queue.toKey(job.key), 'finishedOn')
    const answers = (await pipeline.exec()) ?? []
    for (let i = 0; i < jobs.length; i++) {
      if (!answers[i]?.[1]) continue
      const job = jobs[i]!
      await this.queue.remove(job.key)
      job.recheck = true
    }
  }

  /** Start taking jobs; `take` hands each to the local pipeline. */
  start(take: (job: Job) => void): void {
    this.worker = new BullWorker(
      this.queue.name,
      (bullJob) =>
        new Promise<void>((resolve, reject) => {
          this.tookTurn(bullJob.opts.priority ?? 0)
          const job = { ...(bullJob.data as Job), batchId: String(bullJob.id), attempts: 0 }
          this.waiting.set(job.key, { resolve, reject })
          take(job)
        }),
      {
        connection: (this.workerClient = redisClient(this.options.redisUrl)),
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockMs,
        stalledInterval: Math.max(1000, Math.floor(this.options.lockMs / 2)),
        maxStalledCount: 10,
      },
    )
    this.worker.on('error', (error) => this.options.log.error({ err: error }, 'bullmq worker error'))
    this.worker.on('failed', (bullJob, error) => {
      if (bullJob && bullJob.attemptsMade >= (bullJob.opts.attempts ?? 1)) {
        this.options.log.error({ job: bullJob.id, reason: error.message }, 'string parked: BullMQ attempts ran out (kept in the failed set)')
      }
    })
  }

  /** A string of this turn was taken: the clock moves to it (told to Redis at most every 100 ms). */
  private tookTurn(turn: number): void {
    if (turn <= this.taken.turn) return
    this.taken.turn = turn
    this.clockTimer ??= setTimeout(() => {
      this.clockTimer = undefined
      const turn = this.taken.turn
      if (turn <= this.taken.told) return
      this.taken.told = turn
      void this.queueClient.eval(ADVANCE_CLOCK, 1, this.clockKey, turn).catch((error: unknown) => this.options.log.warn({ err: error }, 'bullmq: moving the fairness clock failed'))
    }, 100)
    this.clockTimer.unref()
  }

  async done(job: Job): Promise<void> {
    const w = this.waiting.get(job.key)
    this.waiting.delete(job.key)
    w?.resolve()
  }

  async park(job: Job, reason: string): Promise<void> {
    const w = this.waiting.get(job.key)
    this.waiting.delete(job.key)
    w?.reject(new Error(reason))
  }

  /**
   * Why a batch can't be taken now: Redis holds the backlog, in memory, so the budget is Redis
   * memory, estimated from the strings waiting (REDIS_BYTES_PER_STRING, measured: docs/performance.md).
   * The counts are at most 250 ms old; refreshed in the background.
   */
  refuse(bytes: number, organization?: string): string | undefined {
    void this.backlog().catch(() => undefined)
    const used = this.counts.backlog * REDIS_BYTES_PER_STRING
    const max = this.options.maxBytes ?? Infinity
    if (used + bytes > max && this.counts.backlog > 0) {
      return `the backlog in Redis is full (about ${(used / 2 ** 20).toFixed(0)} MB for ${this.counts.backlog} strings, BACKLOG_MAX_MB=${(max / 2 ** 20).toFixed(0)}): strings are not being reported as fast as they arrive. Check the API's health, or give Redis more memory and raise BACKLOG_MAX_MB`
    }
    if (organization === undefined) return undefined
    const mine = (this.waitingByOrganization.get(organization) ?? 0) * REDIS_BYTES_PER_STRING
    const share = max * (this.options.organizationShare ?? 1)
    if (mine + bytes > share && mine > 0) {
      return `this organization's share of the backlog in Redis is full (about ${(mine / 2 ** 20).toFixed(0)} MB of ${(share / 2 ** 20).toFixed(0)} MB, BACKLOG_ORGANIZATION_SHARE of BACKLOG_MAX_MB): its strings are not being reported as fast as they arrive. Check whether it is held (operator page), or give Redis more memory and raise BACKLOG_MAX_MB`
    }
    return undefined
  }

  /** Strings of each organization waiting (estimated from the fairness positions; at most 250 ms old). */
  waitingPerOrganization(): ReadonlyMap<string, number> {
    return this.waitingByOrganization
  }

  /** Strings queued, delayed or running across every instance (refreshed at most every 250 ms). */
  async backlog(): Promise<number> {
    if (Date.now() - this.counts.at > 250) {
      this.refreshing ??= this.queue
        .getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed')
        .then(async (c) => {
          this.counts = { backlog: (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0), failed: c.failed ?? 0, at: Date.now() }
          await this.refreshShares()
        })
        .finally(() => {
          this.refreshing = undefined
        })
      await this.refreshing
    }
    return this.counts.backlog
  }

  /**
   * Each organization's waiting strings: its position minus the clock (never more than the whole
   * backlog: positions taken by repeats BullMQ absorbed are never served). With the queue empty,
   * clock and positions start again from 0 (atomically: only if Redis still finds it empty).
   */
  private async refreshShares(): Promise<void> {
    const q = (type: string) => this.queue.toKey(type)
    if (this.counts.backlog === 0) {
      await this.queueClient.eval(RESET_WHEN_EMPTY, 7, this.positionsKey, this.clockKey, q('wait'), q('prioritized'), q('active'), q('delayed'), q('paused'))
      this.waitingByOrganization = new Map()
      return
    }
    const [positions, clock] = await Promise.all([this.queueClient.hgetall(this.positionsKey), this.queueClient.get(this.clockKey)])
    const now = Number(clock ?? 0) * FAIR_TURN
    const waiting = new Map<string, number>()
    for (const [organization, at] of Object.entries(positions)) {
      const n = Math.min(this.counts.backlog, Math.max(0, Number(at) - now))
      if (n > 0) waiting.set(organization, n)
    }
    this.waitingByOrganization = waiting
  }

  get size(): number {
    return this.counts.backlog
  }

  get parked(): number {
    return this.counts.failed
  }

  /** Stop taking jobs; jobs still running finish or go back to other instances when their lock expires. */
  async close(): Promise<void> {
    clearTimeout(this.clockTimer)
    await this.worker?.close(true).catch(() => undefined)
    await this.queue.close().catch(() => undefined)
    this.workerClient?.disconnect()
    this.queueClient.disconnect()
  }
}
