// The intake journal: the jobs of each acknowledged batch, written once, durably, before the 2XX
// (per-string writes would be the bottleneck at tens of thousands of strings per second). An entry
// is deleted when its last job is done; on start, whatever is still there is replayed. Jobs that
// can't be finished are parked in their own entries, never dropped.
//
// Group commit: while one write is under way, the batches that arrive meanwhile wait and then go
// in ONE entry (one row, one fsync) together; each is acknowledged only once that write resolves.
// The jobs of an entry carry its id as their batchId. A quiet worker writes each batch at once.
// Every part of an entry holds its jobs as JSON text in the one compact form (job-codec.ts): a
// webhook's as its decoder already wrote them, with the indexes of the ones that were duplicates;
// other jobs (parked ones journaled again, held decisions) encoded here. Entries of versions 1, 2
// and 3 (written before version 4) still replay.
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type Keyv from 'keyv'
import type { Language } from '../protocol/language.js'
import type { IntakeJournal } from './intake-journal.js'
import { decodeJobs, encodeJobs } from './job-codec.js'
import { asRevisedStrings, jobKeyOf, revisedOf, stepOf, type Job, type RevisedStrings } from '../protocol/job.js'

/** A webhook's jobs as its decoder wrote them: the text, the batch's origin, and the duplicates. */
export interface EncodedJobs {
  organizationId: string
  domain: string
  /** JSON text of the jobs in the compact form (job-codec.ts). */
  text: string
  /** Indexes (into the text's jobs) of jobs that were not taken. */
  skip?: number[]
}

/** A part: the jobs of one webhook, or of one group journaled again, all of one organization.
 *  o: the organization ('' when each job names its own), d: its domain, t: the jobs (job-codec.ts),
 *  skip: indexes of jobs of `t` not taken, n: strings it holds, b: its bytes, s: the step all its
 *  jobs are of (stepOf; absent when they are of several, and in parts written before it). */
interface Part {
  o: string
  d: string
  t: string
  skip?: number[]
  n: number
  b: number
  s?: string
  /** Its jobs at a revision past the first (revisedOf): noted again by a replay. */
  r?: RevisedStrings
}

/** Stored form of a journal entry (version 4): the parts of the batches written together. */
interface Entry {
  v: 4
  parts: Part[]
}

/** What the books keep of one part of an entry. */
export interface PartSummary {
  /** The organization (its id) the part's strings belong to, and its domain. */
  organization: string
  domain: string
  strings: number
  bytes: number
  /** The step all its strings are of (stepOf), or '' (several, or not recorded). */
  step?: string
  /** Its jobs at a revision past the first (absent in parts written before they were kept). */
  revised?: RevisedStrings
}

/** Where an append put a batch: the entry and the part of it. */
export interface Placement {
  entryId: string
  part: number
}

/** The jobs of one part of an entry. */
function decodePart(p: Part, batchId: string, index: number): Job[] {
  const skip = new Set(p.skip ?? [])
  const decoded = decodeJobs(p.t, { organizationId: p.o, domain: p.d, batchId })
  const jobs: Job[] = []
  for (let i = 0; i < decoded.length; i++) {
    if (skip.has(i)) continue
    const job = decoded[i]!
    if (index) job.part = index
    jobs.push(job)
  }
  return jobs
}

// Versions 1 to 3, read only. Version 3 had the parts of version 4, or compact jobs in the form of
// version 2 (`{ c, d? }`, the `n` and `b` optional); version 2 was one such compact list; version 1
// a plain array of jobs.

/** Jobs as version 2 wrote them: [organizationId, domain, moduleKey, projectId, stepId, languageId,
 *  stringId, revision, key, context, maxLength, text, isPlural (0|1), fileType, filePath, labelIds,
 *  source language #, target language #, attempts, invalid (or 0), port]. */
interface EntryV2 {
  v: 2
  languages: Language[]
  jobs: unknown[][]
}
type PartV3 = ({ o: string; d: string; t: string; skip?: number[] } | { c: EntryV2; d?: string }) & { n?: number; b?: number }

function decodeV2(e: EntryV2, batchId: string, part: number): Job[] {
  return e.jobs.map((t) => {
    const [organizationId, domain, moduleKey, projectId, stepId, languageId, stringId, revision, key, context, maxLength, text, isPlural, fileType, filePath, labelIds, source, target, attempts, invalid, port] = t as [
      string, string, string, number, number, string, number, number, string, string, number, string, number, string, string, number[], number, number, number, (string | 0)?, string?,
    ]
    const job: Job = {
      key: '', organizationId, domain, moduleKey, projectId, stepId, languageId, stringId, revision,
      string: { key, context, maxLength, text, isPlural: isPlural === 1, fileType, filePath, labelIds },
      sourceLanguage: e.languages[source]!, targetLanguage: e.languages[target]!, batchId, attempts,
    }
    if (part) job.part = part
    if (invalid) job.invalid = invalid
    if (typeof port === 'string') job.decidedPort = port
    job.key = jobKeyOf(job)
    return job
  })
}

