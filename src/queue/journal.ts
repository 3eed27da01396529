// The intake journal: the jobs of each acknowledged batch, written once, durably, before the 2XX
// (per-string writes would be the bottleneck at tens of thousands of strings per second). An entry
// is deleted when its last job is done; on start, whatever is still there is replayed. Jobs that
// can't be finished are parked in their own entries, never dropped.
import { randomBytes } from 'node:crypto'
import type Keyv from 'keyv'
import type { Job } from './job.js'

const BATCH = 'b:'
const PARKED = 'p:'

export interface ParkedJob {
  job: Job
  reason: string
  at: number
}

export class Journal {
  /** Jobs of each batch not yet done. */
  private readonly remaining = new Map<string, number>()
  private outstanding = 0
  private parkedCount = 0

  constructor(private readonly store: Keyv) {}

  newBatchId(): string {
    return `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`
  }

  /** Durably record the jobs of one batch. Resolves only once the store has them. */
  async append(batchId: string, jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return
    await this.store.set(BATCH + batchId, jobs)
    this.remaining.set(batchId, (this.remaining.get(batchId) ?? 0) + jobs.length)
    this.outstanding += jobs.length
  }

  /** A job is finished (its output was accepted, or it was superseded). */
  async done(job: Job): Promise<void> {
    const left = (this.remaining.get(job.batchId) ?? 0) - 1
    if (left > 0) {
      this.remaining.set(job.batchId, left)
      this.outstanding--
      return
    }
    if (!this.remaining.has(job.batchId)) return
    this.remaining.delete(job.batchId)
    this.outstanding--
    await this.store.delete(BATCH + job.batchId)
  }

  /** Set a job aside with the reason; it stays in the store until retried. */
  async park(job: Job, reason: string): Promise<void> {
    const entry: ParkedJob = { job, reason, at: Date.now() }
    await this.store.set(PARKED + job.key, entry)
    this.parkedCount++
    await this.done(job)
  }

  /** Every batch entry and parked job left by an earlier run (or another instance). */
  async load(): Promise<{ batches: Array<{ batchId: string; jobs: Job[] }>; parked: ParkedJob[] }> {
    const batches: Array<{ batchId: string; jobs: Job[] }> = []
    const parked: ParkedJob[] = []
    const iterator = this.store.iterator?.(undefined)
    if (!iterator) return { batches, parked }
    for await (const [rawKey, value] of iterator as AsyncIterable<[string, unknown]>) {
      const key = String(rawKey).replace(/^journal:/, '')
      if (key.startsWith(BATCH) && Array.isArray(value)) batches.push({ batchId: key.slice(BATCH.length), jobs: value as Job[] })
      else if (key.startsWith(PARKED) && value && typeof value === 'object') parked.push(value as ParkedJob)
    }
    return { batches, parked }
  }

  /** Take replayed batches back into the books (their entries are still in the store). */
  adopt(batchId: string, count: number): void {
    this.remaining.set(batchId, (this.remaining.get(batchId) ?? 0) + count)
    this.outstanding += count
  }

  /** Remove a parked entry that is being retried (its job is journaled again first). */
  async unpark(job: Job): Promise<void> {
    await this.store.delete(PARKED + job.key)
    this.parkedCount = Math.max(0, this.parkedCount - 1)
  }

  /** Jobs acknowledged and not yet done. */
  get size(): number {
    return this.outstanding
  }

  get parked(): number {
    return this.parkedCount
  }
}
