// Reconciliation on its own: every (organization, project, step, language) seen is swept once,
// page by page, for strings the service waits for (NEED_PROCESS); those this worker holds no job
// for are counted, logged and put in the metrics; a step whose statuses can't be read is logged and
// the sweep goes on.
import { describe, expect, it } from 'vitest'
import { stringKeyOf } from '../../src/protocol/job.js'
import type { StringRef } from '../../src/queue/dedupe.js'
import { Reconciler, SKIPPED_TOO_LONG_MS } from '../../src/queue/reconcile.js'
import { createLogger } from '../../src/util/logger.js'

type Query = { status?: string; stringIds?: number[]; limit?: number; offset?: number }
const step = (languageId = 'de', domain = 'acme', stepId = 11) => ({ organizationId: '1', domain, projectId: 7, stepId, languageId })

type Shared = { queued(): Promise<number>; heldDomains(): ReadonlySet<string> }
function setup(waiting: (domain: string, stepId: number, languageId: string) => number[], active: Set<string> = new Set(), shared?: Shared, now?: () => number, parked?: () => number) {
  const calls: Array<{ domain: string; projectId: number; stepId: number; languageId: string; query: Query }> = []
  const api = {
    async getStatuses(domain: string, projectId: number, stepId: number, languageId: string, query: Query = {}) {
      calls.push({ domain, projectId, stepId, languageId, query })
      const ids = waiting(domain, stepId, languageId)
      const from = query.offset ?? 0
      return ids.slice(from, from + (query.limit ?? 500)).map((stringId) => ({ stringId, languageId, stepId, status: 'NEED_PROCESS', output: '' }))
    },
  }
  let orphanCount = 0
  const metrics = { reconcileOrphans: { inc: (n = 1) => void (orphanCount += n) } }
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const reconciler = new Reconciler({ api, dedupe: { isActive: (ref: StringRef) => active.has(stringKeyOf(ref)) }, metrics: metrics as never, log, ...(shared ? { outsideWindow: shared } : {}), ...(now ? { now } : {}), ...(parked ? { parked } : {}) })
  return { reconciler, calls, lines, orphans: () => orphanCount }
}

