// One pipeline run over a group of jobs, on its own (recording fakes of the service, the reporter
// and the worker's outcomes): superseded revisions and repeats never run, invalid events are parked
// with "", a group with no pipeline is parked, invalid stored settings run nothing (on-error), the
// translations are fetched once and only when needed (plural forms included), and failures follow
// the reporter's rules or are retried with back-off until the attempts run out.
import { describe, expect, it } from 'vitest'
import type { Item } from '../../src/engine/types.js'
import { ApiError, type RequestOptions, type TranslationRecord } from '../../src/platform/api-client.js'
import { NotConnectedError } from '../../src/platform/token-errors.js'
import type { Job } from '../../src/protocol/job.js'
import { createJobProcessor, IN_SLOT, PartFailed } from '../../src/queue/process-jobs.js'
import type { Pipeline } from '../../src/engine/pipeline.js'
/** The part of a Pipeline the job processor uses. */
type RunnablePipeline = Pick<Pipeline, 'key' | 'needsTranslation' | 'resolveSettings' | 'run'> & Partial<Pipeline>
import { createLogger } from '../../src/util/logger.js'
import { job } from '../support/jobs.js'


type Result = { id: number; port: string; output: string | null; findings: never[]; retry?: boolean }

function setup(options: {
  pipeline?: Partial<RunnablePipeline> | null
  translations?: (ids: number[]) => Map<number, TranslationRecord> | Promise<never>
  statuses?: Record<number, string> | Error
  settings?: Record<string, unknown>
  current?: (job: Job) => boolean
  maxAttempts?: number
  results?: (items: Item[]) => Result[] | Promise<Result[]>
  level?: string
  bare?: boolean
  /** Strings of the long-text lane; with `detach`, whether the worker queue takes their run beside its slots. */
  isLong?: (item: Item) => boolean
  detach?: boolean
  /** The reporter throws for these strings. */
  reportFails?: number[]
  /** The worker is shutting down before the run ends. */
  aborted?: boolean
  /** QUEUE=bullmq: strings a newer revision was noted for in Redis. */
  newer?: number[]
  /** The pipeline's on-error is `retry` (for strings its step's invalid settings keep from running). */
  onErrorRetry?: boolean
} = {}) {
  const events: string[] = []
  const items: Item[][] = []
  const runOptions: Array<{ signal?: AbortSignal } | undefined> = []
  const stopping = new AbortController()
  if (options.aborted) stopping.abort(new Error('shutting down'))
  const signal = stopping.signal
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: options.level ?? 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const pipeline: RunnablePipeline | undefined =
    options.pipeline === null
      ? undefined
      : {
          key: 'qa-gate',
          needsTranslation: true,
          resolveSettings: (stored) => (stored === undefined ? { ok: true, settings: { strict: false } } : (stored as { bad?: boolean }).bad ? { ok: false, errors: ['bad is not allowed'] } : { ok: true, settings: stored as Record<string, unknown> }),
          // on-error `park`, or with `retry` (options.onErrorRetry) tried again.
          settingsInvalid: (id, errors) => ({ id, port: '', output: null, findings: [{ check: 'engine', code: 'settings-invalid', severity: 'error', message: errors.join('; ') }] as never[], ...(options.onErrorRetry ? { retry: true } : {}) }),
          async run(batch, runOptions_) {
            items.push(batch)
            runOptions.push(runOptions_)
            return options.results ? options.results(batch) : batch.map((i) => ({ id: i.id, port: 'ok', output: 'ok', findings: [] }))
          },
          ...options.pipeline,
        }
  const api = {
    async getTranslations(domain: string, projectId: number, languageId: string, ids: number[], requestOptions?: RequestOptions) {
      // Made in a work slot: a few attempts, no long wait in place (the slot is not kept asleep).
      events.push(`translations ${domain} ${projectId} ${languageId} ${ids.join(',')}${requestOptions === IN_SLOT ? '' : ' NOT IN_SLOT'}`)
      return options.translations ? options.translations(ids) : new Map(ids.map((stringId) => [stringId, { stringId, text: `target ${stringId}` }]))
    },
    async getStatuses(_d: string, _p: number, _s: number, _l: string, q: { stringIds?: number[] }, requestOptions?: RequestOptions) {
      events.push(`statuses ${q.stringIds!.join(',')}${requestOptions === IN_SLOT ? '' : ' NOT IN_SLOT'}`)
      if (options.statuses instanceof Error) throw options.statuses
      const statuses = options.statuses ?? {}
      return q.stringIds!.filter((id) => statuses[id]).map((stringId) => ({ stringId, languageId: 'de', stepId: 11, status: statuses[stringId]!, output: '' }))
    },
  }
  const ids = (jobs: Job[]) => jobs.map((j) => j.stringId).join(',')
  const process = createJobProcessor({
    pipelines: () => ({ get: (key) => (key === 'qa' ? (pipeline as Pipeline | undefined) : undefined) }),
    settings: options.bare ? undefined : { get: async (ref) => (events.push(`settings ${ref.organizationId} ${ref.projectId} ${ref.stepId} ${ref.moduleKey}`), options.settings) },
    api: api as never,
    reporter: {
      add: (d: { job: Job; port: string; review?: { pipeline: string } }) => {
        if (options.reportFails?.includes(d.job.stringId)) throw new Error('reporter broke')
        events.push(`report ${d.job.stringId} "${d.port}"${d.review ? ` by ${d.review.pipeline}` : ''}`)
      },
    } as never,
    log,
    maxAttempts: options.maxAttempts ?? 3,
    signal,
    isCurrent: options.current ?? (() => true),
    ...(options.newer ? { newerArrived: async (jobs: Job[]) => new Set(jobs.filter((j) => options.newer!.includes(j.stringId))) } : {}),
    superseded: (j) => void events.push(`superseded ${j.stringId}`),
    retryLater: (jobs, delay, notBefore) => void events.push(`retry ${ids(jobs)} in ${delay}${notBefore ? ` not before ${notBefore}` : ''}`),
    park: (j, reason) => void events.push(`park ${j.stringId}: ${reason}`),
    hold: (jobs, reason, cause) => void events.push(`hold ${ids(jobs)} ${cause}: ${reason}`),
    drop: (jobs, reason) => void events.push(`drop ${ids(jobs)}: ${reason}`),
    absorbed: (j, status) => void events.push(`absorbed ${j.stringId} ${status}`),
    reentered: options.bare ? undefined : (n) => void events.push(`reentered ${n}`),
    countRun: (key) => void events.push(`run ${key}`),
    ...(options.isLong ? { isLong: options.isLong } : {}),
    ...(options.detach !== undefined
      ? {
          detach: (task: () => Promise<void>, jobs: Job[], weight: number) => {
            events.push(`detach ${ids(jobs)} (${weight})${options.detach ? '' : ' refused'}`)
            if (!options.detach) return false
            detached.push(task())
            return true
          },
        }
      : {}),
  })
  const detached: Array<Promise<void>> = []
  return { process, events, items, lines, runOptions, signal, detached }
}

