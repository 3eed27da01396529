// The Reporter on its own, against the real ApiClient and the contract fake: grouping, when a
// group is sent, what each hook is told, and what is logged. (test/platform/reporter.test.ts runs
// it inside a worker.)
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { ApiClient } from '../../src/platform/api-client.js'
import { Reporter, type ReporterHooks } from '../../src/platform/reporter.js'
import type { Decision } from '../../src/protocol/decision.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger } from '../../src/util/logger.js'
import { language } from '../support/events.js'
import { contractFake, type ContractFakeOptions } from '../support/contract-fake.js'

const API = 'http://api.test'
const open: Reporter[] = []
afterEach(async () => {
  while (open.length) await open.pop()!.flush()
})

function job(o: Partial<Job> & { stringId: number }): Job {
  return {
    key: `k${o.stringId}`, organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', revision: 1,
    string: { key: `key.${o.stringId}`, context: '', maxLength: 0, text: 'Text', isPlural: false, fileType: 'json', filePath: '/ui.json', labelIds: [] },
    sourceLanguage: language('en'), targetLanguage: language(o.languageId ?? 'de'), batchId: 'b1', attempts: 0,
    ...o,
  }
}

function setUp(o: { lingerMs?: number; maxBatch?: number; fake?: ContractFakeOptions; hooks?: Partial<ReporterHooks>; apiMaxAttempts?: number } = {}) {
  const fake = contractFake({ apiUrl: API, ...o.fake })
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } })
  const config = loadConfig({}, { apiUrl: API, apiMaxAttempts: o.apiMaxAttempts ?? 2 })
  const api = new ApiClient({ config, tokens: new StaticTokenProvider(new Map([['*', 'token']])), log, fetch: fake.fetch, baseDelayMs: 1, maxDelayMs: 5 })
  const seen = { reported: [] as number[][], superseded: [] as Array<[number, number, string]>, rejected: [] as Array<[number, string]>, dropped: [] as Array<[number, string]>, parked: [] as Array<[number, string]>, held: [] as number[][] }
  const hooks: ReporterHooks = {
    reported: (ds) => void seen.reported.push(ds.map((d) => d.job.stringId)),
    superseded: (d) => void seen.superseded.push([d.job.stringId, d.job.revision, d.port]),
    rejected: (d, reason) => void seen.rejected.push([d.job.stringId, reason]),
    dropped: (ds, reason) => void seen.dropped.push(...ds.map((d): [number, string] => [d.job.stringId, reason])),
    parked: (ds, reason) => void seen.parked.push(...ds.map((d): [number, string] => [d.job.stringId, reason])),
    held: (ds) => void seen.held.push(ds.map((d) => d.job.stringId)),
    ...o.hooks,
  }
  const reporter = new Reporter({ api, log, lingerMs: o.lingerMs ?? 60_000, ...(o.maxBatch ? { maxBatch: o.maxBatch } : {}), hooks })
  open.push(reporter)
  return { fake, reporter, seen, lines }
}

const decision = (stringId: number, port = 'approved', o: Partial<Job> = {}): Decision => ({ job: job({ stringId, ...o }), port })
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms))