/** A part of any version-3 or version-4 entry as a version-4 part (counted when it was not). */
function partOf(p: PartV3, batchId: string, index: number): Part | { jobs: Job[]; summary: PartSummary } {
  if (!('c' in p)) return { ...p, n: p.n ?? decodePart({ ...p, n: 0, b: 0 }, batchId, index).length, b: p.b ?? p.t.length }
  const jobs = decodeV2(p.c, batchId, index)
  const domain = p.d ?? String(p.c.jobs[0]?.[1] ?? '')
  const organization = String(p.c.jobs[0]?.[0] ?? domain)
  return { jobs, summary: { organization, domain, strings: p.n ?? jobs.length, bytes: p.b ?? JSON.stringify(p.c).length, step: stepOfJobs(jobs) } }
}

/** An entry of version 4, or 3 (whose parts may be version-2 compact lists). */
const isParts = (value: unknown, v: 3 | 4): value is { v: 3 | 4; parts: PartV3[] } => !!value && (value as Entry).v === v && Array.isArray((value as Entry).parts)

/** The jobs of part `part` of a stored entry of any version. */
function readPartOf(value: unknown, batchId: string, part: number): Job[] {
  if (isParts(value, 4) || isParts(value, 3)) {
    const p = value.parts[part]
    if (!p) return []
    const read = partOf(p, batchId, part)
    return 'jobs' in read ? read.jobs : decodePart(read, batchId, part)
  }
  if (part !== 0) return []
  if (Array.isArray(value)) return value as Job[]
  const e = value as EntryV2 | null
  return e && e.v === 2 && Array.isArray(e.jobs) && Array.isArray(e.languages) ? decodeV2(e, batchId, 0) : []
}

/** Every job of a stored entry of any version; undefined when it is not an entry. */
/** A parked job as stored; one parked before version 4 named its decided port `port`. */
function parkedJob(p: ParkedJob): ParkedJob {
  const job = p.job as Job & { port?: string }
  if (job && typeof job.port === 'string' && job.decidedPort === undefined) {
    job.decidedPort = job.port
    delete job.port
  }
  return p
}

export function decodeEntry(value: unknown, batchId: string): Job[] | undefined {
  if (isParts(value, 4) || isParts(value, 3)) return value.parts.flatMap((_, i) => readPartOf(value, batchId, i))
  if (Array.isArray(value)) return value as Job[]
  const e = value as EntryV2 | null
  return e && e.v === 2 && Array.isArray(e.jobs) && Array.isArray(e.languages) ? decodeV2(e, batchId, 0) : undefined
}

/** Organization, strings and bytes of each part of a stored entry, read without making its jobs. */
export function summarizeEntry(value: unknown, batchId: string): PartSummary[] | undefined {
  if (isParts(value, 4) || isParts(value, 3)) {
    return value.parts.map((p, i) => {
      const read = partOf(p, batchId, i)
      return 'jobs' in read ? read.summary : { organization: read.o || read.d, domain: read.d, strings: read.n, bytes: read.b, step: read.s ?? '', ...(asRevisedStrings(read.r) ? { revised: read.r! } : {}) }
    })
  }
  // Versions 1 and 2: one part, under the organization of its first job.
  const jobs = decodeEntry(value, batchId)
  if (!jobs) return undefined
  return [{ organization: jobs[0]?.organizationId ?? '', domain: jobs[0]?.domain ?? '', strings: jobs.length, bytes: JSON.stringify(value).length, step: stepOfJobs(jobs) }]
}

/** A batch journaled from its decoder's text alone (no jobs made): how many, and whose. */
export interface CountedJobs {
  count: number
  organization: string
  domain: string
  /** The step all of them are of (stepOf), or '' (several). */
  step?: string
  /** Those at a revision past the first (revisedOf). */
  revised?: RevisedStrings
}

interface QueuedAppend {
  jobs: Job[]
  counted: CountedJobs
  encoded?: EncodedJobs
  batchId: string
  resolve(placement: Placement): void
  reject(error: unknown): void
}

