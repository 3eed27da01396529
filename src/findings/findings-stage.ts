// The last stage of a string's path: once the service accepted its status, its findings go to the
// findings log and the metrics, and its pipeline's issues are raised or resolved. Nothing here is
// awaited by the status path, and nothing here can fail it: errors are logged and counted.
import type { Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import type { FindingsEntry, FindingsLog } from './findings-log.js'
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

const CLEAN_PASSES = { cleanPasses: 'replace-only' } as const

export function createFindingsStage(deps: FindingsStageDeps): FindingsStage {
  const inFlight = new Set<Promise<void>>()
  /** Decisions handed to the log and not written yet. */
  let waiting = 0

  const recordOf = (d: Decision) => {
    const review = d.review!
    const j = d.job
    const sentBack = review.issues === 'raise'
    const listed = sentBack ? issueFindings(review.findings) : []
    return {
      domain: j.domain,
      projectId: j.projectId,
      languageId: j.languageId,
      stringId: j.stringId,
      at: new Date().toISOString(),
      organizationId: j.organizationId,
      stepId: j.stepId,
      key: j.string.key,
      pipeline: review.pipeline,
      outcome: d.port,
      output: review.output,
      sentBack,
      resolves: review.issues === 'resolve',
      findings: review.findings,
      ...(sentBack && listed.length ? { hash: findingsHash(listed) } : {}),
    }
  }

  /** `saved` is undefined for a clean pass of a string with no entry (nothing written, no issue known). */
  const afterSaved = (d: Decision, saved: FindingsEntry | undefined) => {
    const review = d.review!
    const j = d.job
    const ref = { domain: j.domain, projectId: j.projectId, languageId: j.languageId, stringId: j.stringId }
    if (review.issues === 'raise') deps.issues?.sentBack({ ...ref, pipelineName: review.pipelineName, findings: review.findings })
    // Only a string with an open issue this worker raised, or one a lost POST may have raised,
    // costs a task (and a request).
    else if (review.issues === 'resolve' && (saved?.unsure || saved?.issues?.some((i) => i.status === 'unresolved'))) deps.issues?.passed(ref)
  }

  // The loop lives in a function made once (not in the callback made for each run): see statusOp
  // in platform/reporter.ts.
  const allSaved = (reviewed: Decision[], saved: Array<FindingsEntry | undefined>) => {
    for (let i = 0; i < reviewed.length; i++) {
      const d = reviewed[i]!
      try {
        afterSaved(d, saved[i])
      } catch (error) {
        failed(d, error)
      }
    }
  }

  const failed = (d: Decision, error: unknown) => {
    deps.failed?.()
    deps.log.warn({ err: error, string: d.job.stringId, language: d.job.languageId }, 'findings could not be logged; the status was reported')
  }

  return {
    reported(decisions) {
      // One write request for the run's strings: a promise per run, not per string.
      const reviewed = decisions.filter((d) => d.review)
      if (!reviewed.length) return
      for (const d of reviewed) for (const f of d.review!.findings) deps.countFinding?.(f.check, f.severity)
      waiting += reviewed.length
      // A clean pass makes no entry where the string has none: nothing to explain (most outcomes
      // are such; their entries were the log's largest cost, and took the room of those that
      // explain something within FINDINGS_MAX).
      const p = deps.findings.recordMany(reviewed.map(recordOf), CLEAN_PASSES).then(
        (saved) => allSaved(reviewed, saved),
        (error) => { for (const d of reviewed) failed(d, error) },
      )
      const settled = p.finally(() => { waiting -= reviewed.length })
      inFlight.add(settled)
      void settled.finally(() => inFlight.delete(settled))
    },
    pending() {
      return waiting
    },
    async flush() {
      while (inFlight.size) await Promise.allSettled([...inFlight])
      await deps.findings.flush()
      await deps.issues?.flush()
    },
  }
}
