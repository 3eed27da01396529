// The API client's rules for one request, against a scripted fetch: what is retried (network
// errors, 408, 429, 5XX) and how long it waits (Retry-After, else capped back-off), what is thrown
// at once (other 4XX; anything but "not applied" for a request that must not be sent twice), one
// refresh after 401, a fresh token after each wait, the observer's view, and the per-organization
// limit on requests in flight.
import { describe, expect, it } from 'vitest'
import { ApiClient, ApiError, mayHaveApplied } from '../../src/platform/api-client.js'
import { parseRetryAfter as retryAfterMs } from '../../src/util/retry-after.js'
import { createLogger } from '../../src/util/logger.js'

type Answer = { status: number; body?: string; retryAfter?: string } | Error

function setup(answers: Answer[], options: { maxAttempts?: number; maxInFlight?: number; maxDelayMs?: number; baseDelayMs?: number; tokens?: string[] } = {}) {
  const calls: Array<{ url: string; method: string; headers: Record<string, string>; body?: string }> = []
  const events: string[] = []
  const tokens = [...(options.tokens ?? ['t1', 't2', 't3', 't4', 't5'])]
  let current = tokens.shift()!
  let inFlight = 0
  let maxSeen = 0
  const fetchImpl = (async (url: string, init: RequestInit) => {
    calls.push({ url, method: String(init.method), headers: init.headers as Record<string, string>, body: init.body as string | undefined })
    inFlight++
    maxSeen = Math.max(maxSeen, inFlight)
    await new Promise((resolve) => setTimeout(resolve, 2))
    inFlight--
    const answer = answers.shift() ?? { status: 200, body: '{}' }
    if (answer instanceof Error) throw answer
    return new Response(answer.body ?? '', { status: answer.status, headers: answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter } })
  }) as unknown as typeof fetch
  const client = new ApiClient({
    config: { apiUrl: 'https://{organization_domain}.api.test/', apiMaxInFlight: options.maxInFlight ?? 4, apiMaxAttempts: options.maxAttempts ?? 3, apiTimeoutMs: 5000 },
    tokens: {
      getAccessToken: async () => (events.push(`token ${current}`), current),
      refreshAfterUnauthorized: async (_domain, rejected) => {
        events.push(`refresh after ${rejected}`)
        current = tokens.shift()!
        return current
      },
    },
    log: createLogger({ level: 'silent' }),
    observer: {
      request: (i) => void events.push(`request ${i.method} ${i.route} ${i.status} ${i.domain}`),
      retry: (i) => void events.push(`retry ${i.reason} ${i.delayMs}`),
    },
    fetch: fetchImpl,
    maxDelayMs: options.maxDelayMs ?? 50,
    baseDelayMs: options.baseDelayMs ?? 1,
  })
  return { client, calls, events, maxInFlight: () => maxSeen }
}