const BATCH = 'b:'
const PARKED = 'p:'
/** When a process last said it was alive on this journal (not a batch: load() passes it by). */
const ALIVE = 'alive'
/** Which process said so last (host, pid and a random part): another's mark while this one runs is another replica. */
const ALIVE_BY = 'alive-by'

export interface ParkedJob {
  job: Job
  reason: string
  at: number
}

interface PartBook {
  organization: string
  /** Strings of the part not yet done. */
  left: number
  bytes: number
}

interface EntryBook {
  parts: PartBook[]
  left: number
}

/** Strings journaled and not done, and the bytes of the parts that hold them. */
export interface Usage {
  strings: number
  bytes: number
  /** The domain the organization is reported under (per-organization usage only). */
  domain?: string
}

/** The organization a job's line of the backlog is kept under: its id (its domain if it has none). */
export function organizationOf(job: Pick<Job, 'organizationId' | 'domain'>): string {
  return job.organizationId || job.domain
}

/** The step (stepOf) all the jobs are of, or '' when they are of several (or none). */
export function stepOfJobs(jobs: ReadonlyArray<Pick<Job, 'projectId' | 'stepId'>>): string {
  const first = jobs[0]
  if (!first) return ''
  for (const job of jobs) if (job.projectId !== first.projectId || job.stepId !== first.stepId) return ''
  return stepOf(first)
}

/** A new id for a journal entry (and the batches written in it): the time in base 36, then random. */
export function newBatchId(): string {
  return `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`
}

/** When an entry was written (its id starts with the time in base 36: newBatchId). */
export function entryTime(entryId: string): number {
  const t = parseInt(entryId.split('-')[0] ?? '', 36)
  return Number.isFinite(t) ? t : 0
}

export class Journal implements IntakeJournal {
  /** Each entry's parts and how many of their strings are not done: ids and counts, no jobs. */
  private readonly entries = new Map<string, EntryBook>()
  private readonly usage = new Map<string, Usage>()
  private outstanding = 0
  private parkedCount = 0
  private readonly queued: QueuedAppend[] = []
  private writing = false
  /** The entry `readPart` last read whole. */
  private lastRead?: { entryId: string; value: unknown }
  /** The part `readPart` last read alone (a large part is taken into the window in chunks). */
  private lastPart?: { entryId: string; part: number; value: Part }

  /**
   * @param extract where the store can hand back parts of a stored value (SQLite), the journal
   * reads one part of an entry instead of the whole row (Stores.extract).
   */
  constructor(
    private readonly store: Keyv,
    private readonly extract?: (key: string, paths: string[]) => Promise<unknown[] | undefined>,
    /** Stores.scan of the journal's namespace with a filter, where the back end has it (SQLite, PostgreSQL). */
    private readonly scanStore?: (prefixes: string[], filter: { contains: string; keep(key: string, value: unknown): boolean }) => Promise<Array<[string, unknown]>>,
  ) {}

  newBatchId(): string {
    return newBatchId()
  }

  /**
   * Durably record the jobs of one batch (all of one organization). Resolves only once the store
   * has them, with where they went: the jobs' batchId becomes the id of the entry they were written
   * in (shared with concurrent batches) and their part its place in it.
   */
  append(batchId: string, jobs: Job[] | CountedJobs, encoded?: EncodedJobs): Promise<Placement> {
    const counted = Array.isArray(jobs) ? (jobs[0] ? { count: jobs.length, organization: organizationOf(jobs[0]), domain: jobs[0].domain } : undefined) : jobs
    if (!counted || counted.count === 0) return Promise.resolve({ entryId: '', part: 0 })
    if (!Array.isArray(jobs) && !encoded) return Promise.reject(new Error('a batch without its jobs needs its encoded text'))
    return new Promise((resolve, reject) => {
      this.queued.push({ jobs: Array.isArray(jobs) ? jobs : [], counted, encoded, batchId, resolve, reject })
      if (!this.writing) void this.writeQueued()
    })
  }

  private static partOf(g: QueuedAppend): Part {
    if (g.encoded) {
      const e = g.encoded
      const step = g.jobs.length ? stepOfJobs(g.jobs) : g.counted.step
      const r = g.jobs.length ? revisedOf(g.jobs) : g.counted.revised
      return { o: e.organizationId, d: e.domain, t: e.text, ...(e.skip?.length ? { skip: e.skip } : {}), n: g.counted.count, b: e.text.length, ...(step ? { s: step } : {}), ...(r ? { r } : {}) }
    }
    const t = encodeJobs(g.jobs)
    const step = stepOfJobs(g.jobs)
    const r = revisedOf(g.jobs)
    return { o: g.counted.organization, d: g.counted.domain, t, n: g.jobs.length, b: t.length, ...(step ? { s: step } : {}), ...(r ? { r } : {}) }
  }

