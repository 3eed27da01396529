// The last stage of a string's path: once the service accepted its status, its findings go to the
// findings log and the metrics, and its pipeline's issues are raised or resolved. Nothing here is
// awaited by the status path, and nothing here can fail it: errors are logged and counted.
import type { Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import type { FindingsLog } from './findings-log.js'
import { findingsHash } from './finding-records.js'
import { issueFindings } from './issue-text.js'
import type { IssueSender } from './issue-sender.js'

export interface FindingsStageDeps {
  findings: FindingsLog
  issues?: IssueSender
  log: Logger
  /** Count one finding of a check at a severity. */
  countFinding?(check: string, severity: string): void
  /** A log write failed. */
  failed?(): void
}

export interface FindingsStage {
  reported(decisions: Decision[]): void
  /** Decisions reported whose findings are not logged yet (they are still in memory). */
  pending(): number
  /** Wait for log writes under way and for the issue requests queued. */
  flush(): Promise<void>
}

export function createFindingsStage(deps: FindingsStageDeps): FindingsStage {
  const inFlight = new Set<Promise<void>>()

  const one = async (d: Decision) => {
    const review = d.review!
    const j = d.job
    const ref = { domain: j.domain, projectId: j.projectId, languageId: j.languageId, stringId: j.stringId }
    const sentBack = review.issues === 'raise'
    const listed = issueFindings(review.findings)
    const saved = await deps.findings.record({
      ...ref,
      at: new Date().toISOString(),
      organizationId: j.organizationId,
      stepId: j.stepId,
      key: j.string.key,
      pipeline: review.pipeline,
      outcome: d.port,
      output: review.output,
      sentBack,
      findings: review.findings,
      ...(sentBack && listed.length ? { hash: findingsHash(listed) } : {}),
    })
    if (review.issues === 'raise') deps.issues?.sentBack({ ...ref, pipelineName: review.pipelineName, findings: review.findings })
    // Only a string with an open issue this worker raised costs a task (and a request).
    else if (review.issues === 'resolve' && saved.issues?.some((i) => i.status === 'unresolved')) deps.issues?.passed(ref)
  }

  return {
    reported(decisions) {
      for (const d of decisions) {
        if (!d.review) continue
        for (const f of d.review.findings) deps.countFinding?.(f.check, f.severity)
        const p = one(d).catch((error) => {
          deps.failed?.()
          deps.log.warn({ err: error, string: d.job.stringId, language: d.job.languageId }, 'findings could not be logged; the status was reported')
        })
        inFlight.add(p)
        void p.finally(() => inFlight.delete(p))
      }
    },
    pending() {
      return inFlight.size
    },
    async flush() {
      while (inFlight.size) await Promise.allSettled([...inFlight])
      await deps.findings.flush()
      await deps.issues?.flush()
    },
  }
}
