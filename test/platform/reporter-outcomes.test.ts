// What each answer of the status PATCH means for the strings (reporter.ts): 400 splits, 404 drops
// the group once, 403 and 401-after-a-refresh hold, anything else parks; never a request storm.
import { describe, expect, it } from 'vitest'
import { ApiClient } from '../../src/platform/api-client.js'
import { Reporter, type HoldCause } from '../../src/platform/reporter.js'
import type { Decision } from '../../src/protocol/decision.js'
import type { TokenProvider } from '../../src/platform/token-provider.js'
import { TokenEndpointError } from '../../src/platform/token-errors.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'

const job = (stringId: number, languageId = 'de'): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain: 'acme', moduleKey: 'm', projectId: 7, stepId: 11, languageId, stringId, revision: 1, batchId: 'b', attempts: 0 }) as unknown as Job

type Answer = (ops: Array<{ op: string; path: string; value: string }>, auth: string) => number

function setup(answer: Answer, holding?: (domain: string) => HoldCause | undefined, tokenError?: Error, headers: Record<string, string> = {}) {
  const requests: Array<{ ops: Array<{ path: string }>; auth: string }> = []
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    const ops = JSON.parse(String(init.body))
    const auth = (init.headers as Record<string, string>).authorization!
    requests.push({ ops, auth })
    const status = answer(ops, auth)
    return new Response(status === 200 ? JSON.stringify({ data: [] }) : JSON.stringify({ error: { code: status, message: 'no' } }), { status, headers: status === 200 ? {} : headers })
  }) as unknown as typeof fetch
  let refreshes = 0
  const tokens: TokenProvider = {
    getAccessToken: async () => {
      if (tokenError) throw tokenError
      return `t${refreshes}`
    },
    refreshAfterUnauthorized: async () => `t${++refreshes}`,
  }
  const api = new ApiClient({ config: { apiUrl: 'http://service.test', apiMaxInFlight: 20, apiMaxAttempts: 3, apiTimeoutMs: 5000 }, tokens, log: silentLogger(), fetch: fetchImpl, baseDelayMs: 1 })
  const seen = { reported: [] as number[], rejected: [] as number[], dropped: [] as number[], parked: [] as number[], held: [] as Array<[number, HoldCause]>, retryAfter: [] as Array<number | undefined>, mayHaveLanded: [] as boolean[] }
  const ids = (ds: Decision[]) => ds.map((d) => d.job.stringId)
  const reporter = new Reporter({
    api, log: silentLogger(), lingerMs: 1, holding,
    hooks: {
      reported: (ds) => void seen.reported.push(...ids(ds)),
      superseded: () => undefined,
      rejected: (d) => void seen.rejected.push(d.job.stringId),
      dropped: (ds) => void seen.dropped.push(...ids(ds)),
      parked: (ds) => void seen.parked.push(...ids(ds)),
      held: (ds, _r, cause, retryAfterMs, mayHaveLanded) => {
        seen.held.push(...ds.map((d) => [d.job.stringId, cause] as [number, HoldCause]))
        seen.retryAfter.push(retryAfterMs)
        seen.mayHaveLanded.push(mayHaveLanded)
      },
    },
  })
  return { reporter, requests, seen, refreshes: () => refreshes }
}

const add = (reporter: Reporter, n: number, languageId = 'de') => {
  for (let i = 1; i <= n; i++) reporter.add({ job: job(i, languageId), port: 'approved' })
}