describe('one pipeline run over a group', () => {
  it('fetches the translations once, runs the pipeline over every string, and reports each output', async () => {
    const { process, events, items } = setup()
    await process([job(1), job(2)])
    expect(events).toEqual(['settings 1 7 11 qa', 'translations acme 7 de 1,2', 'run qa-gate', 'report 1 "ok" by qa-gate', 'report 2 "ok" by qa-gate'])
    expect(items[0]![0]).toMatchObject({
      id: 1, key: 's.1', context: 'ctx', maxLength: 20, source: 'source 1', translation: 'target 1', isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [3],
      settings: { strict: false }, projectId: 7, stepId: 11, organizationId: '1',
    })
    expect(items[0]![0]!.sourceLanguage).toMatchObject({ id: 'en' })
    expect(items[0]![0]!.targetLanguage).toMatchObject({ id: 'de' })
    expect(items[0]![0]!.plurals).toBeUndefined()
  })

  it('fetches nothing for a pipeline that needs no translation', async () => {
    const { process, events, items } = setup({ pipeline: { needsTranslation: false } })
    await process([job(1)])
    expect(events.some((e) => e.startsWith('translations'))).toBe(false)
    expect(items[0]![0]!.translation).toBeUndefined()
  })

  it('gives a string with no translation an empty one, and a plural string its forms with "other" as the text', async () => {
    const { process, items } = setup({
      translations: () => new Map<number, TranslationRecord>([
        [2, { stringId: 2, plurals: [{ plural: 'one', text: 'ein Apfel' }, { plural: 'other', text: 'Äpfel' }] }],
        [3, { stringId: 3, plurals: [{ plural: 'one', text: 'eins' }, { plural: 'few', text: 'wenige' }] }],
      ]),
    })
    await process([job(1), job(2), job(3)])
    const [none, plural, noOther] = items[0]!
    expect(none).toMatchObject({ translation: '', isPlural: false })
    expect(plural).toMatchObject({ translation: 'Äpfel', isPlural: true, plurals: [{ plural: 'one', text: 'ein Apfel' }, { plural: 'other', text: 'Äpfel' }] })
    expect(noOther).toMatchObject({ translation: 'wenige', isPlural: true })
  })

  it('uses the stored settings of the step, or the defaults when nothing is stored', async () => {
    const stored = setup({ settings: { strict: true } })
    await stored.process([job(1)])
    expect(stored.items[0]![0]!.settings).toEqual({ strict: true })
    const nothing = setup({ settings: undefined })
    await nothing.process([job(1)])
    expect(nothing.items[0]![0]!.settings).toEqual({ strict: false })
  })

  // Saved settings the pipeline refuses (it changed its schema since): running the strings with
  // the defaults instead checked them without what the user set (forbidden words, a limit) and
  // routed them as if it had. They go where on-error says, and the log says why, once per step.
  it('runs nothing with invalid stored settings: each string goes where on-error says, logged once per step', async () => {
    const invalid = setup({ settings: { bad: true } })
    await invalid.process([job(1), job(2)])
    await invalid.process([job(3)])
    expect(invalid.items).toEqual([])
    expect(invalid.events).toEqual(['settings 1 7 11 qa', 'translations acme 7 de 1,2', 'report 1 "" by qa-gate', 'report 2 "" by qa-gate', 'settings 1 7 11 qa', 'translations acme 7 de 3', 'report 3 "" by qa-gate'])
    const warnings = invalid.lines.filter((l) => l.level === 40)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ errors: ['bad is not allowed'], module: 'qa', step: 11 })
    // on-error: retry, tried again with back-off (the settings may be saved again meanwhile).
    const retried = setup({ settings: { bad: true }, onErrorRetry: true })
    await retried.process([job(1)])
    expect(retried.events.filter((e) => !e.startsWith('settings') && !e.startsWith('translations'))).toEqual(['retry 1 in 2000'])
  })

  it('runs with no settings when nothing is stored and even the defaults are invalid', async () => {
    const { process, items } = setup({ settings: undefined, pipeline: { resolveSettings: () => ({ ok: false, errors: ['x'] }) } })
    await process([job(1)])
    expect(items[0]![0]!.settings).toEqual({})
  })

  it('finishes superseded revisions without running them', async () => {
    const { process, events } = setup({ current: (j) => j.stringId !== 1 })
    await process([job(1), job(2)])
    expect(events[0]).toBe('superseded 1')
    expect(events).toContain('translations acme 7 de 2')
    expect(events.filter((e) => e.startsWith('report'))).toEqual(['report 2 "ok" by qa-gate'])
  })

  it('runs nothing when every revision was superseded', async () => {
    const { process, events } = setup({ current: () => false })
    await process([job(1)])
    expect(events).toEqual(['superseded 1'])
  })

  it('parks invalid events at the service with "" and runs the rest', async () => {
    const { process, events } = setup()
    await process([job(1, { invalid: 'no text' }), job(2)])
    expect(events[0]).toBe('report 1 ""')
    expect(events).toContain('translations acme 7 de 2')
    const only = setup()
    await only.process([job(1, { invalid: '' })])
    expect(only.events).toEqual(['report 1 ""'])
  })

  it('with QUEUE=bullmq, reports no invalid event or outcome over a newer revision noted in Redis', async () => {
    const { process, events } = setup({ newer: [1, 3] })
    await process([job(1, { invalid: 'no text' }), job(2, { invalid: 'no text' }), job(3), job(4)])
    expect(events).toContain('superseded 1')
    expect(events).toContain('report 2 ""')
    expect(events).toContain('superseded 3')
    expect(events).toContain('report 4 "ok" by qa-gate')
    expect(events.filter((e) => e.startsWith('report'))).toEqual(['report 2 ""', 'report 4 "ok" by qa-gate'])
  })

  it('parks a group whose module no pipeline declares', async () => {
    const { process, events } = setup({ pipeline: null })
    await process([job(1), job(2)])
    expect(events).toEqual(['park 1: no pipeline declares module key "qa"', 'park 2: no pipeline declares module key "qa"'])
  })

  it('asks the service about strings that came back, runs those it waits for and absorbs the rest', async () => {
    const { process, events } = setup({ statuses: { 1: 'NEED_PROCESS', 2: 'DONE' } })
    await process([job(1, { recheck: true }), job(2, { recheck: true }), job(3, { recheck: true }), job(4)])
    expect(events.slice(0, 4)).toEqual(['statuses 1,2,3', 'absorbed 2 DONE', 'absorbed 3 absent', 'reentered 1'])
    expect(events).toContain('translations acme 7 de 4,1')
  })

  it('counts no re-entry when every string that came back is a repeat', async () => {
    const { process, events } = setup({ statuses: { 1: 'DONE' } })
    await process([job(1, { recheck: true })])
    expect(events).toEqual(['statuses 1', 'absorbed 1 DONE'])
  })

  it('holds, drops or retries the group when the statuses cannot be read', async () => {
    const held = setup({ statuses: new NotConnectedError('acme') })
    await held.process([job(1, { recheck: true }), job(2)])
    expect(held.events[1]).toMatch(/^hold 1,2 disconnected: the status of strings that arrived again could not be read: organization "acme" is not connected/)
    const dropped = setup({ statuses: new ApiError(404, 'no step', 'GET', '/statuses', 1) })
    await dropped.process([job(1, { recheck: true })])
    expect(dropped.events[1]).toMatch(/^drop 1: the status of strings/)
    // The API failing through the request's few attempts in the slot: out of the slot, tried again
    // later; at least as late as a Retry-After asked.
    const failed = setup({ statuses: new ApiError(503, '', 'GET', '/statuses', 3) })
    await failed.process([job(1, { recheck: true })])
    expect(failed.events).toEqual(['statuses 1', 'retry 1 in 2000'])
    expect(failed.lines.find((l) => l.level === 40)!.msg).toMatch(/tried again/)
    const limited = Object.assign(new ApiError(429, '', 'GET', '/statuses', 3), { retryAfterMs: 30_000 })
    const slow = setup({ statuses: limited })
    await slow.process([job(1, { recheck: true })])
    expect(slow.events).toEqual(['statuses 1', 'retry 1 in 30000 not before 30000'])
    // Attempts spent: held as unavailable (tried again by itself), never parked for a restart.
    const outage = setup({ statuses: new ApiError(503, '', 'GET', '/statuses', 3) })
    await outage.process([job(1, { recheck: true, attempts: 2 })])
    expect(outage.events).toEqual(['statuses 1', expect.stringMatching(/^hold 1 unavailable: the status of strings that arrived again could not be read: GET \/statuses answered 503/)])
    // Anything else that is not an answer of the API (the token store failing, say): tried again
    // later, then held as unavailable too, never parked for a restart.
    const broken = setup({ statuses: new Error('store down') })
    await broken.process([job(1, { recheck: true, attempts: 2 })])
    expect(broken.events).toEqual(['statuses 1', 'hold 1 unavailable: the status of strings that arrived again could not be read: store down'])
    // A refusal with no rule of its own (422): tried again, then parked.
    const refused = setup({ statuses: new ApiError(422, 'no', 'GET', '/statuses', 1) })
    await refused.process([job(1, { recheck: true, attempts: 2 })])
    expect(refused.events).toEqual(['statuses 1', 'park 1: the status of strings that arrived again could not be read: GET /statuses answered 422: no'])
  })

  it('holds for a refusal, and retries a failed translation fetch with back-off until the attempts run out', async () => {
    const forbidden = setup({ translations: () => Promise.reject(new ApiError(403, 'Forbidden', 'GET', '/translations', 1)) })
    await forbidden.process([job(1)])
    expect(forbidden.events.at(-1)).toMatch(/^hold 1 forbidden: translations could not be fetched: GET \/translations answered 403/)

    const down = setup({ translations: () => Promise.reject(new Error('socket hang up')), maxAttempts: 3 })
    await down.process([job(1), job(2, { attempts: 1 }), job(3, { attempts: 2 })])
    // attempts become 1, 2, 3: the third is held as unavailable; the others wait 2^attempts s (from the first).
    expect(down.events.slice(-2)).toEqual(['hold 3 unavailable: translations could not be fetched: socket hang up', 'retry 1,2 in 2000'])
  })

  it('caps the back-off at a minute', async () => {
    const { process, events } = setup({ translations: () => Promise.reject(new Error('down')), maxAttempts: 100 })
    await process([job(1, { attempts: 9 })])
    expect(events.at(-1)).toBe('retry 1 in 60000')
  })

  it('retries a run that failed, and parks what ran out of attempts', async () => {
    const { process, events, lines } = setup({ results: () => Promise.reject(new Error('plugin crashed')), maxAttempts: 2 })
    await process([job(1), job(2, { attempts: 1 })])
    expect(events.slice(-2)).toEqual(['park 2: pipeline failed: plugin crashed', 'retry 1 in 2000'])
    expect(lines.find((l) => l.level === 50)!.msg).toBe('pipeline run failed')
  })

  it('retries strings the pipeline asks to retry (or gives no result for), and parks them at the service with "" when retries run out', async () => {
    const { process, events, lines } = setup({
      maxAttempts: 3,
      results: (items) => items.filter((i) => i.id !== 4).map((i) => ({ id: i.id, port: 'ok', output: 'ok', findings: [], retry: i.id !== 1 })),
    })
    await process([job(1), job(2), job(3, { attempts: 2 }), job(4, { attempts: 1 })])
    expect(events.filter((e) => e.startsWith('report') || e.startsWith('retry') || e.startsWith('park'))).toEqual([
      'report 1 "ok" by qa-gate',
      'report 3 ""',
      'retry 2,4 in 2000',
    ])
    expect(lines.find((l) => l.level === 40)).toMatchObject({ string: 3, delivery: 'b3' })
  })

  describe('long strings (the pipelines\' long-text lane)', () => {
    const long = (item: Item) => item.translation!.length > 10
    const translations = (ids: number[]) => new Map(ids.map((stringId) => [stringId, { stringId, text: stringId % 2 ? `a long translation ${stringId}` : `t ${stringId}` }]))
    /** Runs of the long strings wait for `open`. */
    function held() {
      let open: () => void = () => {}
      const gate = new Promise<void>((r) => (open = r))
      const results = async (batch: Item[]) => {
        if (batch.some(long)) await gate
        return batch.map((i) => ({ id: i.id, port: 'ok', output: 'ok', findings: [] as never[] }))
      }
      return { open, results }
    }

    it('run apart from the others, which are reported without waiting for them; their run is detached from the queue\'s slot', async () => {
      const { open, results } = held()
      const { process, events, items, detached } = setup({ translations, isLong: long, detach: true, results })
      await process([job(1), job(2), job(3), job(4)])
      // The group's call is over: the short strings are reported, the long ones still run.
      expect(items.map((b) => b.map((i) => i.id))).toEqual([[1, 3], [2, 4]])
      expect(events.filter((e) => e.startsWith('report') || e.startsWith('detach'))).toEqual(['detach 1,3 (56)', 'report 2 "ok" by qa-gate', 'report 4 "ok" by qa-gate'])
      open()
      await Promise.all(detached)
      expect(events.filter((e) => e.startsWith('report')).slice(2)).toEqual(['report 1 "ok" by qa-gate', 'report 3 "ok" by qa-gate'])
      // One fetch, one settings read, one run counted for the group.
      expect(events.filter((e) => e.startsWith('translations') || e.startsWith('settings') || e.startsWith('run'))).toHaveLength(3)
    })

    it('when the queue holds as many long strings as it may, they come back later, no attempt counted, and the others run', async () => {
      const { process, events, items, lines } = setup({ translations, isLong: long, detach: false })
      await process([job(1), job(2)])
      expect(items.map((b) => b.map((i) => i.id))).toEqual([[2]])
      expect(events.filter((e) => /^(report|detach|retry|park)/.test(e))).toEqual(['detach 1 (28) refused', 'retry 1 in 5000', 'report 2 "ok" by qa-gate'])
      expect(job(1).attempts).toBe(0)
      expect(lines.find((l) => l.msg === 'the long-text lane holds as much as it may; these long strings come back later')).toMatchObject({ strings: 1, delayMs: 5000 })
    })

    it('when the run of the others fails after the long ones were handed on, only the others are given back as failed', async () => {
      const { process, events, detached } = setup({ translations, isLong: long, detach: true, reportFails: [2] })
      const failed = await process([job(1), job(2)]).then(() => undefined, (e: unknown) => e)
      expect(failed).toBeInstanceOf(PartFailed)
      expect((failed as PartFailed).jobs.map((j) => j.stringId)).toEqual([2])
      expect(((failed as PartFailed).error as Error).message).toBe('reporter broke')
      await Promise.all(detached)
      expect(events.filter((e) => e.startsWith('report'))).toEqual(['report 1 "ok" by qa-gate'])
    })

    it('a group of long strings only is one run, detached; a group with none is one run, in place', async () => {
      const { process, events, items, detached } = setup({ isLong: (i) => i.id > 10, detach: true })
      await process([job(11), job(12)])
      await process([job(1), job(2)])
      await Promise.all(detached)
      expect(items.map((b) => b.map((i) => i.id))).toEqual([[11, 12], [1, 2]])
      expect(events.filter((e) => e.startsWith('detach'))).toEqual(['detach 11,12 (36)'])
    })

    it('a detached run that fails is retried like any run', async () => {
      const { process, events, detached } = setup({ translations, isLong: long, detach: true, results: (batch) => (batch.some(long) ? Promise.reject(new Error('thread died')) : batch.map((i) => ({ id: i.id, port: 'ok', output: 'ok', findings: [] }))) })
      await process([job(1), job(2)])
      await Promise.all(detached)
      expect(events.filter((e) => e.startsWith('report') || e.startsWith('retry'))).toEqual(['report 2 "ok" by qa-gate', 'retry 1 in 2000'])
    })
  })

  it('a string whose newer revision arrived while it ran is finished as superseded, not reported', async () => {
    let asked = 0
    // Current when the run starts; by the time it ends, string 2 has a newer revision.
    const { process, events } = setup({ current: (j) => j.stringId !== 2 || asked++ === 0 })
    await process([job(1), job(2)])
    expect(events.filter((e) => /^(report|superseded)/.test(e))).toEqual(['report 1 "ok" by qa-gate', 'superseded 2'])
  })

  it('a run stopped by the worker\'s shutdown counts no attempt and parks nothing: the strings stay for the next start', async () => {
    const { process, events, lines } = setup({ aborted: true, maxAttempts: 1, results: () => Promise.reject(new Error('aborted')) })
    const j = job(1)
    await process([j])
    expect(events.filter((e) => /^(report|retry|park)/.test(e))).toEqual([])
    expect(j.attempts).toBe(0)
    expect(lines.filter((l) => l.level === 50)).toEqual([])
  })

  it('hands the worker\'s abort signal to the run and to each item', async () => {
    const { process, items, runOptions, signal } = setup()
    await process([job(1)])
    expect(runOptions[0]!.signal).toBe(signal)
    expect(items[0]![0]!.signal).toBe(signal)
  })

  it('takes the "other" plural form wherever it stands, and "" when there are no forms', async () => {
    const { process, items } = setup({
      translations: () => new Map<number, TranslationRecord>([
        [1, { stringId: 1, plurals: [{ plural: 'other', text: 'Äpfel' }, { plural: 'one', text: 'ein Apfel' }] }],
        [2, { stringId: 2, plurals: [] }],
      ]),
    })
    await process([job(1), job(2)])
    expect(items[0]!.map((i) => i.translation)).toEqual(['Äpfel', ''])
  })

  it('runs with the defaults when the worker keeps no step settings, and needs no re-entry counter', async () => {
    const { process, items, events } = setup({ bare: true, statuses: { 1: 'NEED_PROCESS' } })
    await process([job(1, { recheck: true })])
    expect(items[0]![0]!.settings).toEqual({ strict: false })
    expect(events.some((e) => e.startsWith('settings'))).toBe(false)
    expect(events).toContain('report 1 "ok" by qa-gate')
  })

  it('parks every string and retries none when all ran out of attempts', async () => {
    const { process, events } = setup({ translations: () => Promise.reject(new ApiError(422, 'no', 'GET', '/translations', 1)), maxAttempts: 2 })
    await process([job(1, { attempts: 1 }), job(2, { attempts: 5 })])
    expect(events.filter((e) => e.startsWith('park') || e.startsWith('retry'))).toEqual(['park 1: translations could not be fetched: GET /translations answered 422: no', 'park 2: translations could not be fetched: GET /translations answered 422: no'])
  })

  it('logs, at debug level, each run: its pipeline, strings, deliveries and outputs', async () => {
    const { process, lines } = setup({ level: 'debug', results: (batch) => batch.map((i) => ({ id: i.id, port: i.id === 3 ? '' : 'ok', output: null, findings: [] })) })
    await process([job(1), job(2, { batchId: 'b1' }), job(3)])
    const run = lines.find((l) => l.msg === 'pipeline run')
    expect(run).toMatchObject({ pipeline: 'qa-gate', strings: 3, deliveries: ['b1', 'b3'], ports: { ok: 2, '(parked)': 1 } })
    const quiet = setup()
    await quiet.process([job(1)])
    expect(quiet.lines.some((l) => l.msg === 'pipeline run')).toBe(false)
  })

  it('says what it does with invalid settings, failed runs and strings retried too often', async () => {
    const invalid = setup({ settings: { bad: true } })
    await invalid.process([job(1)])
    expect(invalid.lines.find((l) => l.level === 40)!.msg).toBe("stored step settings are invalid for the pipeline: its strings are not checked and go where on-error says; save the step's settings again (logged once per step)")
    const failed = setup({ translations: () => Promise.reject(new Error('down')) })
    await failed.process([job(1)])
    expect(failed.lines.find((l) => l.level === 40)).toMatchObject({ msg: 'translations could not be fetched; the strings will be tried again' })
    expect(JSON.stringify(failed.lines.find((l) => l.level === 40))).toContain('down')
    const crashed = setup({ results: () => Promise.reject(new Error('plugin crashed')) })
    await crashed.process([job(1)])
    expect(JSON.stringify(crashed.lines.find((l) => l.level === 50))).toContain('plugin crashed')
    const retried = setup({ maxAttempts: 1, results: (batch) => batch.map((i) => ({ id: i.id, port: 'ok', output: null, findings: [], retry: true })) })
    await retried.process([job(1)])
    expect(retried.lines.find((l) => l.level === 40)!.msg).toBe('pipeline asked for a retry too many times; parking the string as TODO')
  })
})
