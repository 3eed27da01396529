// Every way out of the worker, accounted the same way: the journal, the de-duplication memory, the
// queue's window and the metrics move together for each string; a refused output is parked at the
// service as "" (and kept here only if even that is refused); held strings go to disk and free
// their room in the window even when the disk write fails.
import { describe, expect, it } from 'vitest'
import type { Decision } from '../../src/protocol/decision.js'
import { stringKeyOf, type Job } from '../../src/protocol/job.js'
import { createOutcomes } from '../../src/queue/outcomes.js'
import { createLogger } from '../../src/util/logger.js'

const job = (stringId: number, domain = 'acme', revision = 1): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain, moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision, batchId: 'b', attempts: 0 }) as unknown as Job

function setup(options: { stash?: (jobs: Job[]) => Promise<void> } = {}) {
  const events: string[] = []
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const counter = (name: string) => ({ inc: (labels: Record<string, string>, n = 1) => void events.push(`${name} ${JSON.stringify(labels)} ${n}`) })
  const stashed: Job[][] = []
  const outcomes = createOutcomes({
    journal: {
      done: async (j: Job) => void events.push(`done ${j.stringId}`),
      park: async (j: Job, reason: string) => void events.push(`park ${j.stringId} ${reason}`),
    } as never,
    dedupe: { finish: (ref: Job, revision: number) => void events.push(`forget ${stringKeyOf(ref)} r${revision}`) } as never,
    queue: { finish: (n = 1) => void events.push(`room ${n}`) } as never,
    held: {
      holdJobs: (jobs: Job[], reason: string, cause: string) => void events.push(`hold ${jobs[0]!.domain} ${jobs.length} ${reason} ${cause}`),
      succeeded: (domain: string) => void events.push(`succeeded ${domain}`),
    } as never,
    metrics: { jobs: counter('jobs'), rechecks: counter('rechecks') } as never,
    log,
    report: (d: Decision) => void events.push(`report ${d.job.stringId} "${d.port}"`),
    stash:
      options.stash ??
      (async (jobs) => {
        stashed.push(jobs)
        events.push(`stash ${jobs.map((j) => `${j.stringId}:${j.decidedPort ?? '-'}`).join(',')}`)
      }),
  })
  return { outcomes, events, lines, stashed }
}