describe('Reporter: what each status means for the strings', () => {
  it('the token could not be refreshed, the token endpoint failing or refusing in a way that is no dead grant: held as disconnected, never parked', async () => {
    const failing = setup(() => 200, undefined, new TokenEndpointError('token endpoint answered 503', { status: 503, retryable: true }))
    add(failing.reporter, 3)
    await failing.reporter.flush()
    expect([failing.requests.length, failing.seen.parked, failing.seen.held.map(([, c]) => c)]).toEqual([0, [], ['disconnected', 'disconnected', 'disconnected']])
    const refusing = setup(() => 200, undefined, new TokenEndpointError('token endpoint answered 401: invalid_client', { status: 401, oauthError: 'invalid_client', retryable: false }))
    add(refusing.reporter, 3)
    await refusing.reporter.flush()
    expect([refusing.requests.length, refusing.seen.parked, refusing.seen.held.map(([, c]) => c)]).toEqual([0, [], ['disconnected', 'disconnected', 'disconnected']])
  })

  it('403: the whole group is held, in one request, not bisected', async () => {
    const { reporter, requests, seen } = setup(() => 403)
    add(reporter, 100)
    await reporter.flush()
    expect(requests).toHaveLength(1)
    expect(seen.held).toHaveLength(100)
    expect(seen.held.every(([, cause]) => cause === 'forbidden')).toBe(true)
    expect(seen.reported.length + seen.rejected.length + seen.dropped.length + seen.parked.length).toBe(0)
  })

  it('401 after one refresh: held, with exactly one refresh and two requests', async () => {
    const { reporter, requests, seen, refreshes } = setup(() => 401)
    add(reporter, 50)
    await reporter.flush()
    expect(refreshes()).toBe(1)
    expect(requests.map((r) => r.auth)).toEqual(['Bearer t0', 'Bearer t1'])
    expect(seen.held).toHaveLength(50)
  })

  it('401 then 2XX after the refresh: reported', async () => {
    const { reporter, requests, seen } = setup((_ops, auth) => (auth === 'Bearer t0' ? 401 : 200))
    add(reporter, 3)
    await reporter.flush()
    expect(requests).toHaveLength(2)
    expect(seen.reported.sort()).toEqual([1, 2, 3])
  })

  it('404: the group is dropped once, whole, without splitting', async () => {
    const { reporter, requests, seen } = setup(() => 404)
    add(reporter, 120)
    await reporter.flush()
    expect(requests).toHaveLength(1)
    expect(seen.dropped).toHaveLength(120)
  })

  it('400 for several outputs: each output is sent again alone, so a refused output costs the others nothing; two refused strings in different halves cost only themselves', async () => {
    const portOf = (ops: Array<{ value: string }>) => new Set(ops.map((o) => o.value))
    const mixed = setup((ops) => (portOf(ops).has('translated') ? 400 : 200))
    for (let i = 1; i <= 40; i++) mixed.reporter.add({ job: job(i), port: i % 2 ? 'approved' : 'translated' })
    await mixed.reporter.flush()
    expect(mixed.seen.reported.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i + 1))
    expect(mixed.seen.rejected).toHaveLength(20)
    // The group, each output alone (approved goes through at once), then the refused output's halves.
    expect(mixed.requests[1]!.ops.length + mixed.requests[2]!.ops.length).toBe(40)
    // A 400 may be about one string (not on the step): halves never reject the strings around it.
    const two = setup((ops) => (ops.some((o) => o.path === '/1/output' || o.path === '/40/output') ? 400 : 200))
    add(two.reporter, 40)
    await two.reporter.flush()
    expect(two.seen.rejected.sort((a, b) => a - b)).toEqual([1, 40])
    expect(two.seen.reported).toHaveLength(38)
  })

  it('400: split until the refused string is alone; the others are reported', async () => {
    const { reporter, requests, seen } = setup((ops) => (ops.some((o) => o.path === '/13/output') ? 400 : 200))
    add(reporter, 40)
    await reporter.flush()
    expect(seen.rejected).toEqual([13])
    expect(seen.reported).toHaveLength(39)
    // log2(40) levels of halves, after one probe of the output (accepted): far fewer requests than strings.
    expect(requests.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(40)) + 2)
  })

  it('a hold after 429s passes on their Retry-After (the organization is not tried again before it)', async () => {
    const limited = setup(() => 429, undefined, undefined, { 'retry-after': '1' })
    add(limited.reporter, 2)
    await limited.reporter.flush()
    expect(limited.seen.held.map(([, c]) => c)).toEqual(['unavailable', 'unavailable'])
    expect(limited.seen.retryAfter).toEqual([1000])
  })

  it('held as unavailable, an update is marked as one that may have landed only when an answer was lost: never after 429s alone', async () => {
    for (const [answers, landed] of [[[429, 429, 429], false], [[503, 503, 503], true], [[429, 503, 429], true], [[408, 429, 429], true]] as const) {
      let n = 0
      const t = setup(() => answers[n++]!, undefined, undefined, { 'retry-after': '0' })
      add(t.reporter, 2)
      await t.reporter.flush()
      expect([answers, t.seen.held.map(([, c]) => c), t.seen.mayHaveLanded]).toEqual([answers, ['unavailable', 'unavailable'], [landed]])
    }
    // A Retry-After longer than the client waits between attempts ends them at the first 429: not sent, not landed.
    const long = setup(() => 429, undefined, undefined, { 'retry-after': '120' })
    add(long.reporter, 2)
    await long.reporter.flush()
    expect([long.requests.length, long.seen.retryAfter, long.seen.mayHaveLanded]).toEqual([1, [120_000], [false]])
  })

  it('another refusal (409): parked, not dropped; retries spent on 503, 429, 408 or the network: held as unavailable (tried again by itself), neither parked nor dropped', async () => {
    const conflict = setup(() => 409)
    add(conflict.reporter, 5)
    await conflict.reporter.flush()
    expect(conflict.seen.parked).toHaveLength(5)
    expect(conflict.requests).toHaveLength(1)
    for (const status of [503, 500, 429, 408]) {
      const down = setup(() => status)
      add(down.reporter, 5)
      await down.reporter.flush()
      expect([status, down.seen.parked, down.seen.dropped, down.seen.held.map(([, cause]) => cause)]).toEqual([status, [], [], Array(5).fill('unavailable')])
      // A 429 says the update was not applied: retried (apiMaxAttempts). A 5XX or 408 says nothing
      // of its outcome: never sent again blindly (it may have landed, and the string come back
      // since): held at once, and the service is asked first.
      expect(down.requests).toHaveLength(status === 429 ? 3 : 1)
    }
  })

  it('sends nothing for an organization that is held: its decisions go straight to held', async () => {
    const { reporter, requests, seen } = setup(() => 200, (domain) => (domain === 'acme' ? 'forbidden' : undefined))
    add(reporter, 4)
    await reporter.flush()
    expect(requests).toHaveLength(0)
    expect(seen.held).toHaveLength(4)
  })
})
