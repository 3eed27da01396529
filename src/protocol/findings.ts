// What the worker keeps of a pipeline's verdict on one string, from the run to the findings log
// and the issues raised at the service (src/findings/ makes and reads these).

export type Severity = 'error' | 'warning' | 'info'

/** A finding as people see it after the run, with the text its span pointed at quoted. */
export interface FindingRecord {
  check: string
  severity: Severity
  message: string
  code?: string
  /** The text the finding's span covers (with a little context when it is empty or blank). */
  quote?: string
  /** Which text the quote comes from. */
  in?: 'source' | 'translation'
}

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
