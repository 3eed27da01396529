// A string that arrives after it finished here may be a repeat of a delivery already reported, or it
// may have come back to the step with the same revision (sent back and fixed, or Resend). Memory
// can't tell the two apart; the service can: GET status for those strings (up to 500 ids a call),
// and only `NEED_PROCESS` runs again (platform notes, "A string comes back").
import type { ApiClient, RequestOptions } from '../platform/api-client.js'
import type { Job } from '../protocol/job.js'

const MAX_IDS = 500

export interface Rechecked {
  /** Waiting at the service: run them. */
  run: Job[]
  /** Not waiting (DONE, TODO, ... or not at the step): repeats, with the status the service gave. */
  absorbed: Array<{ job: Job; status: string }>
}

/**
 * Sort jobs of one group (organization, project, step, language) by their status at the service.
 * Jobs without `recheck` run without asking. API errors are thrown to the caller, whose rules
 * (hold, retry, drop) are those of any request for the group.
 */
export async function recheckStatuses(api: Pick<ApiClient, 'getStatuses'>, jobs: Job[], options?: RequestOptions): Promise<Rechecked> {
  const out: Rechecked = { run: [], absorbed: [] }
  const ask: Job[] = []
  for (const job of jobs) (job.recheck ? ask : out.run).push(job)
  const first = ask[0]
  if (!first) return out
  for (let i = 0; i < ask.length; i += MAX_IDS) {
    const part = ask.slice(i, i + MAX_IDS)
    const records = await api.getStatuses(first.domain, first.projectId, first.stepId, first.languageId, { stringIds: part.map((j) => j.stringId), limit: MAX_IDS }, options)
    const status = new Map<number, string>()
    // Only records of the step and language asked about say anything of these strings; a string
    // with records of others only (or spelled otherwise) is run, never absorbed on that word.
    const other = new Set<number>()
    for (const r of records) {
      if ((r.languageId ?? first.languageId) === first.languageId && (r.stepId ?? first.stepId) === first.stepId) status.set(r.stringId, r.status)
      else other.add(r.stringId)
    }
    for (const job of part) {
      const s = status.get(job.stringId) ?? (other.has(job.stringId) ? 'NEED_PROCESS' : 'absent')
      if (s === 'NEED_PROCESS') {
        job.recheck = false
        out.run.push(job)
      } else out.absorbed.push({ job, status: s })
    }
  }
  return out
}
