// QUEUE=bullmq: several instances share one queue on Redis. The journal's contract holds with
// BullMQ in its place: `append` adds the batch's jobs in one addBulk before the 2XX (Redis keeps
// them), with the de-duplication key as job id so a repeat delivery, to any instance, is absorbed
// while the first is queued or running. A job that finished (kept for DEDUPE_TTL_MS) is replaced by
// the new arrival, marked to be checked with the service first: it may have come back to the step. Any instance's BullMQ
// worker takes jobs and feeds them to its local pipeline, which still groups them per (organization,
// project, step, language) for one PATCH; `done` completes the BullMQ job, `park` fails it so
// BullMQ's own attempts and back-off apply. A killed instance's jobs are taken over by the others
// once their lock expires (BullMQ's stalled-job recovery).
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
  log: Logger
}

/** Redis memory one waiting string takes (BullMQ job hash, id in the wait list), measured: docs/performance.md. */
export const REDIS_BYTES_PER_STRING = 1700

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
  /** Jobs come from BullMQ's worker, not from the intake. */
  readonly delivers = true
  private readonly queue: Queue
  private readonly queueClient: Redis
  private workerClient?: Redis
  private worker?: BullWorker
  private readonly waiting = new Map<string, Waiting>()
  private counts = { backlog: 0, failed: 0, at: 0 }
  private refreshing?: Promise<void>

  constructor(private readonly options: BullmqJournalOptions) {
    this.queueClient = redisClient(options.redisUrl)
    this.queue = new Queue(options.name ?? 'switchyard-strings', { connection: this.queueClient })
    this.queue.on('error', (error) => options.log.error({ err: error }, 'bullmq queue error'))
  }

  newBatchId(): string {
    return newBatchId()
  }

  async append(_batchId: string, jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return
    await this.replaceFinished(jobs)
    const keepDone = Math.max(1, Math.ceil(this.options.dedupeTtlMs / 1000))
    await this.queue.addBulk(
      jobs.map((job) => ({
        name: 'string',
        data: job,
        opts: {
          jobId: job.key,
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
  refuse(bytes: number): string | undefined {
    void this.backlog().catch(() => undefined)
    const used = this.counts.backlog * REDIS_BYTES_PER_STRING
    const max = this.options.maxBytes ?? Infinity
    if (used + bytes <= max || this.counts.backlog === 0) return undefined
    return `the backlog in Redis is full (about ${(used / 2 ** 20).toFixed(0)} MB for ${this.counts.backlog} strings, BACKLOG_MAX_MB=${(max / 2 ** 20).toFixed(0)}): strings are not being reported as fast as they arrive. Check the API's health, or give Redis more memory and raise BACKLOG_MAX_MB`
  }

  /** Strings queued, delayed or running across every instance (refreshed at most every 250 ms). */
  async backlog(): Promise<number> {
    if (Date.now() - this.counts.at > 250) {
      this.refreshing ??= this.queue
        .getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed')
        .then((c) => {
          this.counts = { backlog: (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0), failed: c.failed ?? 0, at: Date.now() }
        })
        .finally(() => {
          this.refreshing = undefined
        })
      await this.refreshing
    }
    return this.counts.backlog
  }

  get size(): number {
    return this.counts.backlog
  }

  get parked(): number {
    return this.counts.failed
  }

  /** Stop taking jobs; jobs still running finish or go back to other instances when their lock expires. */
  async close(): Promise<void> {
    await this.worker?.close(true).catch(() => undefined)
    await this.queue.close().catch(() => undefined)
    this.workerClient?.disconnect()
    this.queueClient.disconnect()
  }
}
