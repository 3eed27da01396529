// The intake journal: the jobs of each acknowledged batch, written once, durably, before the 2XX
// (per-string writes would be the bottleneck at tens of thousands of strings per second). An entry
// is deleted when its last job is done; on start, whatever is still there is replayed. Jobs that
// can't be finished are parked in their own entries, never dropped.
//
// Group commit: while one write is under way, the batches that arrive meanwhile wait and then go
// in ONE entry (one row, one fsync) together; each is acknowledged only once that write resolves.
// The jobs of an entry carry its id as their batchId. A quiet worker writes each batch at once.
// Entries are stored compactly because serializing and writing the full job objects was the
// largest cost of a webhook after parsing (bench). A webhook's jobs are stored as the JSON text its
// decoder already made (decode-batch.ts: each language record once, jobs as arrays), with the
// indexes of the ones that were duplicates; other jobs (parked ones journaled again) in the
// compact form of version 2. Versions 1 and 2 still replay.
import { randomBytes } from 'node:crypto'
import type Keyv from 'keyv'
import type { Language } from '../engine/types.js'
import { toJobs } from '../webhooks/unbatch.js'
import type { IntakeJournal } from './intake-journal.js'
import { jobKeyOf, type Job } from './job.js'

/** Stored form of a journal entry (version 2); version 1 was a plain array of jobs. */
interface CompactEntry {
  v: 2
  languages: Language[]
  /** [organizationId, domain, moduleKey, projectId, stepId, languageId, stringId, revision,
   *  key, context, maxLength, text, isPlural (0|1), fileType, filePath, labelIds, source language #, target language #, attempts,
   *  and why the event was invalid, if it was] */
  jobs: unknown[][]
}

/** A webhook's jobs as its decoder wrote them: the text, the batch's origin, and the duplicates. */
export interface EncodedJobs {
  organizationId: string
  domain: string
  /** JSON text of DecodedJobs (decode-batch.ts). */
  text: string
  /** Indexes (into the text's jobs) of jobs that were not taken. */
  skip?: number[]
}

type Part = { o: string; d: string; t: string; skip?: number[] } | { c: CompactEntry }

/** Stored form of a journal entry (version 3): the parts of the batches written together. */
interface EntryV3 {
  v: 3
  parts: Part[]
}

export function encodeEntry(jobs: Job[]): CompactEntry {
  const languages: Language[] = []
  const index = new Map<Language, number>()
  const at = (l: Language) => {
    let i = index.get(l)
    if (i === undefined) {
      i = languages.length
      languages.push(l)
      index.set(l, i)
    }
    return i
  }
  return {
    v: 2,
    languages,
    jobs: jobs.map((j) => [
      j.organizationId, j.domain, j.moduleKey, j.projectId, j.stepId, j.languageId, j.stringId, j.revision,
      j.string.key, j.string.context, j.string.maxLength, j.string.text, j.string.isPlural ? 1 : 0, j.string.fileType, j.string.filePath, j.string.labelIds,
      at(j.sourceLanguage), at(j.targetLanguage), j.attempts, ...(j.invalid ? [j.invalid] : []),
    ]),
  }
}

