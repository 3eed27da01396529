// A pipeline's decision on one job, on its way to the service: made by the job processor, sent by
// the reporter, kept by the queue while its organization is held, read by the findings stage.
import type { Review } from './findings.js'
import type { Job } from './job.js'

export interface Decision {
  job: Job
  /** The PATCH value: an output port, or '' to park the string as TODO. */
  port: string
  /** The pipeline's findings and what they mean for issues, handed on once the status is accepted. */
  review?: Review
}
