// What /healthz and /readyz say: the worker's state (queue, journal, parked and held strings) and
// whether it can take work (store reachable, pipelines loaded here and in the pipeline threads,
// not stopping). Status and counts only, for anyone who reaches them: which organizations are
// served, and their state, is on the operator page, behind OPERATOR_PASSWORD.
import type { BacklogView } from '../queue/backlog.js'
import type { HeldOrganizations } from '../queue/held-organizations.js'
import type { IntakeJournal } from '../queue/intake-journal.js'
import type { WorkQueue } from '../queue/work-queue.js'
import type { OrganizationDirectory } from '../platform/organization-domains.js'

export interface HealthDeps {
  closing(): boolean
  replaying(): boolean
  queue: WorkQueue
  journal: IntakeJournal
  held: HeldOrganizations
  /** The backlog on disk, or in Redis with QUEUE=bullmq. */
  backlog?: { waiting(): number; list(): BacklogView[] }
  organizations: OrganizationDirectory
  storeReachable(): Promise<boolean>
  /** With QUEUE=bullmq: can the queue's Redis be reached (it may be another server than the store)? */
  queueReachable?(): Promise<boolean>
  pipelinesLoaded(): number
  /** Can the pipelines run without loading first (the pipeline threads have loaded them)? */
  pipelinesReady(): boolean
}

export function createHealth(deps: HealthDeps) {
  return {
    async health(): Promise<Record<string, unknown>> {
      const { queue, journal, held } = deps
      return {
        status: deps.closing() ? 'stopping' : 'ok',
        replaying: deps.replaying(),
        queue: { depth: queue.depth, waiting: queue.waiting, limit: queue.limit },
        journal: journal.size,
        parked: journal.parked,
        held: held.count(),
        heldOrganizations: held.list().length,
        // Counts only (who waits, and since when, is on the operator page).
        backlog: deps.backlog ? { waiting: deps.backlog.waiting(), organizations: deps.backlog.list().length } : undefined,
      }
    },
    async ready(): Promise<{ ready: boolean; checks: Record<string, unknown> }> {
      const [store, queue] = await Promise.all([deps.storeReachable(), deps.queueReachable?.()])
      const loaded = deps.pipelinesLoaded()
      const threads = deps.pipelinesReady()
      const organizations = (await deps.organizations.status?.()) ?? []
      return {
        ready: store && queue !== false && loaded > 0 && threads && !deps.closing(),
        checks: { store, ...(queue === undefined ? {} : { queue }), pipelines: loaded, pipelineThreads: threads, disconnected: organizations.filter((o) => !o.connected).length },
      }
    },
  }
}