describe('Reporter: groups', () => {
  it('one PATCH per (organization, project, step, language), each to its own path', async () => {
    const { fake, reporter } = setUp()
    reporter.add(decision(1))
    reporter.add(decision(2, 'translated', { languageId: 'fr' }))
    reporter.add(decision(3, 'approved', { stepId: 12 }))
    reporter.add(decision(4, 'approved', { projectId: 8 }))
    reporter.add(decision(5, 'approved', { domain: 'other' }))
    reporter.add(decision(6))
    expect(reporter.pending).toBe(6)
    await reporter.flush()
    expect(reporter.pending).toBe(0)
    const byPath = fake.patches.map((p) => [new URL(p.url).pathname, p.ops.map((o) => o.path)])
    expect(byPath).toEqual([
      ['/api/v2/projects/7/workflow-steps/11/languages/de/status', ['/1/output', '/6/output']],
      ['/api/v2/projects/7/workflow-steps/11/languages/fr/status', ['/2/output']],
      ['/api/v2/projects/7/workflow-steps/12/languages/de/status', ['/3/output']],
      ['/api/v2/projects/8/workflow-steps/11/languages/de/status', ['/4/output']],
      ['/api/v2/projects/7/workflow-steps/11/languages/de/status', ['/5/output']],
    ])
    expect(reporter.patches).toBe(5)
  })

  it('one decision per string within a group, the latest of one revision; the other copy leaves as superseded', async () => {
    const { fake, reporter, seen } = setUp()
    reporter.add(decision(1, 'translated'))
    reporter.add(decision(1, 'approved'))
    await reporter.flush()
    expect(fake.patches.flatMap((p) => p.ops)).toEqual([{ op: 'replace', path: '/1/output', value: 'approved' }])
    expect(seen.reported).toEqual([[1]])
    // Before, the copy replaced was never accounted for: it kept its place in the queue for good.
    expect(seen.superseded).toEqual([[1, 1, 'translated']])
  })

  it('a newer revision\'s decision is kept whichever comes first: an older copy decided after it is not sent', async () => {
    const { fake, reporter, seen } = setUp()
    reporter.add(decision(1, 'approved', { revision: 2 }))
    reporter.add(decision(1, 'translated', { revision: 1 }))
    reporter.add(decision(2, 'translated', { revision: 1 }))
    reporter.add(decision(2, 'approved', { revision: 3 }))
    await reporter.flush()
    expect(fake.patches.flatMap((p) => p.ops)).toEqual([
      { op: 'replace', path: '/1/output', value: 'approved' },
      { op: 'replace', path: '/2/output', value: 'approved' },
    ])
    expect(seen.superseded).toEqual([[1, 1, 'translated'], [2, 1, 'translated']])
  })

  it('the same decision added again (a retry of its own update) is one decision, none superseded', async () => {
    const { fake, reporter, seen } = setUp()
    const d = decision(1)
    reporter.add(d)
    reporter.add({ job: d.job, port: '' })
    await reporter.flush()
    expect(fake.patches.flatMap((p) => p.ops)).toEqual([{ op: 'replace', path: '/1/output', value: '' }])
    expect(seen.superseded).toEqual([])
  })
})

describe('Reporter: when a group is sent', () => {
  it('a full group goes at once, without waiting for the linger time', async () => {
    const { fake, reporter, seen } = setUp({ maxBatch: 3 })
    reporter.add(decision(1))
    reporter.add(decision(2))
    await tick()
    expect(fake.patches).toHaveLength(0)
    expect(reporter.pending).toBe(2)
    reporter.add(decision(3))
    await expect.poll(() => seen.reported).toEqual([[1, 2, 3]])
    expect(reporter.pending).toBe(0)
  })

  it('a group that is not full goes after the linger time, once', async () => {
    const { fake, reporter } = setUp({ lingerMs: 30 })
    reporter.add(decision(1))
    await expect.poll(() => fake.patches.length).toBe(1)
    await tick(80)
    expect(fake.patches).toHaveLength(1)
  })

  it('a group sent because it was full is not sent again when its linger timer would have fired', async () => {
    // Wide margins: the stale timer would fire at 300 ms, the new group's own at 450 ms.
    const { fake, reporter } = setUp({ lingerMs: 300, maxBatch: 2 })
    reporter.add(decision(1)) // starts the linger timer
    await tick(150)
    reporter.add(decision(2)) // full: sent now
    await expect.poll(() => fake.patches.length).toBe(1)
    reporter.add(decision(3)) // a new group under the same key, with its own timer
    await tick(225)
    // Had the first group's timer not been cleared, it would have sent the new group by now.
    expect(fake.patches).toHaveLength(1)
    await expect.poll(() => fake.patches.length).toBe(2)
    expect(fake.patches.map((p) => p.ops.map((o) => o.path))).toEqual([['/1/output', '/2/output'], ['/3/output']])
  })

  it('logs each PATCH at debug with where it went and how many strings', async () => {
    const { reporter, lines } = setUp()
    reporter.add(decision(1))
    reporter.add(decision(2))
    await reporter.flush()
    expect(lines.find((l) => l.msg === 'statuses reported')).toMatchObject({ domain: 'acme', organization: '200000', projectId: 7, stepId: 11, languageId: 'de', strings: 2 })
  })
})

