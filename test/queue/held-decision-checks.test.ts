// A held decision reported from a run group (decided on a translation, unchanged) must go
// through the same checks as a decision the run makes: a newer revision noted in Redis (QUEUE=bullmq,
// newerArrived) or one that arrived here while the translations were read (isCurrent) supersedes it.
import { expect, it } from 'vitest'
import { createJobProcessor } from '../../src/queue/process-jobs.js'
import { translationFingerprint } from '../../src/protocol/decision.js'
import { buildItem } from '../../src/engine/build-item.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger } from '../../src/util/logger.js'
import { job } from '../support/jobs.js'


function setup(o: { newer?: number[]; currentAfterFetch?: boolean }) {
  const events: string[] = []
  const log = createLogger({ level: 'silent' })
  let fetched = false
  const pipeline = { key: 'qa-gate', needsTranslation: true, resolveSettings: () => ({ ok: true, settings: {} }), run: async (b: Array<{ id: number }>) => b.map((i) => ({ id: i.id, port: 'ok', output: 'ok', findings: [] })) }
  const process = createJobProcessor({
    pipelines: () => ({ get: () => pipeline as never }),
    api: { getTranslations: async (_d: string, _p: number, _l: string, ids: number[]) => { fetched = true; return new Map(ids.map((stringId) => [stringId, { stringId, text: `target ${stringId}` }])) } } as never,
    reporter: { add: (d: { job: Job; port: string }) => void events.push(`report ${d.job.stringId} "${d.port}"`) } as never,
    log, maxAttempts: 3, signal: new AbortController().signal,
    // A newer revision arrives here while the translations are read.
    isCurrent: () => !(fetched && o.currentAfterFetch === false),
    ...(o.newer ? { newerArrived: async (jobs: Job[]) => new Set(jobs.filter((j) => o.newer!.includes(j.stringId))) } : {}),
    superseded: (j) => void events.push(`superseded ${j.stringId}`),
    retryLater: () => {}, park: () => {}, hold: () => {}, drop: () => {}, absorbed: () => {}, countRun: () => {},
  })
  return { process, events }
}

const held = (id: number) => {
  const j = job(id)
  const on = translationFingerprint(buildItem(j, { translation: { text: `target ${id}` } as never, settings: {}, log: createLogger({ level: 'silent' }), signal: new AbortController().signal }))
  return job(id, { decidedPort: 'held-port', decidedOn: on })
}

it('QUEUE=bullmq: a held decision on an unchanged translation is not reported over a newer revision noted in Redis', async () => {
  const { process, events } = setup({ newer: [1] })
  await process([held(1), job(2)])
  expect(events).toContain('superseded 1')
  expect(events).not.toContain('report 1 "held-port"')
})

it('a newer revision that arrived while the translations were read supersedes the held decision', async () => {
  const { process, events } = setup({ currentAfterFetch: false })
  await process([held(1)])
  expect(events).toEqual(['superseded 1'])
})