export function decodeEntry(value: unknown, batchId: string): Job[] | undefined {
  if (Array.isArray(value)) return value as Job[]
  const v3 = value as EntryV3 | null
  if (v3 && v3.v === 3 && Array.isArray(v3.parts)) {
    const jobs: Job[] = []
    for (const part of v3.parts) {
      if ('c' in part) {
        jobs.push(...(decodeEntry(part.c, batchId) ?? []))
        continue
      }
      const skip = new Set(part.skip ?? [])
      const decoded = toJobs(part.t, { organizationId: part.o, domain: part.d, batchId })
      for (let i = 0; i < decoded.length; i++) if (!skip.has(i)) jobs.push(decoded[i]!)
    }
    return jobs
  }
  const e = value as CompactEntry | null
  if (!e || e.v !== 2 || !Array.isArray(e.jobs) || !Array.isArray(e.languages)) return undefined
  return e.jobs.map((t) => {
    const [organizationId, domain, moduleKey, projectId, stepId, languageId, stringId, revision, key, context, maxLength, text, isPlural, fileType, filePath, labelIds, source, target, attempts, invalid] = t as [
      string, string, string, number, number, string, number, number, string, string, number, string, number, string, string, number[], number, number, number, string?,
    ]
    const job: Job = {
      key: '', organizationId, domain, moduleKey, projectId, stepId, languageId, stringId, revision,
      string: { key, context, maxLength, text, isPlural: isPlural === 1, fileType, filePath, labelIds },
      sourceLanguage: e.languages[source]!, targetLanguage: e.languages[target]!, batchId, attempts,
    }
    if (invalid) job.invalid = invalid
    job.key = jobKeyOf(job)
    return job
  })
}

interface QueuedAppend {
  jobs: Job[]
  encoded?: EncodedJobs
  batchId: string
  resolve(): void
  reject(error: unknown): void
}

const BATCH = 'b:'
const PARKED = 'p:'
/** When a process last said it was alive on this journal (not a batch: load() passes it by). */
const ALIVE = 'alive'

export interface ParkedJob {
  job: Job
  reason: string
  at: number
}

export class Journal implements IntakeJournal {
  /** Jobs go from the intake to the local queue; the journal only keeps them (see BullmqJournal). */
  readonly delivers = false
  /** Jobs of each batch not yet done. */
  private readonly remaining = new Map<string, number>()
  private outstanding = 0
  private parkedCount = 0
  private readonly queued: QueuedAppend[] = []
  private writing = false

  constructor(private readonly store: Keyv) {}

  newBatchId(): string {
    return `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`
  }

  /**
   * Durably record the jobs of one batch. Resolves only once the store has them. The jobs'
   * batchId becomes the id of the entry they were written in (shared with concurrent batches).
   */
  append(batchId: string, jobs: Job[], encoded?: EncodedJobs): Promise<void> {
    if (jobs.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.queued.push({ jobs, encoded, batchId, resolve, reject })
      if (!this.writing) void this.writeQueued()
    })
  }

  private async writeQueued(): Promise<void> {
    this.writing = true
    try {
      while (this.queued.length) {
        const group = this.queued.splice(0)
        const entryId = group[0]!.batchId
        const all: Job[] = []
        for (const g of group) for (const job of g.jobs) all.push(job)
        const entry: EntryV3 = {
          v: 3,
          parts: group.map((g): Part => (g.encoded ? { o: g.encoded.organizationId, d: g.encoded.domain, t: g.encoded.text, ...(g.encoded.skip?.length ? { skip: g.encoded.skip } : {}) } : { c: encodeEntry(g.jobs) })),
        }
        try {
          await this.store.set(BATCH + entryId, entry)
        } catch (error) {
          for (const g of group) g.reject(error)
          continue
        }
        for (const job of all) job.batchId = entryId
        this.remaining.set(entryId, (this.remaining.get(entryId) ?? 0) + all.length)
        this.outstanding += all.length
        for (const g of group) g.resolve()
      }
    } finally {
      this.writing = false
    }
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
      const jobs = key.startsWith(BATCH) ? decodeEntry(value, key.slice(BATCH.length)) : undefined
      if (jobs) batches.push({ batchId: key.slice(BATCH.length), jobs })
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

  async lastAlive(): Promise<number | undefined> {
    const at = await this.store.get<number>(ALIVE)
    return typeof at === 'number' ? at : undefined
  }

  async markAlive(): Promise<void> {
    await this.store.set(ALIVE, Date.now())
  }

  /** Jobs acknowledged and not yet done. */
  get size(): number {
    return this.outstanding
  }

  get parked(): number {
    return this.parkedCount
  }
}