  private async writeQueued(): Promise<void> {
    this.writing = true
    try {
      while (this.queued.length) {
        const group = this.queued.splice(0)
        const entryId = group[0]!.batchId
        const parts = group.map(Journal.partOf)
        try {
          await this.store.set(BATCH + entryId, { v: 4, parts } satisfies Entry)
        } catch (error) {
          for (const g of group) g.reject(error)
          continue
        }
        this.book(entryId, parts.map((p, i) => ({ organization: group[i]!.counted.organization, domain: group[i]!.counted.domain, strings: p.n!, bytes: p.b! })))
        for (let i = 0; i < group.length; i++) {
          const g = group[i]!
          for (const job of g.jobs) {
            job.batchId = entryId
            if (i) job.part = i
            else delete job.part
          }
          g.resolve({ entryId, part: i })
        }
      }
    } finally {
      this.writing = false
    }
  }

  private book(entryId: string, parts: PartSummary[]): void {
    const book: EntryBook = { parts: [], left: 0 }
    for (const p of parts) {
      book.parts.push({ organization: p.organization, left: p.strings, bytes: p.bytes })
      book.left += p.strings
      const u = this.usage.get(p.organization) ?? { strings: 0, bytes: 0, domain: p.domain }
      u.strings += p.strings
      u.bytes += p.strings > 0 ? p.bytes : 0
      this.usage.set(p.organization, u)
    }
    this.entries.set(entryId, book)
    this.outstanding += book.left
  }

  /** A job is finished (its output was accepted, or it was superseded, or it was journaled again). */
  async done(job: Job): Promise<void> {
    const book = this.entries.get(job.batchId)
    if (!book) return
    const part = book.parts[job.part ?? 0] ?? book.parts[0]!
    if (part.left > 0) {
      part.left--
      const u = this.usage.get(part.organization)
      if (u) {
        u.strings--
        if (part.left === 0) u.bytes -= part.bytes
        if (u.strings <= 0) this.usage.delete(part.organization)
      }
    }
    book.left--
    this.outstanding--
    if (book.left > 0) return
    this.entries.delete(job.batchId)
    if (this.lastRead?.entryId === job.batchId) this.lastRead = undefined
    if (this.lastPart?.entryId === job.batchId) this.lastPart = undefined
    await this.store.delete(BATCH + job.batchId)
  }

  /** The jobs of one part of an entry, read back from the store (the backlog refilling the queue). */
  async readPart(entryId: string, part: number): Promise<Job[]> {
    if (this.extract && this.lastRead?.entryId !== entryId) {
      const alone = this.lastPart?.entryId === entryId && this.lastPart.part === part ? this.lastPart.value : await this.readPartAlone(entryId, part)
      if (alone) {
        this.lastPart = { entryId, part, value: alone }
        return decodePart(alone, entryId, part)
      }
    }
    // Without the store's help (or for an entry of an older version), the parts of one entry
    // (batches written together), usually read one after another, share one read and parse.
    const value = this.lastRead?.entryId === entryId ? this.lastRead.value : await this.store.get(BATCH + entryId)
    this.lastRead = { entryId, value }
    return readPartOf(value, entryId, part)
  }

  /**
   * One part of a version-4 entry, from the store's parts of the row: an entry holds up to a group
   * of batches (1-2 MB of text), which the main thread read and parsed whole, once per entry, to
   * take its batches one at a time (the burst's drain, issue 16). Undefined when the entry is not
   * of version 4, or not there: the whole read then decides. A part past the end has no jobs.
   */
  private async readPartAlone(entryId: string, part: number): Promise<Part | undefined> {
    const at = `$.parts[${part}]`
    const values = await this.extract!(BATCH + entryId, ['$.v', `${at}.o`, `${at}.d`, `${at}.t`, `${at}.skip`])
    if (!values) return undefined
    const [v, o, d, t, skip] = values
    if (v !== 4) return undefined
    const p: Part = { o: typeof o === 'string' ? o : '', d: typeof d === 'string' ? d : '', t: typeof t === 'string' ? t : '', n: 0, b: 0 }
    if (typeof skip === 'string') p.skip = JSON.parse(skip) as number[]
    return p
  }

  /** Set a job aside with the reason; it stays in the store until retried. */
  async park(job: Job, reason: string): Promise<void> {
    const entry: ParkedJob = { job, reason, at: Date.now() }
    await this.store.set(PARKED + job.key, entry)
    this.parkedCount++
    await this.done(job)
  }

