import { describe, expect, it } from 'vitest'
import { checkTargets, formatTable, resultRows, summarizeAdversarial, type BenchResults } from '../../src/bench/report.js'
import { perSecond, percentile, ratio, summarizeLatencies } from '../../src/bench/stats.js'
import { niceMax, renderFloodChart } from '../../src/bench/svg-chart.js'
import { batchSource, underOtherOrganizations } from '../../src/bench/webhook-bodies.js'
import { verifySignature } from '../../src/webhooks/verify-signature.js'
import { validateBatch, validateRecalculationEvent } from '../../src/webhooks/batch-schema.js'
import { decodeEntry } from '../../src/queue/journal.js'
import { decodeJobs, encodeJobs } from '../../src/queue/job-codec.js'
import { decodeBatch } from '../../src/webhooks/decode-batch.js'

describe('bench statistics', () => {
  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i)
    expect(percentile(values, 50)).toBe(50)
    expect(percentile(values, 99)).toBe(99)
    expect(percentile(values, 100)).toBe(100)
    expect(percentile([7], 99)).toBe(7)
    expect(percentile([], 50)).toBeNaN()
  })
  it('summarizes latencies and rates', () => {
    expect(summarizeLatencies([1, 2, 3, 4])).toEqual({ count: 4, p50: 2, p99: 4, max: 4, mean: 2.5 })
    expect(perSecond(500, 250)).toBe(2000)
    expect(perSecond(1, 0)).toBe(0)
    expect(ratio(1, 4)).toBe(0.25)
    expect(ratio(1, 0)).toBeNaN()
  })
})

describe('flood chart', () => {
  it('rounds axes to 1, 2 or 5 times a power of ten', () => {
    expect(niceMax(0)).toBe(1)
    expect(niceMax(7)).toBe(10)
    expect(niceMax(130)).toBe(200)
    expect(niceMax(4100)).toBe(5000)
  })
  it('draws both series as polylines in a well-formed SVG', () => {
    const svg = renderFloodChart([{ t: 0.25, rssMb: 80, donePerSecond: 0 }, { t: 0.5, rssMb: 120, donePerSecond: 9000 }], 'Flood <test>')
    expect(svg.startsWith('<svg')).toBe(true)
    expect(svg.trim().endsWith('</svg>')).toBe(true)
    expect(svg.match(/<polyline/g)).toHaveLength(2)
    expect(svg).toContain('Flood &lt;test&gt;')
    expect(renderFloodChart([], 'empty')).not.toContain('<polyline')
  })
})

