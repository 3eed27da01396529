// A pipeline's decision on one job, on its way to the service: made by the job processor, sent by
// the reporter, kept by the queue while its organization is held, read by the findings stage.
import { createHash } from 'node:crypto'
import type { Review } from './findings.js'
import type { Job } from './job.js'

export interface Decision {
  job: Job
  /** The PATCH value: an output port, or '' to park the string as TODO. */
  port: string
  /** The pipeline's findings and what they mean for issues, handed on once the status is accepted. */
  review?: Review
  /**
   * The translation it was decided on, when the pipeline read one: fingerprinted
   * (translationFingerprint) only if the decision is held, so that a run pays nothing for it; a
   * held decision back from the disk carries the fingerprint itself.
   */
  on?: DecidedOn | string
}

/** The texts a decision was made on: the translation and its plural forms. */
export interface DecidedOn { translation?: string | undefined; plurals?: ReadonlyArray<{ plural: string; text: string }> | undefined }

/** A short fingerprint of a translation as a pipeline reads it (its text and plural forms). */
export function translationFingerprint(t: DecidedOn | string): string {
  // A held decision brought back from the disk carries its fingerprint already.
  if (typeof t === 'string') return t
  return createHash('sha256').update(JSON.stringify([t.translation ?? '', t.plurals ?? null])).digest('base64url').slice(0, 16)
}
