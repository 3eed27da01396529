// An output the step at the service does not declare (an operator added it to a pipeline; the step
// was installed from the older manifest): the service refuses every string of it with 400. Halved
// string by string, a group of n cost 2n-1 PATCHes (999 for 500), for every group of it, through
// the organization's 20 requests in flight. Now two strings of it refused alone settle it for the
// group, and the memory of it makes a later group cost one probe (reporter.ts, `probe`).
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { ApiClient, ApiError } from '../../src/platform/api-client.js'
import { REFUSED_OUTPUT_MS, REFUSED_OUTPUTS_KEPT, Reporter, type HoldCause, type ReporterHooks } from '../../src/platform/reporter.js'
import type { Decision } from '../../src/protocol/decision.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger } from '../../src/util/logger.js'
import { language } from '../support/events.js'
import { contractFake, type ContractFakeOptions } from '../support/contract-fake.js'

const API = 'http://api.test'

function job(stringId: number, o: Partial<Job> = {}): Job {
  return {
    key: `k${stringId}`, organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1,
    string: { key: `key.${stringId}`, context: '', maxLength: 0, text: 'Text', isPlural: false, fileType: 'json', filePath: '/ui.json', labelIds: [] },
    sourceLanguage: language('en'), targetLanguage: language(o.languageId ?? 'de'), batchId: 'b1', attempts: 0,
    ...o,
  }
}

/** The step declares `approved` only, unless a test answers otherwise. A rejected string is parked at the service with "", as outcomes.ts does. */
function setUp(o: { fake?: ContractFakeOptions; resendEmpty?: boolean } = {}) {
  const fake = contractFake({ apiUrl: API, ports: ['approved'], ...o.fake })
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } })
  const api = new ApiClient({ config: loadConfig({}, { apiUrl: API, apiMaxAttempts: 1 }), tokens: new StaticTokenProvider(new Map([['*', 'token']])), log, fetch: fake.fetch, baseDelayMs: 1, maxDelayMs: 5 })
  const seen = { reported: [] as number[], rejected: [] as number[], dropped: [] as number[], held: [] as Array<{ ids: number[]; cause: HoldCause; retryAfterMs: number | undefined; mayHaveLanded: boolean }> }
  const clock = { now: 1_000_000 }
  let reporter!: Reporter
  const hooks: ReporterHooks = {
    reported: (ds) => void seen.reported.push(...ds.filter((d) => d.port !== '').map((d) => d.job.stringId)),
    superseded: () => undefined,
    rejected: (d) => {
      seen.rejected.push(d.job.stringId)
      if (o.resendEmpty !== false) reporter.add({ job: d.job, port: '' })
    },
    dropped: (ds) => void seen.dropped.push(...ds.map((d) => d.job.stringId)),
    parked: () => undefined,
    held: (ds, _reason, cause, retryAfterMs, mayHaveLanded) => void seen.held.push({ ids: ds.map((d) => d.job.stringId), cause, retryAfterMs, mayHaveLanded }),
  }
  reporter = new Reporter({ api, log, lingerMs: 5, hooks, now: () => clock.now })
  /** PATCHes sent with a value of `port` (the "" ones that park rejected strings are not counted). */
  const patchesOf = (port: string) => fake.requestsTo('status', 'PATCH').filter((r) => (r.body as Array<{ value: string }>).some((op) => op.value === port)).length
  const undeclaredWarnings = () => lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('does not declare output'))
  const group = async (from: number, n: number, port: string, o: Partial<Job> = {}) => {
    for (let i = from; i < from + n; i++) reporter.add({ job: job(i, o), port })
    await reporter.flush()
  }
  return { fake, reporter, seen, lines, clock, patchesOf, undeclaredWarnings, group }
}

const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)

