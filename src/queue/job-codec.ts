// The one compact form of jobs, used wherever jobs are written down: the webhook decoder writes a
// batch's jobs in it (in a thread, as JSON text cheap to hand back), and the journal stores that
// text as it is, and writes the jobs it journals again (parked, held) in the same form. Compact
// because serializing and writing whole job objects was the largest cost of a webhook after
// parsing (bench): each language record is written once, each job as an array.
import type { Job } from '../protocol/job.js'
import { jobKeyOf } from '../protocol/job.js'
import type { Language } from '../protocol/language.js'
import type { Review } from '../protocol/findings.js'

/**
 * One job: [organizationId ('' when the event named none), moduleKey, projectId, stepId,
 * languageId, stringId, revision, key, context, maxLength, text, isPlural (0|1), fileType, filePath,
 * labelIds, source language #, target language #, then, only when one of them is set: why the event
 * was invalid (0: it was not; an invalid job is parked with "", never run), pipeline runs that ended
 * in `retry` so far, the port decided for a job held after its run, and the findings (review) it
 * was decided with].
 */
export type JobTuple = [
  organizationId: string, moduleKey: string, projectId: number, stepId: number, languageId: string, stringId: number, revision: number,
  key: string, context: string, maxLength: number, text: string, isPlural: 0 | 1, fileType: string, filePath: string, labelIds: number[],
  source: number, target: number, invalid?: string | 0, attempts?: number, decidedPort?: string, decidedReview?: Review | null, decidedOn?: string,
]

/** What `encodeJobs` writes, as JSON text. */
export interface EncodedJobList {
  languages: Language[]
  jobs: JobTuple[]
}

/** The fields of a job the compact form keeps (a job not yet queued has no key, batch or attempts). */
export type JobFields = Pick<Job, 'organizationId' | 'moduleKey' | 'projectId' | 'stepId' | 'languageId' | 'stringId' | 'revision' | 'string' | 'sourceLanguage' | 'targetLanguage'> &
  Partial<Pick<Job, 'invalid' | 'attempts' | 'decidedPort' | 'decidedReview' | 'decidedOn'>>

/** The language record's documented fields that are strings (the interface document: all but dialectOf). */
const STRING_FIELDS = ['id', 'name', 'editorCode', 'twoLettersCode', 'threeLettersCode', 'locale', 'androidCode', 'osxCode', 'osxLocale', 'textDirection'] as const

/**
 * Identity of a language record: two records with the same key are equal, field for field. A
 * record of just the documented fields, of their types, is keyed by its fields joined (not
 * JSON.stringify: it runs twice per event, bench); any other (a field the service added since, a
 * value of another type, a separator in a value) by its JSON text, so that records differing
 * anywhere are never taken for one another (the records are shared across deliveries and
 * organizations, see `intern`).
 */
export function languageKey(l: Language): string {
  const fields = l as unknown as Record<string, unknown>
  if (Object.keys(l).length !== STRING_FIELDS.length + 1) return wholeKey(l)
  let key = 'f'
  for (const name of STRING_FIELDS) {
    const value = fields[name]
    if (typeof value !== 'string' || value.includes('\u0001')) return wholeKey(l)
    key += `${value}\u0001`
  }
  const dialect = fields.dialectOf
  if (dialect === null) return `${key}n`
  return typeof dialect === 'string' ? `${key}s${dialect}` : wholeKey(l)
}

const wholeKey = (l: Language): string => `j${JSON.stringify(l)}`

/** Jobs written one by one into the compact form; language records that are equal are written once. */
export class JobEncoder {
  private readonly languages: Language[] = []
  private readonly languageIndex = new Map<string, number>()
  private readonly tuples: JobTuple[] = []

  get count(): number {
    return this.tuples.length
  }