  /**
   * Go through what an earlier run left, one stored entry at a time: each batch entry is taken into
   * the books and handed to `batch` as its parts (organization, strings, bytes), without its jobs;
   * parked jobs are returned. Entries written by this run meanwhile are skipped.
   */
  async scan(batch: (entryId: string, parts: PartSummary[]) => void): Promise<ParkedJob[]> {
    const parked: ParkedJob[] = []
    const iterator = this.store.iterator?.(undefined)
    if (!iterator) return parked
    for await (const [rawKey, value] of iterator as AsyncIterable<[string, unknown]>) {
      const key = String(rawKey).replace(/^journal:/, '')
      if (key.startsWith(BATCH)) {
        const entryId = key.slice(BATCH.length)
        if (this.entries.has(entryId)) continue
        const parts = summarizeEntry(value, entryId)
        if (!parts) continue
        this.book(entryId, parts)
        batch(entryId, parts)
      } else if (key.startsWith(PARKED) && value && typeof value === 'object') parked.push(parkedJob(value as ParkedJob))
    }
    return parked
  }

  /**
   * Every entry left by an earlier run, with its jobs, taken into the books: for tests and
   * diagnostics only. The worker's replay goes through `scan` and reads parts as the window drains.
   */
  async load(): Promise<{ batches: Array<{ batchId: string; jobs: Job[] }>; parked: ParkedJob[] }> {
    const refs: Array<[string, number]> = []
    const parked = await this.scan((entryId, parts) => parts.forEach((_, i) => refs.push([entryId, i])))
    const batches: Array<{ batchId: string; jobs: Job[] }> = []
    for (const [entryId, part] of refs) {
      if (batches.at(-1)?.batchId !== entryId) batches.push({ batchId: entryId, jobs: [] })
      batches.at(-1)!.jobs.push(...(await this.readPart(entryId, part)))
    }
    return { batches, parked }
  }

  /**
   * Up to `limit` strings parked at or before `before` (ms), for a retry while the worker runs (the
   * periodic retry of parked strings): read a page at a time where the store can (a range of
   * keys), else by passing over the namespace as a start does; only those kept are held in memory.
   */
  async parkedJobs(limit: number, before = Number.POSITIVE_INFINITY): Promise<ParkedJob[]> {
    const parked: ParkedJob[] = []
    const keep = (value: unknown) => {
      if (parked.length >= limit || !value || typeof value !== 'object') return false
      // One parked since the retry began (parked again by it, say) waits for the next one.
      if (typeof (value as ParkedJob).at === 'number' && (value as ParkedJob).at > before) return false
      parked.push(parkedJob(value as ParkedJob))
      return true
    }
    if (this.scanStore) {
      await this.scanStore([PARKED], { contains: '"reason"', keep: (_key, value) => keep(value) })
      return parked
    }
    const iterator = this.store.iterator?.(undefined)
    if (!iterator) return parked
    for await (const [rawKey, value] of iterator as AsyncIterable<[string, unknown]>) {
      if (String(rawKey).replace(/^journal:/, '').startsWith(PARKED)) keep(value)
      if (parked.length >= limit) break
    }
    return parked
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

  /**
   * Record that this process is alive now. Resolves with the process that said so since this one
   * last did, if another did: with the journal in a shared store (QUEUE=memory), another replica
   * on the same journal, whose entries a replica that starts replays (docs/deployment.md).
   */
  async markAlive(): Promise<{ other?: string }> {
    const before = this.markedOnce ? await this.store.get<string>(ALIVE_BY) : undefined
    await this.store.set(ALIVE, Date.now())
    await this.store.set(ALIVE_BY, this.instance)
    this.markedOnce = true
    return typeof before === 'string' && before !== this.instance ? { other: before } : {}
  }

  /** This process, as it marks the journal alive. */
  private readonly instance = `${hostname()} pid ${process.pid} ${randomBytes(3).toString('hex')}`
  private markedOnce = false

  /** Strings and bytes journaled and not done, of one organization (its id) or all. */
  used(organization?: string): Usage {
    if (organization !== undefined) return this.usage.get(organization) ?? { strings: 0, bytes: 0 }
    const all = { strings: 0, bytes: 0 }
    for (const u of this.usage.values()) {
      all.strings += u.strings
      all.bytes += u.bytes
    }
    return all
  }

  /** Strings and bytes per organization (id). */
  usageByOrganization(): Map<string, Usage> {
    return this.usage
  }

  /** Jobs acknowledged and not yet done. */
  get size(): number {
    return this.outstanding
  }

  get parked(): number {
    return this.parkedCount
  }
}