describe('Reporter: an output the step does not declare', () => {
  it('a 500-string group of it costs the group and two probes (was 999 PATCHes); every string rejected, with one warning that says what to do', async () => {
    const { fake, seen, patchesOf, undeclaredWarnings, group } = setUp()
    await group(1, 500, 'retired')
    expect(patchesOf('retired')).toBe(3)
    expect(sorted(seen.rejected)).toEqual(ids(1, 500))
    // Each rejected string is still parked at the service with "" (TODO), in one PATCH.
    expect(fake.statusOf(7, 11, 'de', 250)).toMatchObject({ status: 'TODO', output: '' })
    expect(patchesOf('')).toBe(1)
    const warnings = undeclaredWarnings()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ level: 40, output: 'retired', stepId: 11, projectId: 7, domain: 'acme', strings: 498, probed: 2 })
    expect(warnings[0]!.msg).toMatch(/step 11 at the service does not declare output "retired" .*update the app or the step's outputs at the service, or change the pipeline/)
  })

  it('a later group of it at that step, in any language, costs one probe; the step\'s other outputs go on in their own PATCH; another step is not concerned', async () => {
    const { reporter, seen, patchesOf, undeclaredWarnings, group, fake } = setUp()
    await group(1, 500, 'retired')
    await group(501, 500, 'retired', { languageId: 'fr' })
    expect(patchesOf('retired')).toBe(3 + 1)
    expect(sorted(seen.rejected)).toEqual(ids(1, 1000))
    expect(undeclaredWarnings()).toHaveLength(2)
    expect(undeclaredWarnings()[1]).toMatchObject({ languageId: 'fr', strings: 499, probed: 1 })
    // Mixed with a declared output in one group: that one goes in a PATCH of its own, at once.
    for (let i = 1001; i <= 1006; i++) reporter.add({ job: job(i), port: i % 2 ? 'retired' : 'approved' })
    await reporter.flush()
    expect(patchesOf('retired')).toBe(3 + 1 + 1)
    expect(patchesOf('approved')).toBe(1)
    expect(sorted(seen.reported)).toEqual([1002, 1004, 1006])
    expect(fake.statusOf(7, 11, 'de', 1004)).toMatchObject({ status: 'DONE', output: 'approved' })
    expect(sorted(seen.rejected).slice(-3)).toEqual([1001, 1003, 1005])
    // Step 12 may declare it: its group is sent whole first (the memory is per step).
    await group(2001, 4, 'retired', { stepId: 12 })
    expect(patchesOf('retired')).toBe(3 + 1 + 1 + 3)
  })

  it('one bad string in a group of a declared output is still isolated; the others are DONE with their output, and nothing is remembered', async () => {
    for (const bad of [13, 1]) {
      // The service refuses one string (not on the step, say) and takes the others.
      const { seen, fake, group, patchesOf, undeclaredWarnings } = setUp({ fake: { answer: ({ body }) => ((body as Array<{ path: string; value: string }>).some((o) => o.path === `/${bad}/output` && o.value !== '') ? { status: 400, body: { error: { code: 400, message: 'no' } } } : undefined) } })
      await group(1, 40, 'approved')
      expect([bad, seen.rejected]).toEqual([bad, [bad]])
      expect(sorted(seen.reported)).toEqual(ids(1, 40).filter((i) => i !== bad))
      for (const i of [2, 20, 40]) expect(fake.statusOf(7, 11, 'de', i)).toMatchObject({ status: 'DONE', output: 'approved' })
      // The group, a probe (accepted, or refused when it is the bad one, then a second accepted), then halves.
      expect(patchesOf('approved')).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(40)) + 3)
      expect(undeclaredWarnings()).toHaveLength(0)
      const sent = patchesOf('approved')
      await group(101, 5, 'approved')
      expect(patchesOf('approved')).toBe(sent + 1)
    }
  })

  it('once a string of the output was accepted, its halves are only halved: bad strings side by side are not taken for an undeclared output', async () => {
    // 40 strings: the probe (1) is accepted, 2..40 halved into 2..21 and 22..40, whose first two are bad.
    const bad = ['/21/output', '/22/output', '/23/output']
    const { seen, group, undeclaredWarnings } = setUp({ fake: { answer: ({ body }) => ((body as Array<{ path: string; value: string }>).some((o) => bad.includes(o.path) && o.value !== '') ? { status: 400, body: { error: { code: 400, message: 'no' } } } : undefined) } })
    await group(1, 40, 'approved')
    expect(sorted(seen.rejected)).toEqual([21, 22, 23])
    expect(seen.reported).toHaveLength(37)
    expect(undeclaredWarnings()).toHaveLength(0)
  })

  it('a probe accepted (the step was updated) forgets the refusal: the rest of that group and the next go as usual', async () => {
    let declared = false
    const { seen, fake, group, patchesOf } = setUp({
      fake: { ports: ['approved', 'retired'], answer: ({ body }) => (!declared && (body as Array<{ value: string }>).some((o) => o.value === 'retired') ? { status: 400, body: { error: { code: 400, message: 'output port "retired" is not declared' } } } : undefined) },
    })
    await group(1, 10, 'retired')
    expect(patchesOf('retired')).toBe(3)
    declared = true
    await group(11, 10, 'retired')
    // The probe, then the other nine in one PATCH.
    expect(patchesOf('retired')).toBe(3 + 2)
    expect(sorted(seen.reported)).toEqual(ids(11, 10))
    expect(fake.statusOf(7, 11, 'de', 20)).toMatchObject({ status: 'DONE', output: 'retired' })
    await group(21, 10, 'retired')
    expect(patchesOf('retired')).toBe(3 + 2 + 1)
  })

  it('the refusal is remembered for REFUSED_OUTPUT_MS: after that, a group of the output is sent whole again', async () => {
    const { clock, group, patchesOf } = setUp()
    await group(1, 10, 'retired')
    clock.now += REFUSED_OUTPUT_MS - 1
    await group(11, 10, 'retired')
    expect(patchesOf('retired')).toBe(3 + 1)
    clock.now += REFUSED_OUTPUT_MS
    await group(21, 10, 'retired')
    expect(patchesOf('retired')).toBe(3 + 1 + 3)
  })

  it(`at most REFUSED_OUTPUTS_KEPT (${REFUSED_OUTPUTS_KEPT}) refused outputs are remembered, the oldest forgotten first`, async () => {
    const { group, patchesOf } = setUp({ resendEmpty: false })
    for (let step = 1; step <= REFUSED_OUTPUTS_KEPT + 1; step++) await group(step * 10, 2, 'retired', { stepId: step })
    const sent = patchesOf('retired')
    await group(1, 2, 'retired', { stepId: REFUSED_OUTPUTS_KEPT + 1 })
    expect(patchesOf('retired')).toBe(sent + 1)
    await group(1, 2, 'retired', { stepId: 1 })
    expect(patchesOf('retired')).toBe(sent + 1 + 3)
  })

  it('"" (park as TODO) is never taken as an undeclared output: two strings refused alone with it do not reject the others', async () => {
    const refusedIds = ['/1/output', '/2/output']
    const { seen, fake, group, undeclaredWarnings } = setUp({
      resendEmpty: false,
      fake: { answer: ({ body }) => ((body as Array<{ path: string }>).some((o) => refusedIds.includes(o.path)) ? { status: 400, body: { error: { code: 400, message: 'no' } } } : undefined) },
    })
    await group(1, 8, '')
    expect(sorted(seen.rejected)).toEqual([1, 2])
    for (const i of [3, 8]) expect(fake.statusOf(7, 11, 'de', i)).toMatchObject({ status: 'TODO', output: '' })
    expect(undeclaredWarnings()).toHaveLength(0)
  })

  it('413 (too large) is about the size, not the output: halved as before, no probe', async () => {
    // The service takes at most 2 operations a request here.
    const { seen, fake, group, undeclaredWarnings } = setUp({ fake: { answer: ({ body }) => ((body as unknown[]).length > 2 ? { status: 413 } : undefined) } })
    await group(1, 8, 'approved')
    // 8, then 4 and 4, then four PATCHes of 2: no request of one string.
    expect(fake.requestsTo('status', 'PATCH').map((r) => (r.body as unknown[]).length)).toEqual([8, 4, 4, 2, 2, 2, 2])
    expect(sorted(seen.reported)).toEqual(ids(1, 8))
    expect(undeclaredWarnings()).toHaveLength(0)
  })
})