describe('results', () => {
  const results: BenchResults = {
    date: '2026-01-01T00:00:00.000Z', mode: 'quick', machine: { cpus: 2, cpuModel: 'x', node: 'v20', platform: 'linux' }, settings: {}, targets: [],
    endToEnd: { strings: 1000, seconds: 1, stringsPerSecond: 1000, patchRequests: 2, translationRequests: 2, patchesPerString: 0.002, translationFetchesPerString: 0.002, notDone: 0 },
    ai: { latencyMs: 100, first: { strings: 100, seconds: 1, stringsPerSecond: 100, modelRequests: 5, modelRequestsPerString: 0.05, notDone: 0 }, cached: { strings: 100, seconds: 1, stringsPerSecond: 100, modelRequests: 0, modelRequestsPerString: 0, notDone: 0 } },
  }
  it('checks the targets it has numbers for', () => {
    const t = checkTargets(results)
    expect(t.map((x) => [x.what, x.met])).toEqual([
      ['end to end strings/s', false],
      ['status PATCH per string', true],
      ['translation fetches per string', true],
      ['model requests per string', true],
      ['model requests, cached rerun', true],
    ])
  })
  it('fails ingest on any refused batch, whatever the ratio', () => {
    const side = (statuses: Record<string, number>) => ({ batchesPerSecond: 500, eventsPerSecond: 50_000, latencyMs: summarizeLatencies([1, 2]), statuses })
    const ingest = (statuses: Record<string, number>) => ({ batchSize: 100, concurrency: 16, durationMs: 8000, worker: side(statuses), baseline: side({ 200: 10 }), ratio: 1 })
    const row = (statuses: Record<string, number>) => checkTargets({ ...results, ingest: ingest(statuses) }).find((x) => x.what === 'ingest: worker non-2XX')
    expect(row({ 200: 4000 })).toMatchObject({ measured: '0', met: true })
    expect(row({ 200: 100, 401: 5952 })).toMatchObject({ measured: '5952', met: false })
    // With end to end in the same run, its rate as a ratio to the baseline's events/s (issue 16's goal).
    expect(checkTargets({ ...results, ingest: ingest({ 200: 1 }) }).find((x) => x.what === 'end to end / ingest baseline events/s')).toMatchObject({ measured: '0.02', met: false })
    // The warm worker's second run, against the same (warmed-up) baseline; its rows in the table.
    const warm = { ...results.endToEnd!, stringsPerSecond: 16_000, cpuMsPerThousand: { worker: 200, workerMainThread: 64, emulator: 13, sender: 9 } }
    const both = { ...results, ingest: ingest({ 200: 1 }), endToEnd: { ...results.endToEnd!, warm } }
    expect(checkTargets(both).find((x) => x.what === 'end to end, warm worker / ingest baseline events/s')).toMatchObject({ measured: '0.32', met: true })
    expect(checkTargets(results).find((x) => x.what.includes('warm'))).toBeUndefined()
    const table = resultRows(both)
    expect(table).toContainEqual(['e2e, warm worker (a second run): strings/s', '16000'])
    expect(table).toContainEqual(['e2e, warm worker: the worker\'s main thread, CPU ms per 1,000 strings', '64'])
    // What the warm run's strings still cost once DONE (their issue work), when measured.
    expect(table.find((r) => r[0]?.includes('after the last DONE'))).toBeUndefined()
    const after = (afterDone: { seconds: number; workerCpuMsPerThousand: number; commentRequests: number; stillBusy?: boolean }) => resultRows({ ...both, endToEnd: { ...both.endToEnd, warm: { ...warm, afterDone } } })
    const afterRow = 'e2e, warm worker: after the last DONE (issue work): s / worker CPU ms per 1,000 strings / comment requests'
    expect(after({ seconds: 14, workerCpuMsPerThousand: 378, commentRequests: 14912 })).toContainEqual([afterRow, '14.0 / 378 / 14912'])
    // The cold run's own, in its row.
    expect(resultRows({ ...both, endToEnd: { ...both.endToEnd, afterDone: { seconds: 6.5, workerCpuMsPerThousand: 150, commentRequests: 9800 } } })).toContainEqual(['e2e: after the last DONE (issue work): s / worker CPU ms per 1,000 strings / comment requests', '6.5 / 150 / 9800'])
    // Not idle after 30 s: said so.
    expect(after({ seconds: 30.5, workerCpuMsPerThousand: 700, commentRequests: 30000, stillBusy: true })).toContainEqual([afterRow, '> 30.5 / 700 / 30000'])
    // Strings per pipeline run, where the worker's metrics gave it (what a translation fetch is shared by).
    expect(resultRows({ ...results, endToEnd: { ...results.endToEnd!, stringsPerPipelineRun: 365.9 } })).toContainEqual(['e2e: strings per pipeline run', '365.9'])
    expect(table.find((r) => r[0] === 'e2e: strings per pipeline run')).toBeUndefined()
  })

  it('restart with a backlog: a pair lost or memory over 300 MB is a target missed; its rows in the table', () => {
    const restart = {
      pairs: 1_000_000, batchSize: 100, failed: 0, journalAtKill: 1_000_000, journalMbAtKill: 180, readySeconds: 2.5, replayedSeconds: 3.1, journalAfterReplay: 1_000_000,
      startPeakRssMb: 150, rssAfterReplayMb: 140, heapUsedAfterReplayMb: 40, baselineEventsPerSecond: 20_000, drainPerSecond: 5000, drainVsBaseline: 0.25, drainPeakRssMb: 280, done: 1_000_000, notDone: 0,
    }
    const targets = (r: typeof restart) => checkTargets({ ...results, restart: r }).filter((x) => x.what.startsWith('restart')).map((x) => [x.what, x.measured, x.met])
    expect(targets(restart)).toEqual([['restart: pairs lost (not DONE at the end)', '0', true], ['restart: peak RSS from start to drained (MB)', '280', true]])
    expect(targets({ ...restart, done: 999_999, notDone: 1, drainPeakRssMb: 301 })).toEqual([['restart: pairs lost (not DONE at the end)', '1', false], ['restart: peak RSS from start to drained (MB)', '301', false]])
    const table = resultRows({ ...results, restart })
    expect(table).toContainEqual(['restart: s to /readyz / to the journal indexed', '2.50 / 3.10'])
    expect(table).toContainEqual(['restart: pairs in the journal 5 s after indexed', '1000000'])
  })

  it('adversarial rounds: the rate ratio of the median round, the delay and outcome of the worst', () => {
    const run = (perSecond: number, p99: number, slowest: number | null) => ({
      normalStrings: 100, adversarialStrings: slowest === undefined ? 0 : 2, seconds: 1, normalStringsPerSecond: perSecond,
      eventLoopDelayP99Ms: p99, eventLoopDelayMaxMs: p99, healthzP99Ms: 1, healthzMaxMs: 1, checksStopped: 0, spareRuns: 0,
      outcomes: [{ name: 'a', chars: 10, seconds: 1 }, { name: 'b', chars: 10, seconds: slowest }],
    })
    const round = (without: number, withSlow: number, p99: number, slowest: number | null) => ({
      without: run(without, 10, 0), with: run(withSlow, p99, slowest), rateRatio: withSlow / without,
    })
    const a = summarizeAdversarial(null, [round(1000, 950, 20, 2), round(1000, 700, 60, 3), round(1000, 880, 30, 4.5)])
    expect(a.rateRatio).toBe(0.88)
    expect(a.with.normalStringsPerSecond).toBe(880) // the runs shown are the median round's
    expect(a.worst).toEqual({ eventLoopDelayP99Ms: 60, slowestOutcomeSeconds: 4.5 })
    const t = checkTargets({ ...results, adversarial: a })
    expect(t.filter((x) => x.what.startsWith('adversarial')).map((x) => [x.what, x.measured, x.met])).toEqual([
      ['adversarial: event-loop delay p99 (ms) (worst of 3 rounds)', '60', false],
      ['adversarial: slowest outcome (s) (worst of 3 rounds)', '4.5', true],
      ['adversarial: normal rate with / without (median of 3 rounds)', '0.88', false],
    ])
    // A string with no outcome in any round is missing, not fast.
    expect(summarizeAdversarial(null, [round(1000, 950, 20, null)]).worst.slowestOutcomeSeconds).toBe(Number.POSITIVE_INFINITY)
    expect(() => summarizeAdversarial(null, [])).toThrow('no adversarial round')
  })

  it('prints an aligned table', () => {
    const table = formatTable(resultRows(results)).split('\n')
    expect(table[0]).toMatch(/^measure\s+value$/)
    expect(new Set(table.map((l) => l.length)).size).toBe(1)
  })
})

