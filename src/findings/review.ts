// What the worker keeps of a pipeline's verdict on one string until its status is reported: the
// findings as records (text quoted while the text is at hand) and what it means for issues.
import type { Finding } from '../engine/types.js'
import type { Review } from '../protocol/findings.js'
import { toFindingRecords } from './finding-records.js'

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
