// The findings stage: a run's reported decisions go to the findings log in one request, count
// against the window until written, raise or resolve issues once written, and a failed write is
// counted and logged without touching anything else.
import { afterEach, describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { FindingsLog } from '../../src/findings/findings-log.js'
import { createFindingsStage } from '../../src/findings/findings-stage.js'
import { jobKeyOf, type Job } from '../../src/protocol/job.js'
import type { Decision } from '../../src/protocol/decision.js'
import { createStores, type Stores } from '../../src/store/create-stores.js'

const en = languageFromCode('en')
const de = languageFromCode('de')

function decision(stringId: number, issues?: 'raise' | 'resolve'): Decision {
  const job: Job = {
    key: '', organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 2,
    string: { key: `k.${stringId}`, context: '', maxLength: 0, text: `Text ${stringId}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
    sourceLanguage: en, targetLanguage: de, batchId: 'b1', attempts: 0,
  }
  job.key = jobKeyOf(job)
  const findings = issues === 'raise' ? [{ check: 'tags', severity: 'error' as const, message: 'Tag <b> is missing.', code: 'tag.missing', quote: '<b>', in: 'source' as const }] : []
  return { job, port: issues === 'raise' ? 'translated' : 'approved', review: { pipeline: 'qa', pipelineName: 'QA', output: issues === 'raise' ? 'failed' : 'passed', findings, ...(issues ? { issues } : {}) } }
}

let stores: Stores | undefined
afterEach(async () => {
  await stores?.close()
  stores = undefined
})

function quietLog() {
  const lines: Array<{ fields: Record<string, unknown>; msg: string }> = []
  const log = { warn: (fields: Record<string, unknown>, msg: string) => { lines.push({ fields, msg }) } }
  return { lines, log: log as never }
}

describe('findings stage', () => {
  it('writes a run in one request to the log, counts it as pending until written, and raises issues after', async () => {
    stores = await createStores('memory://')
    const findings = new FindingsLog(stores.findings, { retentionMs: 60_000, maxStrings: 1000, lingerMs: 20 })
    // Strings 2 and 3 had an outcome logged before (a clean pass makes no entry of its own).
    for (const id of [2, 3]) await findings.record({ domain: 'acme', projectId: 7, languageId: 'de', stringId: id, at: '2026-01-01T00:00:00.000Z', organizationId: '200000', stepId: 11, key: `k.${id}`, pipeline: 'qa', outcome: 'translated', output: 'failed', sentBack: false, findings: [{ check: 'length', severity: 'warning', message: 'long' }] })
    const calls: number[] = []
    const recordMany = findings.recordMany.bind(findings)
    findings.recordMany = ((entries: never[], options: never) => { calls.push(entries.length); return recordMany(entries, options) }) as never
    const raised: number[] = []
    const counted: string[] = []
    const { log } = quietLog()
    const stage = createFindingsStage({
      findings, log,
      issues: { sentBack: (ref: { stringId: number }) => { raised.push(ref.stringId) }, passed: () => undefined, flush: async () => undefined } as never,
      countFinding: (check, severity) => { counted.push(`${check}/${severity}`) },
    })
    stage.reported([decision(1, 'raise'), decision(2), decision(3, 'resolve'), { job: decision(4).job, port: '' }])
    // Three reviewed strings (the fourth has no review): one request, three pending.
    expect(calls).toEqual([3])
    expect(stage.pending()).toBe(3)
    expect(raised).toEqual([])
    await stage.flush()
    expect(stage.pending()).toBe(0)
    expect(raised).toEqual([1])
    expect(counted).toEqual(['tags/error'])
    const saved = await findings.search({ stringId: 1 })
    expect(saved).toMatchObject([{ outcome: 'translated', output: 'failed', sentBack: true, key: 'k.1' }])
    expect(saved[0]!.hash).toMatch(/^[0-9a-f]+$/)
    expect((await findings.search({ stringId: 2 }))[0]).not.toHaveProperty('hash')
    // Whether the outcome resolves the worker's issues, as decided now (the catch-up reads it).
    expect((await findings.search({ stringId: 3 }))[0]).toMatchObject({ resolves: true })
    for (const id of [1, 2]) expect((await findings.search({ stringId: id }))[0]).toMatchObject({ resolves: false })
  })

  it('a clean pass replaces the entry there is and makes none where there is none; any finding, a parking or a send-back makes one', async () => {
    stores = await createStores('memory://')
    const findings = new FindingsLog(stores.findings, { retentionMs: 60_000, maxStrings: 1000, lingerMs: 0 })
    const passed: number[] = []
    const { log } = quietLog()
    const stage = createFindingsStage({ findings, log, issues: { sentBack: () => undefined, passed: (ref: { stringId: number }) => { passed.push(ref.stringId) }, flush: async () => undefined } as never })
    stage.reported([decision(1, 'raise')])
    await stage.flush()
    await findings.update({ domain: 'acme', projectId: 7, languageId: 'de', stringId: 1 }, (e) => e && { ...e, issues: [{ id: 91, hash: e.hash!, status: 'unresolved', at: e.at }] })
    const warned = decision(4)
    warned.review!.findings = [{ check: 'length', severity: 'warning', message: 'Long.' }]
    const parked: Decision = { job: decision(5).job, port: '', review: { pipeline: 'qa', pipelineName: 'QA', output: null, findings: [] } }
    const sentBackClean: Decision = { job: decision(6).job, port: 'translated', review: { pipeline: 'qa', pipelineName: 'QA', output: 'failed', findings: [], issues: 'raise' } }
    stage.reported([decision(1, 'resolve'), decision(2), decision(3, 'resolve'), warned, parked, sentBackClean])
    await stage.flush()
    // String 1's entry now says it passed (it no longer explains a send-back), its issue still known
    // and resolved by the task its pass cost.
    expect(await findings.search({ stringId: 1 })).toMatchObject([{ outcome: 'approved', output: 'passed', findings: [], resolves: true, issues: [{ id: 91, status: 'unresolved' }] }])
    expect(passed).toEqual([1])
    // Clean passes of strings with no entry: nothing written, nothing asked of the issue sender.
    for (const id of [2, 3]) expect(await findings.search({ stringId: id })).toEqual([])
    expect(await findings.search({ stringId: 4 })).toMatchObject([{ outcome: 'approved', findings: [{ severity: 'warning' }] }])
    expect(await findings.search({ stringId: 5 })).toMatchObject([{ outcome: '', output: null }])
    expect(await findings.search({ stringId: 6 })).toMatchObject([{ outcome: 'translated', sentBack: true }])
    // A string's clean pass in one batch after its send-back in the same batch replaces it.
    stage.reported([decision(7, 'raise'), decision(7, 'resolve')])
    await stage.flush()
    expect(await findings.search({ stringId: 7 })).toMatchObject([{ outcome: 'approved', findings: [] }])
    expect(stage.pending()).toBe(0)
  })

  it('a passed string costs a resolving task only with an open issue of ours, or a lost POST that may have raised one', async () => {
    stores = await createStores('memory://')
    const findings = new FindingsLog(stores.findings, { retentionMs: 60_000, maxStrings: 1000, lingerMs: 0 })
    const passed: number[] = []
    const { log } = quietLog()
    const stage = createFindingsStage({ findings, log, issues: { sentBack: () => undefined, passed: (ref: { stringId: number }) => { passed.push(ref.stringId) }, flush: async () => undefined } as never })
    stage.reported([decision(1, 'raise'), decision(2, 'raise'), decision(3, 'raise')])
    await stage.flush()
    const ref = (stringId: number) => ({ domain: 'acme', projectId: 7, languageId: 'de', stringId })
    // 1: an issue open; 2: a POST whose answer was lost; 3: nothing raised.
    await findings.update(ref(1), (e) => e && { ...e, issues: [{ id: 9, hash: 'h', status: 'unresolved', at: 'x' }] })
    await findings.update(ref(2), (e) => e && { ...e, issues: [], unsure: 'x' })
    await findings.update(ref(3), (e) => e && { ...e, issues: [] })
    stage.reported([decision(1, 'resolve'), decision(2, 'resolve'), decision(3, 'resolve')])
    await stage.flush()
    expect(passed).toEqual([1, 2])
    expect((await findings.get(ref(2)))?.unsure).toBe('x')
  })

  it('counts and logs a failed write per string, and never rejects', async () => {
    stores = await createStores('memory://')
    const findings = new FindingsLog(stores.findings, { retentionMs: 60_000, maxStrings: 1000, lingerMs: 0 })
    findings.recordMany = (() => Promise.reject(new Error('disk full'))) as never
    let failures = 0
    const { lines, log } = quietLog()
    const stage = createFindingsStage({ findings, log, failed: () => { failures++ } })
    stage.reported([decision(1), decision(2)])
    await stage.flush()
    expect(failures).toBe(2)
    expect(lines.map((l) => [l.fields.string, l.msg])).toEqual([[1, 'findings could not be logged; the status was reported'], [2, 'findings could not be logged; the status was reported']])
    expect(stage.pending()).toBe(0)
  })

  it('an issue request that throws is counted like a failed write, and the others still go', async () => {
    stores = await createStores('memory://')
    const findings = new FindingsLog(stores.findings, { retentionMs: 60_000, maxStrings: 1000, lingerMs: 0 })
    const raised: number[] = []
    let failures = 0
    const { lines, log } = quietLog()
    const stage = createFindingsStage({
      findings, log, failed: () => { failures++ },
      issues: { sentBack: (ref: { stringId: number }) => { if (ref.stringId === 1) throw new Error('boom'); raised.push(ref.stringId) }, passed: () => undefined, flush: async () => undefined } as never,
    })
    stage.reported([decision(1, 'raise'), decision(2, 'raise')])
    await stage.flush()
    expect(failures).toBe(1)
    expect(raised).toEqual([2])
    expect(lines.map((l) => l.fields.string)).toEqual([1])
  })
})

describe('findings log, several records at once', () => {
  it('resolves each caller with its own entries, across one coalesced write', async () => {
    stores = await createStores('memory://')
    const findings = new FindingsLog(stores.findings, { retentionMs: 60_000, maxStrings: 1000, lingerMs: 10 })
    const a = findings.recordMany([decision(1).job, decision(2).job].map((j) => ({ domain: j.domain, projectId: j.projectId, languageId: j.languageId, stringId: j.stringId, at: 'x', organizationId: j.organizationId, stepId: j.stepId, key: j.string.key, pipeline: 'qa', outcome: 'approved', output: 'passed', sentBack: false, findings: [] })))
    const b = findings.record({ domain: 'acme', projectId: 7, languageId: 'fr', stringId: 3, at: 'y', organizationId: '200000', stepId: 11, key: 'k.3', pipeline: 'qa', outcome: 'translated', output: 'failed', sentBack: true, findings: [] })
    expect(await findings.recordMany([])).toEqual([])
    const [first, second] = await Promise.all([a, b])
    expect(first.map((e) => e.stringId)).toEqual([1, 2])
    expect(second).toMatchObject({ stringId: 3, languageId: 'fr', outcome: 'translated' })
    expect((await findings.search({ stringId: 3 })).map((e) => e.at)).toEqual(['y'])
  })
})