describe('ApiClient.request', () => {
  it('tries a 2XX whose body is not JSON again, as a network error; a request that must not be sent twice throws it at once', async () => {
    const { client, calls } = setup([{ status: 200, body: '<html>Bad gateway</html>' }, { status: 200, body: '{"ok":true}' }])
    expect(await client.request('acme', 'GET', '/x', 'x.get')).toEqual({ ok: true })
    expect(calls).toHaveLength(2)
    const spent = setup([{ status: 200, body: '<html>' }, { status: 200, body: '{"ok' }, { status: 200, body: 'x' }])
    const error = await spent.client.request('acme', 'GET', '/x', 'x.get').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 0, attempts: 3 })
    expect((error as Error).message).toContain('answer 200 was not JSON')
    const post = setup([{ status: 201, body: '<html>' }])
    await expect(post.client.request('acme', 'POST', '/c', 'c.post', {}, { idempotent: false })).rejects.toMatchObject({ status: 0 })
    expect(post.calls).toHaveLength(1)
  })

  it('sends the token, JSON headers and body to the organization\'s API, and reads the JSON answer', async () => {
    const { client, calls } = setup([{ status: 200, body: '{"ok":true}' }])
    expect(await client.request('acme', 'PATCH', '/api/v2/x', 'x.patch', [{ a: 1 }])).toEqual({ ok: true })
    expect(calls).toEqual([{ url: 'https://acme.api.test/api/v2/x', method: 'PATCH', headers: { authorization: 'Bearer t1', accept: 'application/json', 'content-type': 'application/json' }, body: '[{"a":1}]' }])
    const get = setup([{ status: 200, body: '' }])
    expect(await get.client.request('acme', 'GET', '/y', 'y.get')).toBeUndefined()
    expect(get.calls[0]!.headers).toEqual({ authorization: 'Bearer t1', accept: 'application/json' })
    expect(get.calls[0]!.body).toBeUndefined()
  })

  it('retries 5XX, 408 and network errors up to the attempts, then throws the last answer', async () => {
    const { client, calls, events } = setup([{ status: 503, body: 'busy' }, { status: 408 }, new TypeError('socket hang up')])
    const error = (await client.request('acme', 'GET', '/y', 'y.get').catch((e: unknown) => e)) as ApiError
    expect(calls).toHaveLength(3)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 0, method: 'GET', path: '/y', attempts: 3 })
    expect(error.message).toBe('GET /y answered 0: network error: socket hang up')
    expect(events.filter((e) => e.startsWith('retry')).map((e) => e.split(' ')[1])).toEqual(['503', '408'])
    expect(events.filter((e) => e.startsWith('request'))).toEqual(['request GET y.get 503 acme', 'request GET y.get 408 acme', 'request GET y.get 0 acme'])
  })

  it('gets through after a passing failure', async () => {
    const { client, calls } = setup([{ status: 502 }, { status: 200, body: '{"n":1}' }])
    expect(await client.request('acme', 'GET', '/y', 'y.get')).toEqual({ n: 1 })
    expect(calls).toHaveLength(2)
  })

  it('throws other 4XX at once, with the body in the message', async () => {
    for (const status of [400, 403, 404, 409, 422]) {
      const { client, calls } = setup([{ status, body: 'no such step' }])
      const error = (await client.request('acme', 'PATCH', '/s', 's.patch', []).catch((e: unknown) => e)) as ApiError
      expect([status, calls.length]).toEqual([status, 1])
      expect(error).toMatchObject({ status, body: 'no such step', attempts: 1 })
      expect(error.message).toBe(`PATCH /s answered ${status}: no such step`)
      expect(error.permanent).toBe(true)
    }
  })

  // Rule: an API refusal that quotes the Authorization header (or any credential-shaped text) does
  // not carry the access token into ApiError.message/.body, hence the log and the operator page.
  it('scrubs the access token it sent, and credential-shaped text, from an answer before the error', async () => {
    const token = 'at_7f3kq9zm2x8v1c4b6n0p5w'
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvdGhlciJ9.c2lnbmF0dXJlMTIzNA'
    const body = JSON.stringify({ error: { message: `Access denied for Bearer ${token} (seen before: ${jwt})` } })
    const { client } = setup([{ status: 403, body }], { tokens: [token] })
    const error = (await client.request('acme', 'PATCH', '/s', 's.patch', []).catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    for (const text of [error.message, error.body]) {
      expect(text).not.toContain(token)
      expect(text).not.toContain(jwt)
      expect(text).toContain('Access denied for Bearer [redacted]')
    }
    // A 2XX that is not JSON, and a 5XX, are scrubbed alike.
    const notJson = setup([{ status: 200, body: `<p>${token}</p>` }], { tokens: [token], maxAttempts: 1 })
    expect(((await notJson.client.request('acme', 'GET', '/s', 's.get').catch((e: unknown) => e)) as ApiError).body).not.toContain(token)
    const failing = setup([{ status: 502, body: `upstream got ${token}` }], { tokens: [token], maxAttempts: 1 })
    expect(((await failing.client.request('acme', 'GET', '/s', 's.get').catch((e: unknown) => e)) as ApiError).body).toBe('upstream got [redacted]')
  })

  it('keeps a long body out of the message past 300 characters', () => {
    const error = new ApiError(500, 'x'.repeat(1000), 'GET', '/y', 1)
    expect(error.message).toBe(`GET /y answered 500: ${'x'.repeat(300)}`)
    expect(new ApiError(500, '', 'GET', '/y', 1).message).toBe('GET /y answered 500')
    expect(error.name).toBe('ApiError')
    expect(error.permanent).toBe(false)
    expect(new ApiError(408, '', 'GET', '/y', 1).permanent).toBe(false)
    expect(new ApiError(429, '', 'GET', '/y', 1).permanent).toBe(false)
    expect(new ApiError(499, '', 'GET', '/y', 1).permanent).toBe(true)
    expect(new ApiError(399, '', 'GET', '/y', 1).permanent).toBe(false)
  })

  it('refreshes once after 401 and sends again with the new token, without using up an attempt', async () => {
    const { client, calls, events } = setup([{ status: 401 }, { status: 200, body: '{}' }], { maxAttempts: 1 })
    await client.request('acme', 'GET', '/y', 'y.get')
    expect(calls.map((c) => c.headers.authorization)).toEqual(['Bearer t1', 'Bearer t2'])
    expect(events).toContain('refresh after t1')
    const twice = setup([{ status: 401 }, { status: 401 }], { maxAttempts: 3 })
    const error = (await twice.client.request('acme', 'GET', '/y', 'y.get').catch((e: unknown) => e)) as ApiError
    expect(error.status).toBe(401)
    expect(twice.calls).toHaveLength(2)
    expect(twice.events.filter((e) => e.startsWith('refresh'))).toHaveLength(1)
  })

  it('waits what Retry-After says, and takes the current token after the wait', async () => {
    const { client, events, calls } = setup([{ status: 429, retryAfter: '0.02' }, { status: 503, retryAfter: '0.01' }, { status: 200, body: '{}' }], { maxDelayMs: 30 })
    await client.request('acme', 'GET', '/y', 'y.get')
    expect(events.filter((e) => e.startsWith('retry'))).toEqual(['retry 429 20', 'retry 503 10'])
    expect(events.filter((e) => e.startsWith('token'))).toHaveLength(3)
    expect(calls).toHaveLength(3)
  })

  it('never sends again before a Retry-After longer than it waits between attempts: it stops, the wait on the error for its caller', async () => {
    for (const status of [429, 503]) {
      const { client, calls } = setup([{ status, retryAfter: '600' }, { status: 200, body: '{}' }], { maxDelayMs: 30, maxAttempts: 8 })
      const error = (await client.request('acme', 'PATCH', '/y', 'y.patch').catch((e: unknown) => e)) as ApiError
      expect(error).toMatchObject({ status, retryAfterMs: 600_000, attempts: 1 })
      expect(calls).toHaveLength(1)
    }
  })

  it('says whether a request refused at last may have been applied by an earlier attempt whose answer was lost', async () => {
    const cases: Array<[Answer[], boolean]> = [
      [[{ status: 403 }], false],
      [[{ status: 429, retryAfter: '0' }, { status: 403 }], false],
      [[{ status: 503 }, { status: 403 }], true],
      [[new Error('socket hang up'), { status: 400 }], true],
      [[{ status: 500 }, { status: 500 }, { status: 500 }], true],
    ]
    for (const [answers, applied] of cases) {
      const what = JSON.stringify(answers)
      const error = await setup(answers).client.request('acme', 'PATCH', '/y', 'y.patch').catch((e: unknown) => e)
      expect(error, what).toBeInstanceOf(ApiError)
      expect(mayHaveApplied(error), what).toBe(applied)
    }
    // The token for the next attempt failed after an answer was lost: that error says so too.
    const noToken = new Error('no token')
    let asked = 0
    const client = new ApiClient({
      config: { apiUrl: 'https://{organization_domain}.api.test/', apiMaxInFlight: 4, apiMaxAttempts: 3, apiTimeoutMs: 5000 },
      tokens: { getAccessToken: async () => { if (asked++) throw noToken; return 't' }, refreshAfterUnauthorized: async () => 't' },
      log: createLogger({ level: 'silent' }),
      fetch: (async () => new Response('', { status: 502 })) as unknown as typeof fetch,
      baseDelayMs: 1,
    })
    expect(await client.request('acme', 'PATCH', '/y', 'y.patch').catch((e: unknown) => e)).toBe(noToken)
    expect(mayHaveApplied(noToken)).toBe(true)
    expect(mayHaveApplied(new Error('another'))).toBe(false)
  })

  it('backs off within half to all of a doubling delay, capped', async () => {
    const { client, events } = setup([{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }], { maxAttempts: 5, baseDelayMs: 4, maxDelayMs: 10 })
    await client.request('acme', 'GET', '/y', 'y.get')
    const delays = events.filter((e) => e.startsWith('retry')).map((e) => Number(e.split(' ')[2]))
    expect(delays).toHaveLength(4)
    const caps = [4, 8, 10, 10]
    delays.forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(caps[i]! / 2)
      expect(d).toBeLessThanOrEqual(caps[i]!)
    })
  })

  it('sends a request that must not be sent twice again only after 429 or 401', async () => {
    for (const answer of [{ status: 500 }, { status: 408 }, new TypeError('reset')] as Answer[]) {
      const { client, calls } = setup([answer, { status: 200, body: '{}' }])
      await expect(client.request('acme', 'POST', '/c', 'c.post', {}, { idempotent: false })).rejects.toBeInstanceOf(ApiError)
      expect(calls).toHaveLength(1)
    }
    const limited = setup([{ status: 429, retryAfter: '0' }, { status: 200, body: '{"id":1}' }])
    expect(await limited.client.request('acme', 'POST', '/c', 'c.post', {}, { idempotent: false })).toEqual({ id: 1 })
    expect(limited.calls).toHaveLength(2)
  })

  it('takes its own number of attempts when given', async () => {
    const { client, calls } = setup([{ status: 500 }, { status: 500 }, { status: 500 }], { maxAttempts: 3 })
    await expect(client.request('acme', 'GET', '/y', 'y.get', undefined, { maxAttempts: 1 })).rejects.toMatchObject({ status: 500, attempts: 1 })
    expect(calls).toHaveLength(1)
  })

  it('keeps at most apiMaxInFlight requests of one organization in flight, and counts them', async () => {
    const { client, maxInFlight } = setup([], { maxInFlight: 2 })
    const all = Array.from({ length: 6 }, (_, i) => client.request('acme', 'GET', `/y${i}`, 'y.get'))
    await new Promise((resolve) => setTimeout(resolve, 1))
    expect(client.inFlight('acme')).toBe(2)
    expect(client.inFlight('other')).toBe(0)
    await Promise.all(all)
    expect(maxInFlight()).toBe(2)
  })
})

