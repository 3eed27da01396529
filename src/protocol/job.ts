// A job: one string in one target language at one step, as much of the event as the pipeline and
// the reporter need and no more (the project's logo and other bulk stay out of the queue). The
// webhook decoder makes jobs, the queue keeps them, the reporter reports them.
import type { Review } from './findings.js'
import type { Language } from './language.js'

/** A string's fields besides its texts, as a job keeps them and a check sees them (`Item`). */
export interface StringFields {
  key: string
  context: string
  /** 0 when the string has no limit. */
  maxLength: number
  isPlural: boolean
  /** The file's type as the service names it (`android`, `json`, `xliff`, ...); '' when unknown. */
  fileType: string
  filePath: string
  labelIds: number[]
}

export interface Job {
  /** De-duplication identity: organization, project, step, language, string and revision. */
  key: string
  organizationId: string
  domain: string
  moduleKey: string
  projectId: number
  stepId: number
  languageId: string
  stringId: number
  revision: number
  /** The string; `text` is its source text. */
  string: StringFields & { text: string }
  sourceLanguage: Language
  targetLanguage: Language
  /** Journal entry (acknowledged batch) the job belongs to. */
  batchId: string
  /** Which part of that entry (one webhook, or one re-journaled group) holds it; 0 when absent. */
  part?: number
  /**
   * The port the pipeline decided, when the job was held after it ran (its organization could not
   * be reported for): it goes back to the reporter, and no check runs twice, unless it was
   * decided on a translation that has changed since (`decidedOn`). Journaled.
   */
  decidedPort?: string
  /**
   * The findings that decision came with (its pipeline's review), kept with it: once the held
   * decision is reported, its findings are logged and its issues raised or resolved as if it had
   * gone through at once. Journaled.
   */
  decidedReview?: Review
  /**
   * A fingerprint of the translation that decision was made on, when its pipeline read one: the
   * held decision goes as decided only while the translation is still that one (a string sent back
   * or resent while held, with its translation changed, is new work on the translation as it is
   * now, platform notes "A string comes back"). Journaled.
   */
  decidedOn?: string
  /** Pipeline runs that ended in `retry` so far. */
  attempts: number
  /**
   * The event failed validation (why): it is parked at the service with "" and never run. Kept in
   * the journal with the job.
   */
  invalid?: string
  /**
   * Ask the service before running: this string was finished here before (or the journal replays
   * it), so it may be a repeat of a delivery already reported, or it may have come back to the step.
   * Only `NEED_PROCESS` runs. In memory only: a replay sets it again.
   */
  recheck?: boolean
}

/** The string a job is about, whatever its revision. */
export function stringKeyOf(j: Pick<Job, 'organizationId' | 'projectId' | 'stepId' | 'languageId' | 'stringId'>): string {
  return `${j.organizationId}|${j.projectId}|${j.stepId}|${j.languageId}|${j.stringId}`
}

export function jobKeyOf(j: Pick<Job, 'organizationId' | 'projectId' | 'stepId' | 'languageId' | 'stringId' | 'revision'>): string {
  return `${stringKeyOf(j)}|${j.revision}`
}

/**
 * Jobs that can share one pipeline run, one translation fetch and one status PATCH. The
 * organization is part of it, not only the domain: a run reads the settings of its first job's
 * organization, and two organizations can reach the worker under one domain (the header's,
 * unsigned, while neither is bound to one) with the same project and step ids.
 */
export function groupKeyOf(j: Pick<Job, 'organizationId' | 'domain' | 'projectId' | 'stepId' | 'languageId' | 'moduleKey'>): string {
  return `${j.organizationId}|${j.domain}|${j.projectId}|${j.stepId}|${j.languageId}|${j.moduleKey}`
}

/** A job's workflow step (project and step id): the backlog serves an organization's steps in turn. */
export function stepOf(j: Pick<Job, 'projectId' | 'stepId'>): string {
  return `${j.projectId}|${j.stepId}`
}

/**
 * Strings at a revision past the first, as noted where their batch is journaled (an older copy on
 * disk is stale once a newer waits there). Compact, to cross threads and sit in the journal
 * cheaply: organization ids `o`, languages `l`, and six numbers per string in `n`: index into `o`,
 * project, step, index into `l`, string, revision. Only revisions from 2 on: nothing is older than
 * the first.
 */
export interface RevisedStrings {
  o: string[]
  l: string[]
  n: number[]
}

/** Builds a RevisedStrings one string at a time. */
export class RevisedList {
  private readonly o: string[] = []
  private readonly l: string[] = []
  private readonly n: number[] = []

  add(organizationId: string, projectId: number, stepId: number, languageId: string, stringId: number, revision: number): void {
    if (!(revision >= 2)) return
    let oi = this.o.indexOf(organizationId)
    if (oi < 0) oi = this.o.push(organizationId) - 1
    let li = this.l.indexOf(languageId)
    if (li < 0) li = this.l.push(languageId) - 1
    this.n.push(oi, projectId, stepId, li, stringId, revision)
  }

  /** What was added, or undefined for none. */
  value(): RevisedStrings | undefined {
    return this.n.length ? { o: this.o, l: this.l, n: this.n } : undefined
  }
}

/** The revisions past the first among jobs (undefined: none). */
export function revisedOf(jobs: ReadonlyArray<Pick<Job, 'organizationId' | 'projectId' | 'stepId' | 'languageId' | 'stringId' | 'revision'>>): RevisedStrings | undefined {
  const list = new RevisedList()
  for (const j of jobs) list.add(j.organizationId, j.projectId, j.stepId, j.languageId, j.stringId, j.revision)
  return list.value()
}

/** A RevisedStrings as read back from the store, if it has that shape (else undefined). */
export function asRevisedStrings(value: unknown): RevisedStrings | undefined {
  const r = value as RevisedStrings
  return r && Array.isArray(r.o) && Array.isArray(r.l) && Array.isArray(r.n) && r.n.length % 6 === 0 && r.n.length > 0 ? r : undefined
}
