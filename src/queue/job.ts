// A job: one string in one target language at one step, as much of the event as the pipeline and
// the reporter need and no more (the project's logo and other bulk stay out of the queue).
import type { Language } from '../engine/types.js'

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
  string: {
    key: string
    context: string
    maxLength: number
    text: string
    isPlural: boolean
    fileType: string
    filePath: string
    labelIds: number[]
  }
  sourceLanguage: Language
  targetLanguage: Language
  /** Journal entry (acknowledged batch) the job belongs to. */
  batchId: string
  /** Pipeline runs that ended in `retry` so far. */
  attempts: number
  /** Its string key, when made by `withKeys` (job.ts). */
  [STRING_KEY]?: string
}

/**
 * Where a job made by `withKeys` keeps its string key. De-duplication asks for it three times per
 * job (admitted, current?, finished); one string, hashed once, instead of three (bench).
 */
export const STRING_KEY: unique symbol = Symbol('stringKey')

type KeyFields = Pick<Job, 'organizationId' | 'projectId' | 'stepId' | 'languageId' | 'stringId'> & { [STRING_KEY]?: string }

/** The string a job is about, whatever its revision. */
export function stringKeyOf(j: KeyFields): string {
  return j[STRING_KEY] ?? `${j.organizationId}|${j.projectId}|${j.stepId}|${j.languageId}|${j.stringId}`
}

export function jobKeyOf(j: KeyFields & Pick<Job, 'revision'>): string {
  return `${stringKeyOf(j)}|${j.revision}`
}

/** Set a new job's `key` and remember its string key (its identity fields are final by then). */
export function withKeys(job: Job): Job {
  const stringKey = stringKeyOf(job)
  // Not enumerable: a cache, invisible to comparisons, copies and serialization of the job.
  Object.defineProperty(job, STRING_KEY, { value: stringKey })
  job.key = `${stringKey}|${job.revision}`
  return job
}

/** Jobs that can share one pipeline run, one translation fetch and one status PATCH. */
export function groupKeyOf(j: Pick<Job, 'domain' | 'projectId' | 'stepId' | 'languageId' | 'moduleKey'>): string {
  return `${j.domain}|${j.projectId}|${j.stepId}|${j.languageId}|${j.moduleKey}`
}
