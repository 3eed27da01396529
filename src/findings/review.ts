// What the worker keeps of a pipeline's verdict on one string until its status is reported: the
// findings as records (text quoted while the text is at hand) and what it means for issues.
import type { Finding } from '../engine/types.js'
import { toFindingRecords, type FindingRecord } from './finding-records.js'

export interface Review {
  /** Pipeline key and name. */
  pipeline: string
  pipelineName: string
  /** Output name; null when parked. */
  output: string | null
  findings: FindingRecord[]
  /** The pipeline raises issues: `raise` when this output sends the string back, `resolve` when it passes. */
  issues?: 'raise' | 'resolve'
}

export interface ReviewedPipeline {
  key: string
  name?: string
  issues?: { outputs: string[] }
}

export function reviewOf(
  pipeline: ReviewedPipeline,
  result: { port: string; output: string | null; findings: Finding[] },
  texts: { source: string; translation?: string },
): Review {
  const review: Review = { pipeline: pipeline.key, pipelineName: pipeline.name ?? pipeline.key, output: result.output, findings: toFindingRecords(result.findings, texts) }
  if (pipeline.issues && result.port !== '') review.issues = result.output !== null && pipeline.issues.outputs.includes(result.output) ? 'raise' : 'resolve'
  return review
}