describe('Reporter: refusals, failures, unavailable organizations', () => {
  it('a refused string is rejected with the status and the service\'s reason; the rest are reported', async () => {
    const { reporter, seen, lines } = setUp({ fake: { ports: ['approved'] } })
    reporter.add(decision(1))
    reporter.add(decision(2, 'nonexistent'))
    reporter.add(decision(3))
    await reporter.flush()
    expect(seen.reported.flat().sort()).toEqual([1, 3])
    expect(seen.rejected).toEqual([[2, '400: {"error":{"code":400,"message":"output port \\"nonexistent\\" is not declared by step 11"}}']])
    const warn = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('status update refused'))
    expect(warn).toMatchObject({ stringId: 2, output: 'nonexistent', status: 400, delivery: 'b1', organization: '200000' })
  })

  it('a refusal without a body is rejected as "refused"', async () => {
    const { reporter, seen } = setUp({ fake: { answer: () => ({ status: 400 }) } })
    reporter.add(decision(1))
    await reporter.flush()
    expect(seen.rejected).toEqual([[1, '400: refused']])
  })

  it('404 drops the whole group once, with the reason, and says so in the log', async () => {
    const { fake, reporter, seen, lines } = setUp({ fake: { languages: ['fr'] } })
    reporter.add(decision(1))
    reporter.add(decision(2))
    await reporter.flush()
    expect(fake.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1)
    expect(seen.dropped.map(([id]) => id)).toEqual([1, 2])
    expect(seen.dropped[0]![1]).toMatch(/^404: .*not among the step's languages/)
    expect(lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('the service no longer waits'))).toMatchObject({ strings: 2, languageId: 'de' })
  })

  it('strings whose PATCH is refused with no rule of its own (422) are parked with the reason, and logged; ones whose PATCH keeps failing (503) are held, not parked', async () => {
    const refused = setUp({ fake: { answer: () => ({ status: 422 }) } })
    refused.reporter.add(decision(1))
    refused.reporter.add(decision(2))
    await refused.reporter.flush()
    expect(refused.seen.parked).toEqual([[1, expect.stringMatching(/answered 422/)], [2, expect.stringMatching(/answered 422/)]])
    expect(refused.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('status update failed, strings parked'))).toMatchObject({ strings: 2, languageId: 'de' })
    const down = setUp({ fake: { answer: () => ({ status: 503 }) } })
    down.reporter.add(decision(1))
    down.reporter.add(decision(2))
    await down.reporter.flush()
    expect(down.seen.parked).toEqual([])
    expect(down.seen.held).toEqual([[1, 2]])
  })

  it('an organization without a token: its strings are held, not parked', async () => {
    const { fake, reporter, seen } = setUp()
    reporter.add(decision(1, 'approved', { domain: 'nobody' }))
    ;(reporter as unknown as { options: { api: ApiClient } }).options.api = new ApiClient({
      config: loadConfig({}, { apiUrl: API }), tokens: new StaticTokenProvider(new Map()), log: createLogger({ level: 'silent' }), fetch: fake.fetch,
    })
    await reporter.flush()
    expect(seen.held).toEqual([[1]])
    expect(seen.parked).toEqual([])
  })

  it('a hook that throws is logged, and flush still ends', async () => {
    const { reporter, lines } = setUp({
      hooks: {
        reported: () => { throw new Error('store down') },
        parked: () => { throw new Error('store still down') },
      },
    })
    reporter.add(decision(1))
    await reporter.flush()
    expect(lines.find((l) => l.msg === 'reporter failed unexpectedly')).toMatchObject({ err: expect.objectContaining({ message: 'store down' }) })
  })
})