describe('Reporter: a probe answered with something that says nothing of its output', () => {
  // 429 (its Retry-After), 5XX, 403 are about the organization, 404 about the language: the rest of
  // the output's strings were sent all the same right after, into the wait the service asked for,
  // the outage or the refusal just met (and, after a 400 for the group, as two halves).
  const cases = [
    { status: 429, cause: 'unavailable', retryAfterMs: 120_000, landed: false },
    { status: 503, cause: 'unavailable', retryAfterMs: undefined, landed: true },
    { status: 403, cause: 'forbidden', retryAfterMs: undefined, landed: false },
    { status: 404 },
  ] as const
  const answer = (status: number) => ({ status, body: { error: { code: status, message: 'no' } }, ...(status === 429 ? { headers: { 'retry-after': '120' } } : {}) })
  const expectShared = (seen: ReturnType<typeof setUp>['seen'], c: (typeof cases)[number], probe: number, rest: number[]) => {
    if (!('cause' in c)) return expect([seen.dropped, seen.held, seen.rejected]).toEqual([[probe, ...rest], [], []])
    // The rest were never sent: they cannot have landed.
    expect([seen.held, seen.rejected, seen.dropped]).toEqual([
      [
        { ids: [probe], cause: c.cause, retryAfterMs: c.retryAfterMs, mayHaveLanded: c.landed },
        { ids: rest, cause: c.cause, retryAfterMs: c.retryAfterMs, mayHaveLanded: false },
      ],
      [],
      [],
    ])
  }

  for (const c of cases) {
    it(`${c.status} for the probe after a 400 for the group: the rest share its answer without a request of their own`, async () => {
      const { seen, group, patchesOf } = setUp({ fake: { answer: ({ body }) => ((body as unknown[]).length === 1 ? answer(c.status) : undefined) } })
      await group(1, 10, 'retired')
      expect(patchesOf('retired')).toBe(2)
      expectShared(seen, c, 1, ids(2, 9))
    })

    it(`${c.status} for the probe of an output remembered as refused: the rest share its answer without a request of their own`, async () => {
      let failing = false
      const { seen, group, patchesOf } = setUp({ fake: { answer: ({ body }) => (failing && (body as Array<{ value: string }>).some((o) => o.value === 'retired') ? answer(c.status) : undefined) } })
      await group(1, 10, 'retired')
      seen.rejected.length = 0
      failing = true
      await group(11, 10, 'retired')
      expect(patchesOf('retired')).toBe(3 + 1)
      expectShared(seen, c, 11, ids(12, 9))
    })
  }
})