  add(j: JobFields): void {
    const s = j.string
    const tuple: JobTuple = [
      j.organizationId, j.moduleKey, j.projectId, j.stepId, j.languageId, j.stringId, j.revision,
      s.key, s.context, s.maxLength, s.text, s.isPlural ? 1 : 0, s.fileType, s.filePath, s.labelIds,
      this.languageAt(j.sourceLanguage), this.languageAt(j.targetLanguage),
    ]
    // The optional tail, as short as it can be: most jobs have none of it.
    const tail: [string | 0, number, string, Review | null, string?] = [j.invalid || 0, j.attempts ?? 0, j.decidedPort ?? '', j.decidedReview ?? null, j.decidedOn]
    const length = j.decidedOn !== undefined && j.decidedPort !== undefined ? 5 : j.decidedReview !== undefined && j.decidedPort !== undefined ? 4 : j.decidedPort !== undefined ? 3 : j.attempts ? 2 : j.invalid ? 1 : 0
    for (let i = 0; i < length; i++) (tuple as unknown[]).push(tail[i])
    this.tuples.push(tuple)
  }

  /** The JSON text of what was added ('' when nothing was). */
  text(): string {
    return this.tuples.length ? JSON.stringify({ languages: this.languages, jobs: this.tuples } satisfies EncodedJobList) : ''
  }

  private languageAt(l: Language): number {
    const k = languageKey(l)
    let i = this.languageIndex.get(k)
    if (i === undefined) {
      i = this.languages.length
      this.languages.push(l)
      this.languageIndex.set(k, i)
    }
    return i
  }
}

/** Jobs in the compact form, as JSON text ('' for none). */
export function encodeJobs(jobs: readonly JobFields[]): string {
  const encoder = new JobEncoder()
  for (const j of jobs) encoder.add(j)
  return encoder.text()
}

// Language records repeat in every event of a batch; share one object per distinct record so a
// queue of thousands of jobs holds a handful of them. Bounded: languages are few.
const languages = new Map<string, Language>()
function intern(language: Language): Language {
  const k = languageKey(language)
  const known = languages.get(k)
  if (known) return known
  if (languages.size > 2000) languages.clear()
  languages.set(k, language)
  return language
}

/** Where decoded jobs come from: the batch's organization and domain, and the journal entry. */
export interface BatchOrigin {
  /** The delivery's organization; when '', each job's own. */
  organizationId: string
  domain: string
  batchId: string
}

/** The jobs of JSON text written by `encodeJobs` or a `JobEncoder`. */
export function decodeJobs(text: string, origin: BatchOrigin): Job[] {
  if (!text) return []
  const decoded = JSON.parse(text) as EncodedJobList
  const langs = decoded.languages.map(intern)
  const jobs: Job[] = new Array(decoded.jobs.length)
  for (let i = 0; i < decoded.jobs.length; i++) {
    const [organizationId, moduleKey, projectId, stepId, languageId, stringId, revision, key, context, maxLength, text, isPlural, fileType, filePath, labelIds, source, target, invalid, attempts, decidedPort, decidedReview, decidedOn] =
      decoded.jobs[i]!
    const job: Job = {
      key: '',
      organizationId: origin.organizationId || organizationId,
      domain: origin.domain,
      moduleKey,
      projectId,
      stepId,
      languageId,
      stringId,
      revision,
      string: { key, context, maxLength, text, isPlural: isPlural === 1, fileType, filePath, labelIds },
      sourceLanguage: langs[source]!,
      targetLanguage: langs[target]!,
      batchId: origin.batchId,
      attempts: attempts ?? 0,
    }
    if (invalid) job.invalid = invalid
    if (decidedPort !== undefined) job.decidedPort = decidedPort
    if (decidedPort !== undefined && decidedReview) job.decidedReview = decidedReview
    if (decidedPort !== undefined && typeof decidedOn === 'string') job.decidedOn = decidedOn
    job.key = jobKeyOf(job)
    jobs[i] = job
  }
  return jobs
}