describe('webhook bodies', () => {
  it('builds signed batches of complete, valid events', () => {
    const source = batchSource({ seed: 3, strings: 120, languages: ['de', 'fr'] }, { appSecret: 's3cret', batchSize: 100 })
    expect(source.pairs).toBe(240)
    expect(source.count).toBe(3)
    const b = source.batch(2)
    expect(b.events).toBe(40)
    expect(verifySignature(b.body, b.headers['X-Service-Signature'], ['s3cret'])).toBe(true)
    const body = JSON.parse(b.body.toString('utf8')) as { events: Array<{ stringStatus: Record<string, unknown> }> }
    expect(validateBatch(body)).toBe(true)
    for (const e of body.events) expect(validateRecalculationEvent(e)).toBe(true)
    expect(Object.keys(body.events[0]!.stringStatus).sort()).toEqual(['affectedLanguage', 'organizationId', 'originEvent', 'output', 'sourceLanguage', 'status', 'translation', 'user', 'workflowStep'])
  })

  it('sends a later pass as another organization that the worker accepts', () => {
    const source = batchSource({ seed: 3, strings: 10, languages: ['de', 'fr'] }, { appSecret: 's3cret', batchSize: 20 })
    const orgId = source.sample.organization.id
    const pass = underOtherOrganizations(source.batch(0), orgId, 's3cret')
    expect(pass(0).headers['X-Service-Id']).toBe(orgId)
    const second = pass(2)
    expect(second.headers['X-Service-Id']).toBe(`${orgId}-2`)
    const decoded = decodeBatch(second.body, second.headers['X-Service-Signature']!, ['s3cret'], second.headers['X-Service-Id'])
    expect(decoded).toMatchObject({ ok: true, organizationId: `${orgId}-2`, count: 20 })
    // The original pass still decodes as the original organization; a pass's body under the
    // original header is refused (what the worker did to the bench before passes were re-signed).
    expect(decodeBatch(second.body, second.headers['X-Service-Signature']!, ['s3cret'], orgId)).toMatchObject({ ok: false, code: 'organization_mismatch' })
  })
})

describe('journal entries', () => {
  it('round-trip through the compact form', () => {
    const source = batchSource({ seed: 4, strings: 30, languages: ['de', 'ja'] }, { appSecret: 's', batchSize: 60 })
    const b = source.batch(0)
    const decoded = decodeBatch(b.body, b.headers['X-Service-Signature']!, ['s'])
    if (!decoded.ok) throw new Error(decoded.message)
    const origin = { organizationId: '200000', domain: 'acme', batchId: 'b1' }
    const jobs = decodeJobs(decoded.jobs, origin)
    expect(jobs).toHaveLength(60)
    const stored = encodeJobs(jobs)
    expect(decodeJobs(stored, origin)).toEqual(jobs)
    expect(stored.length).toBeLessThan(JSON.stringify(jobs).length * 0.6)
    expect(decodeEntry(jobs, 'b1')).toBe(jobs)
    expect(decodeEntry({ v: 9 }, 'b1')).toBeUndefined()
  })
})