describe('Reporter: the output accepted at the step while a group of it is probed', () => {
  it('a 2XX for the output at that step (another language\'s group) while the probes were out: the rest of the group goes, none rejected for refusals now out of date', async () => {
    // The operator adds the output at the service while groups of it are in flight: de's probes
    // reached the service before, fr's update after. The service's answers are driven by hand.
    let declared = false
    let letSecondProbeAnswer!: () => void
    const secondProbeHeld = new Promise<void>((r) => (letSecondProbeAnswer = r))
    const sent: Array<{ languageId: string; ids: number[] }> = []
    const refuse = () => new ApiError(400, 'output port "retired" is not declared', 'PATCH', '/status', 1)
    const api = {
      async patchStatuses(_domain: string, _projectId: number, _stepId: number, languageId: string, ops: Array<{ path: string; value: string }>) {
        const ids = ops.map((o) => Number(o.path.split('/')[1]))
        sent.push({ languageId, ids })
        if (ops.every((o) => o.value === '')) return []
        if (languageId === 'de' && ids.length === 1 && ids[0] === 2) {
          // Refused when it reached the service; its answer comes back after fr's update was accepted.
          await secondProbeHeld
          throw refuse()
        }
        if (!declared) throw refuse()
        return []
      },
    } as unknown as ApiClient
    const seen = { reported: [] as number[], rejected: [] as number[] }
    const log = createLogger({ level: 'silent' })
    const reporter: Reporter = new Reporter({
      api, log, lingerMs: 1,
      hooks: {
        reported: (ds) => void seen.reported.push(...ds.filter((d) => d.port !== '').map((d) => d.job.stringId)),
        superseded: () => undefined,
        rejected: (d) => {
          seen.rejected.push(d.job.stringId)
          reporter.add({ job: d.job, port: '' })
        },
        dropped: () => undefined,
        parked: () => undefined,
        held: () => undefined,
      },
    })
    for (let i = 1; i <= 10; i++) reporter.add({ job: job(i), port: 'retired' })
    const flushed = reporter.flush()
    // de: the group, its first probe (refused), its second (out).
    await expect.poll(() => sent.length).toBe(3)
    declared = true
    for (let i = 101; i <= 105; i++) reporter.add({ job: job(i, { languageId: 'fr' }), port: 'retired' })
    await expect.poll(() => seen.reported.length).toBe(5)
    letSecondProbeAnswer()
    await flushed
    await reporter.flush()
    expect(sorted(seen.rejected)).toEqual([1, 2])
    expect(sorted(seen.reported)).toEqual([...ids(3, 8), ...ids(101, 5)])
  })
})