describe('the API calls', () => {
  it('a wait longer than maxWaitMs ends the attempts at once (the caller holds the strings); a status update answered 2XX with a body that is not JSON is done', async () => {
    const limited = setup([{ status: 429, body: 'slow down', retryAfter: '30' }, { status: 200, body: '{"data":[]}' }], { maxDelayMs: 60_000 })
    const started = Date.now()
    await expect(limited.client.getTranslations('acme', 7, 'de', [1], { maxAttempts: 3, maxWaitMs: 5000 })).rejects.toMatchObject({ status: 429 })
    expect(Date.now() - started).toBeLessThan(2000)
    expect(limited.calls).toHaveLength(1)
    // Within the limit, it waits and tries again as usual.
    const brief = setup([{ status: 503, body: '' }, { status: 200, body: '{"data":[]}' }], { baseDelayMs: 5 })
    expect((await brief.client.getTranslations('acme', 7, 'de', [1], { maxAttempts: 3, maxWaitMs: 5000 })).size).toBe(0)
    expect(brief.calls).toHaveLength(2)
    const patched = setup([{ status: 200, body: 'OK' }])
    await expect(patched.client.patchStatuses('acme', 7, 11, 'de', [{ op: 'replace', path: '/1/output', value: 'approved' }])).resolves.toBeUndefined()
  })

  it('a timed-out attempt is tried again, unless retryTimeouts is false (a request made in a work slot)', async () => {
    const timeout = () => Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' })
    const once = setup([timeout(), { status: 200, body: '{"data":[]}' }])
    expect((await once.client.getTranslations('acme', 7, 'de', [1], { maxAttempts: 3, retryTimeouts: false }).catch((e: unknown) => e))).toMatchObject({ status: 0 })
    expect(once.calls).toHaveLength(1)
    const again = setup([timeout(), { status: 200, body: '{"data":[]}' }])
    expect((await again.client.getTranslations('acme', 7, 'de', [1], { maxAttempts: 3 })).size).toBe(0)
    expect(again.calls).toHaveLength(2)
    // Another network error (a reset) is still tried again in place.
    const reset = setup([new Error('socket hang up'), { status: 200, body: '{"data":[]}' }])
    expect((await reset.client.getTranslations('acme', 7, 'de', [1], { maxAttempts: 3, retryTimeouts: false })).size).toBe(0)
    expect(reset.calls).toHaveLength(2)
  })

  it('passes a Retry-After on with the error it ends with, believed up to ten minutes', async () => {
    for (const [header, expected] of [['30', 30_000], ['86400', 600_000], ['9'.repeat(400), 600_000]] as const) {
      const limited = setup([{ status: 429, body: '', retryAfter: header }], { maxDelayMs: 60_000 })
      await expect(limited.client.getTranslations('acme', 7, 'de', [1], { maxAttempts: 3, maxWaitMs: 5000 })).rejects.toMatchObject({ status: 429, retryAfterMs: expected })
    }
  })

  it('asks for statuses with the filters given, and defaults of 500 from 0', async () => {
    const { client, calls } = setup([{ status: 200, body: JSON.stringify({ data: [{ data: { stringId: 1, languageId: 'pt-BR', stepId: 2, status: 'DONE', output: 'ok' } }] }) }, { status: 200, body: '{"data":[]}' }, { status: 200, body: '{}' }, { status: 200, body: '' }])
    expect(await client.getStatuses('acme', 7, 2, 'pt-BR', { status: 'NEED_PROCESS', stringIds: [1, 2], limit: 50, offset: 100 })).toEqual([{ stringId: 1, languageId: 'pt-BR', stepId: 2, status: 'DONE', output: 'ok' }])
    const first = new URL(calls[0]!.url)
    expect(first.pathname).toBe('/api/v2/projects/7/workflow-steps/2/languages/pt-BR/status')
    expect(Object.fromEntries(first.searchParams)).toEqual({ status: 'NEED_PROCESS', stringIds: '1,2', limit: '50', offset: '100' })
    expect(await client.getStatuses('acme', 7, 2, 'de', { stringIds: [] })).toEqual([])
    expect(Object.fromEntries(new URL(calls[1]!.url).searchParams)).toEqual({ limit: '500', offset: '0' })
    // A 2XX without the list says nothing of the strings (read as "none waits", they would be
    // forgotten): an error, retried and then held like an answer that did not come.
    await expect(client.getStatuses('acme', 7, 2, 'de', { stringIds: [1] })).rejects.toMatchObject({ status: 0, message: expect.stringMatching(/without a list of statuses/) })
    await expect(client.getStatuses('acme', 7, 2, 'de', { stringIds: [1] })).rejects.toMatchObject({ status: 0 })
  })

  it('keeps only translation records with a string id', async () => {
    const { client } = setup([{ status: 200, body: JSON.stringify({ data: [{ data: { stringId: 1, text: 'a' } }, { data: { text: 'no id' } }, {}, null] }) }])
    expect([...(await client.getTranslations('acme', 7, 'de', [1, 2])).keys()]).toEqual([1])
    const none = setup([{ status: 200, body: '{"data":[]}' }, { status: 200, body: '{}' }])
    expect((await none.client.getTranslations('acme', 7, 'de', [1])).size).toBe(0)
    expect((await none.client.getTranslations('acme', 7, 'de', [])).size).toBe(0)
    expect(none.calls).toHaveLength(1)
    // Not the list: every string would be checked as untranslated.
    await expect(none.client.getTranslations('acme', 7, 'de', [1])).rejects.toMatchObject({ status: 0, message: expect.stringMatching(/without a list of translations/) })
  })

  it('reads comments and open issues, and refuses a created comment without an id', async () => {
    const { client, calls } = setup([
      { status: 201, body: JSON.stringify({ data: { id: 5, text: 'x' } }) },
      { status: 201, body: '{"data":{}}' },
      { status: 200, body: JSON.stringify({ data: [{ data: { id: 1 } }, { data: { text: 'no id' } }, {}] }) },
      { status: 200, body: '{}' },
    ])
    expect(await client.createComment('acme', 7, { stringId: 1, targetLanguageId: 'de', text: 'x', type: 'issue' })).toMatchObject({ id: 5 })
    await expect(client.createComment('acme', 7, { stringId: 1, targetLanguageId: 'de', text: 'x', type: 'issue' })).rejects.toThrow('POST comments answered without a comment id')
    expect((await client.listOpenIssues('acme', 7, 1, 'de')).map((c) => c.id)).toEqual([1])
    // No list in a 2XX: no answer (as every read here), never "no open issue".
    await expect(client.listOpenIssues('acme', 7, 1, 'de')).rejects.toMatchObject({ status: 0, message: expect.stringMatching(/without a list of comments/) })
    expect(calls[0]!.url).toBe('https://acme.api.test/api/v2/projects/7/comments')
    expect(Object.fromEntries(new URL(calls[2]!.url).searchParams)).toEqual({ stringId: '1', type: 'issue', targetLanguageId: 'de', issueStatus: 'unresolved', limit: '500', offset: '0' })
  })
})

describe('retryAfterMs', () => {
  it('reads seconds or an HTTP date, never below zero', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(retryAfterMs('3', now)).toBe(3000)
    expect(retryAfterMs('-5', now)).toBe(0)
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000)
    expect(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0)
    expect(retryAfterMs('soon', now)).toBeUndefined()
    expect(retryAfterMs(null, now)).toBeUndefined()
    expect(retryAfterMs('', now)).toBeUndefined()
  })
})