describe('Reconciler', () => {
  it('counts the waiting strings it holds no job for, and reports them', async () => {
    const active = new Set([stringKeyOf({ ...step(), stringId: 2 })])
    const { reconciler, calls, lines, orphans } = setup(() => [1, 2, 3], active)
    reconciler.seen(step())
    expect(await reconciler.run()).toEqual({ orphans: 2, checked: 3 })
    expect(calls).toEqual([{ domain: 'acme', projectId: 7, stepId: 11, languageId: 'de', query: { status: 'NEED_PROCESS', limit: 500, offset: 0 } }])
    expect(orphans()).toBe(2)
    const warning = lines.find((l) => l.level === 40)
    expect(warning).toMatchObject({ orphans: 2, checked: 3 })
    expect(warning!.msg).toMatch(/Resend/)
  })

  // Parked strings wait at the service with no job in the window: the warning that sends the
  // operator to Resend said nothing of them, though they are tried again here by themselves.
  it('says how many strings are parked here when it counts orphans, since they are among them', async () => {
    const { reconciler, lines } = setup(() => [1, 2, 3], new Set(), undefined, undefined, () => 2)
    reconciler.seen(step())
    expect(await reconciler.run()).toEqual({ orphans: 3, checked: 3 })
    const warning = lines.find((l) => l.level === 40)
    expect(warning).toMatchObject({ orphans: 3, checked: 3, parked: 2 })
    expect(warning!.msg).toMatch(/2 strings are parked here, which count among them: they are tried again every PARKED_RETRY_MS/)
  })

  it('says nothing and counts nothing when every waiting string has its job', async () => {
    const active = new Set([1, 2].map((stringId) => stringKeyOf({ ...step(), stringId })))
    const { reconciler, lines, orphans } = setup(() => [1, 2], active)
    reconciler.seen(step())
    expect(await reconciler.run()).toEqual({ orphans: 0, checked: 2 })
    expect(orphans()).toBe(0)
    expect(lines).toEqual([])
  })

  it('with QUEUE=bullmq, waits for a sweep when nothing is queued in Redis: its strings are no orphans, and cannot be told from them', async () => {
    let queued = 20
    let clock = 0
    const { reconciler, calls, orphans, lines } = setup(() => [1, 2, 3], new Set(), { queued: async () => queued, heldDomains: () => new Set() }, () => clock)
    reconciler.seen(step())
    expect(await reconciler.run()).toEqual({ orphans: 0, checked: 0, queuedElsewhere: 20 })
    expect(calls).toEqual([])
    // Skipped for an hour (the queue never empty): said once, as a warning.
    clock = SKIPPED_TOO_LONG_MS
    await reconciler.run()
    await reconciler.run()
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([expect.stringMatching(/has not swept for an hour/)])
    queued = 0
    expect(await reconciler.run()).toEqual({ orphans: 3, checked: 3 })
    expect(orphans()).toBe(3)
  })

  it('with QUEUE=bullmq, leaves out the steps of organizations with strings held in Redis, and sweeps the others', async () => {
    const { reconciler, calls } = setup(() => [1, 2], new Set(), { queued: async () => 0, heldDomains: () => new Set(['held-org']) })
    reconciler.seen(step('de', 'held-org'))
    reconciler.seen(step('de', 'acme'))
    expect(await reconciler.run()).toEqual({ orphans: 2, checked: 2 })
    expect(calls.map((c) => c.domain)).toEqual(['acme'])
  })

  it('skips a sweep, and says so, when the shared queue cannot be read', async () => {
    const { reconciler, calls, lines } = setup(() => [1], new Set(), {
      queued: async () => {
        throw new Error('Redis down')
      },
      heldDomains: () => new Set(),
    })
    reconciler.seen(step())
    expect(await reconciler.run()).toEqual({ orphans: 0, checked: 0, queuedElsewhere: 0 })
    expect(calls).toEqual([])
    expect(lines.find((l) => l.level === 40)).toMatchObject({ msg: 'reconciliation could not read the queue; skipped' })
  })

  it('reads every page of 500, stopping at the first short one', async () => {
    const ids = Array.from({ length: 1200 }, (_, i) => i + 1)
    const { reconciler, calls } = setup(() => ids)
    reconciler.seen(step())
    expect(await reconciler.run()).toEqual({ orphans: 1200, checked: 1200 })
    expect(calls.map((c) => c.query.offset)).toEqual([0, 500, 1000])
  })

  it('asks once more after a full last page, and stops at the empty one', async () => {
    const { reconciler, calls } = setup(() => Array.from({ length: 500 }, (_, i) => i + 1))
    reconciler.seen(step())
    await reconciler.run()
    expect(calls.map((c) => c.query.offset)).toEqual([0, 500])
  })

  it('sweeps each step and language once, however often it was seen', async () => {
    const { reconciler, calls } = setup(() => [])
    reconciler.seen(step('de'))
    reconciler.seen(step('de'))
    reconciler.seen(step('fr'))
    reconciler.seen(step('de', 'beta'))
    reconciler.seen(step('de', 'acme', 12))
    reconciler.seen({ ...step('de'), projectId: 8 })
    await reconciler.run()
    expect(calls.map((c) => `${c.domain}|${c.projectId}|${c.stepId}|${c.languageId}`)).toEqual(['acme|7|11|de', 'acme|7|11|fr', 'beta|7|11|de', 'acme|7|12|de', 'acme|8|11|de'])
  })

  it('matches strings by organization, project, step and language', async () => {
    // A job of the same string id in another language is not this one.
    const active = new Set([stringKeyOf({ ...step('fr'), stringId: 1 })])
    const { reconciler } = setup((_d, _s, languageId) => (languageId === 'de' ? [1] : []), active)
    reconciler.seen(step('de'))
    reconciler.seen(step('fr'))
    expect(await reconciler.run()).toEqual({ orphans: 1, checked: 1 })
  })

  it('logs a step it cannot read and sweeps the others', async () => {
    const { reconciler, lines } = setup((domain) => {
      if (domain === 'broken') throw new Error('503 Service Unavailable')
      return [1]
    })
    reconciler.seen(step('de', 'broken'))
    reconciler.seen(step('de', 'acme'))
    expect(await reconciler.run()).toEqual({ orphans: 1, checked: 1 })
    const failure = lines.find((l) => /could not read statuses/.test(String(l.msg)))
    expect(failure).toMatchObject({ domain: 'broken', step: 11, language: 'de' })
    expect(JSON.stringify(failure)).toContain('503 Service Unavailable')
  })
})