describe('outcomes', () => {
  it('keeps a held decision as decided unless its update may have landed: then it is checked with the service first', async () => {
    const { outcomes, stashed } = setup()
    await outcomes.reporterHooks.held([{ job: job(1), port: 'ok' }], '403: Forbidden', 'forbidden', undefined, false)
    await outcomes.reporterHooks.held([{ job: job(2), port: 'ok' }], '503', 'unavailable', undefined, true)
    await outcomes.reporterHooks.held([{ job: job(3), port: 'ok' }], 'the organization is held', 'unavailable', undefined, false)
    await outcomes.reporterHooks.held([{ job: job(4), port: 'ok' }], '403 after a 503', 'forbidden', undefined, true)
    expect(stashed.flat().map((j) => [j.stringId, j.decidedPort, j.recheck === true])).toEqual([[1, 'ok', false], [2, 'ok', true], [3, 'ok', false], [4, 'ok', true]])
  })

  it('finishes reported strings everywhere, and tells the held list the organization got through', async () => {
    const { outcomes, events } = setup()
    await outcomes.reporterHooks.reported([{ job: job(1, 'acme', 3), port: 'ok' }, { job: job(2), port: 'fix' }])
    expect(events).toEqual([
      'succeeded acme',
      'done 1', 'forget 1|7|11|de|1 r3', 'room 1', 'jobs {"outcome":"reported","port":"ok"} 1',
      'done 2', 'forget 1|7|11|de|2 r1', 'room 1', 'jobs {"outcome":"reported","port":"fix"} 1',
    ])
  })

  it('reports nothing for an empty answer', async () => {
    const { outcomes, events } = setup()
    await outcomes.reporterHooks.reported([])
    expect(events).toEqual([])
  })

  it('parks a refused output at the service as "", and says so', async () => {
    const { outcomes, events, lines } = setup()
    await outcomes.reporterHooks.rejected({ job: job(1), port: 'approved' }, '400: unknown output')
    expect(events).toEqual(['jobs {"outcome":"rejected","port":"approved"} 1', 'report 1 ""'])
    const warning = lines.find((l) => l.level === 40)
    expect(warning).toMatchObject({ string: 1, output: 'approved' })
    expect(warning!.msg).toContain('400: unknown output')
    expect(warning!.msg).toContain('parked at the service')
  })

  it('says it once for a whole group refused for its output (the reporter warned for the group), not a line each', async () => {
    const { outcomes, events, lines } = setup()
    await outcomes.reporterHooks.rejected({ job: job(1), port: 'retired' }, '400: unknown output', true)
    await outcomes.reporterHooks.rejected({ job: job(2), port: 'retired' }, '400: unknown output', true)
    expect(events).toEqual(['jobs {"outcome":"rejected","port":"retired"} 1', 'report 1 ""', 'jobs {"outcome":"rejected","port":"retired"} 1', 'report 2 ""'])
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([])
  })

  it('keeps a string parked here when even "" is refused', async () => {
    const { outcomes, events } = setup()
    await outcomes.reporterHooks.rejected({ job: job(1), port: '' }, '400: no')
    expect(events).toEqual(['jobs {"outcome":"rejected","port":""} 1', 'park 1 400: no', 'forget 1|7|11|de|1 r1', 'room 1', 'jobs {"outcome":"parked","port":""} 1'])
  })

  it('drops and parks what the reporter gives up on, with their ports', async () => {
    const { outcomes, events } = setup()
    await outcomes.reporterHooks.dropped([{ job: job(1), port: 'ok' }], '404: step gone')
    await outcomes.reporterHooks.parked([{ job: job(2), port: 'fix' }], 'retries ran out')
    expect(events).toEqual([
      'done 1', 'forget 1|7|11|de|1 r1', 'room 1', 'jobs {"outcome":"dropped","port":"ok"} 1',
      'park 2 retries ran out', 'forget 1|7|11|de|2 r1', 'room 1', 'jobs {"outcome":"parked","port":"fix"} 1',
    ])
  })

  it('holds decisions with their ports on disk, and frees their room', async () => {
    const { outcomes, events, stashed } = setup()
    await outcomes.reporterHooks.held([{ job: job(1), port: 'ok' }, { job: job(2), port: '' }], '403: Forbidden', 'forbidden', undefined, false)
    expect(events).toEqual(['hold acme 2 403: Forbidden forbidden', 'jobs {"outcome":"held","port":""} 2', 'stash 1:ok,2:', 'room 2'])
    expect(stashed[0]!.map((j) => j.decidedPort)).toEqual(['ok', ''])
  })

  it('frees the room of held strings even when the disk write fails', async () => {
    const { outcomes, events } = setup({ stash: async () => Promise.reject(new Error('disk full')) })
    await expect(outcomes.holdJobs([job(1), job(2), job(3)], 'no token', 'disconnected')).rejects.toThrow('disk full')
    expect(events).toEqual(['hold acme 3 no token disconnected', 'jobs {"outcome":"held","port":""} 3', 'room 3'])
  })

  it('holds nothing for no jobs', async () => {
    const { outcomes, events } = setup()
    await outcomes.holdJobs([], 'no token', 'disconnected')
    expect(events).toEqual([])
  })

  it('finishes superseded and absorbed strings, counting the status an absorbed one had', async () => {
    const { outcomes, events } = setup()
    await outcomes.superseded(job(1))
    await outcomes.absorbed(job(2), 'DONE')
    expect(events).toEqual([
      'done 1', 'forget 1|7|11|de|1 r1', 'room 1', 'jobs {"outcome":"superseded","port":""} 1',
      'rechecks {"status":"DONE"} 1', 'done 2', 'forget 1|7|11|de|2 r1', 'room 1', 'jobs {"outcome":"absorbed","port":""} 1',
    ])
  })

  it('finishes a decision the reporter did not send for a newer revision\'s, with its port', async () => {
    const { outcomes, events } = setup()
    await outcomes.reporterHooks.superseded({ job: job(3), port: 'translated' })
    expect(events).toEqual(['done 3', 'forget 1|7|11|de|3 r1', 'room 1', 'jobs {"outcome":"superseded","port":"translated"} 1'])
  })

  it('parks a string with its reason and says which', async () => {
    const { outcomes, events, lines } = setup()
    await outcomes.park(job(4), 'no pipeline for module m')
    expect(events).toEqual(['park 4 no pipeline for module m', 'forget 1|7|11|de|4 r1', 'room 1', 'jobs {"outcome":"parked","port":""} 1'])
    expect(lines.find((l) => l.level === 40)).toMatchObject({ string: 4, module: 'm', reason: 'no pipeline for module m', msg: 'string parked' })
  })

  it('drops strings the service no longer waits for, and says how many and where', async () => {
    const { outcomes, events, lines } = setup()
    await outcomes.drop([job(1), job(2)], '404: step gone')
    expect(events.filter((e) => e.startsWith('jobs'))).toEqual(['jobs {"outcome":"dropped","port":""} 1', 'jobs {"outcome":"dropped","port":""} 1'])
    expect(events.filter((e) => e.startsWith('done'))).toEqual(['done 1', 'done 2'])
    const warning = lines.find((l) => l.level === 40)
    expect(warning).toMatchObject({ strings: 2, domain: 'acme', step: 11, language: 'de' })
    expect(warning!.msg).toContain('404: step gone')
  })
})
