// The fake OpenAI-compatible server by plain HTTP: what it demands, what it answers, its faults.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { MODEL_MAX_OUTPUT_TOKENS, fakeVerdict, realisticTokens, startFakeOpenAi, type RunningFakeOpenAi } from '../../src/emulator/fake-openai.js'

let fake: RunningFakeOpenAi
beforeAll(async () => { fake = await startFakeOpenAi({ seed: 7 }) })
afterAll(async () => { await fake.stop() })
beforeEach(() => fake.reset())

const items = [
  { id: 'a', source: 'Delete 3 files', translation: 'Supprimer 3 fichiers' },
  { id: 'b', source: 'Delete 3 files', translation: 'Supprimer des fichiers' },
  { id: 'c', source: 'Save', translation: 'TODO' },
]
const structured = { type: 'json_schema', json_schema: { name: 'proofread', strict: true, schema: { type: 'object' } } }
const body = (overrides: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  response_format: structured,
  messages: [{ role: 'system', content: 'Review.' }, { role: 'user', content: 'Review these:\n\n```json\n' + JSON.stringify({ items }) + '\n```' }],
  ...overrides,
})
const post = (payload: unknown, auth = 'Bearer k', signal?: AbortSignal) => fetch(`${fake.url}/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, body: JSON.stringify(payload), signal,
})
const verdicts = async (res: Response) => JSON.parse(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content) as { verdicts: { id: string; score: number; errors: { category: string; severity: string; span: string }[] }[] }

describe('fake OpenAI', () => {
  it('lists models', async () => {
    const res = await fetch(`${fake.url}/models`)
    expect(((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toContain('gpt-4o-mini')
  })

  it('requires a bearer token and a json_schema response format', async () => {
    expect((await post(body(), '')).status).toBe(401)
    expect((await post(body(), 'Bearer ')).status).toBe(401)
    expect((await post(body({ response_format: { type: 'json_object' } }))).status).toBe(400)
    expect((await post(body({ messages: [{ role: 'user', content: 'no block' }] }))).status).toBe(400)
    expect(fake.stats().byStatus).toEqual({ 401: 2, 400: 2 })
  })

  it('flags dropped numbers and marker words, approves the rest, and counts tokens', async () => {
    const res = await post(body())
    expect(res.status).toBe(200)
    const json = await verdicts(res.clone())
    expect(json.verdicts.map((v) => [v.id, v.errors.map((e) => `${e.category}/${e.severity}`)])).toEqual([
      ['a', []], ['b', ['accuracy/major']], ['c', ['accuracy/major']],
    ])
    expect(json.verdicts[0]!.score).toBeGreaterThanOrEqual(95)
    expect(json.verdicts[2]!.errors[0]!.span).toBe('TODO')
    const usage = ((await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage
    expect(usage.prompt_tokens).toBeGreaterThan(0)
    expect(fake.stats()).toMatchObject({ requests: 1, items: 3, tokensIn: usage.prompt_tokens, tokensOut: usage.completion_tokens })
  })

  it('injects 429 with Retry-After, 5xx, a dropped item and malformed content, each for the next request only', async () => {
    fake.setFaults({ tooManyRequests: { times: 1, retryAfter: '2', retryAfterMs: 1500 } })
    const limited = await post(body())
    expect([limited.status, limited.headers.get('retry-after'), limited.headers.get('retry-after-ms')]).toEqual([429, '2', '1500'])
    expect((await post(body())).status).toBe(200)
    fake.setFaults({ serverError: { times: 1, status: 502 } })
    expect((await post(body())).status).toBe(502)
    fake.setFaults({ dropItem: { times: 1, match: 'Save' } })
    expect((await verdicts(await post(body()))).verdicts.map((v) => v.id)).toEqual(['a', 'b'])
    expect((await verdicts(await post(body()))).verdicts).toHaveLength(3)
    fake.setFaults({ malformed: { times: 1 } })
    const res = await post(body())
    expect(res.status).toBe(200)
    const content = ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content
    expect(() => JSON.parse(content)).toThrow()
  })

  it('applies a rate as a seeded fraction of requests', async () => {
    fake.setFaults({ serverError: { rate: 0.5 } })
    for (let i = 0; i < 20; i++) await post(body())
    const failed = fake.stats().byStatus[500] ?? 0
    expect(failed).toBeGreaterThan(3)
    expect(failed).toBeLessThan(17)
  })

  it('hangs until the client gives up, and tracks requests in flight', async () => {
    fake.setFaults({ hang: {} })
    const all = await Promise.allSettled([1, 2, 3].map(() => post(body(), 'Bearer k', AbortSignal.timeout(150))))
    expect(all.every((r) => r.status === 'rejected')).toBe(true)
    await new Promise((r) => setTimeout(r, 50))
    expect(fake.stats()).toMatchObject({ requests: 3, inFlight: 0, maxInFlight: 3 })
  })

  it('stalls or cuts a 200 mid-body, and loops to the output limit when asked', async () => {
    fake.setFaults({ stallBody: { times: 1 } })
    const stalled = await post(body())
    expect(stalled.status).toBe(200)
    const read = stalled.text()
    const outcome = await Promise.race([read.then(() => 'ended', () => 'failed'), new Promise((r) => setTimeout(() => r('stalled'), 200))])
    expect(outcome).toBe('stalled')
    fake.reset()
    await expect(read).rejects.toThrow()
    fake.setFaults({ cutBody: { times: 1 } })
    const cut = await post(body())
    expect(cut.status).toBe(200)
    await expect(cut.text()).rejects.toThrow()
    fake.setFaults({ runaway: {} })
    const unbounded = (await (await post(body())).json()) as { choices: { finish_reason: string; message: { content: string } }[]; usage: { completion_tokens: number } }
    expect(unbounded.choices[0]!.finish_reason).toBe('length')
    expect(() => JSON.parse(unbounded.choices[0]!.message.content)).toThrow()
    expect(unbounded.usage.completion_tokens).toBe(MODEL_MAX_OUTPUT_TOKENS)
    const bounded = (await (await post(body({ max_completion_tokens: 300 }))).json()) as { usage: { completion_tokens: number } }
    expect(bounded.usage.completion_tokens).toBe(300)
  })

  it('answers 400 context_length_exceeded when messages and completion exceed its context', async () => {
    const small = await startFakeOpenAi({ contextTokens: 1000 })
    try {
      const at = (payload: unknown) => fetch(`${small.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: JSON.stringify(payload) })
      expect((await at(body())).status).toBe(200)
      expect((await at(body({ max_completion_tokens: 990 }))).status).toBe(400)
      const cjk = [{ id: 'a', source: 'Save', translation: '保'.repeat(1000) }]
      const res = await at(body({ messages: [{ role: 'user', content: '```json\n' + JSON.stringify({ items: cjk }) + '\n```' }] }))
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('context_length_exceeded')
      expect(realisticTokens('abcdefgh保存')).toBe(4)
    } finally {
      await small.stop()
    }
  })

  it('refuses by content filter a request holding the marked text, as Azure OpenAI does: 400 content_filter, or a cut completion', async () => {
    fake.setFaults({ contentFilter: { match: 'TODO' } })
    const res = await post(body())
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string } }
    expect(error).toMatchObject({ code: 'content_filter', param: 'prompt' })
    expect(error.message).toMatch(/content management policy/)
    const clean = body({ messages: [{ role: 'user', content: '```json\n' + JSON.stringify({ items: items.slice(0, 2) }) + '\n```' }] })
    expect((await post(clean)).status).toBe(200)
    fake.setFaults({ contentFilter: { match: 'TODO', at: 'completion' } })
    const cut = (await (await post(body())).json()) as { choices: { finish_reason: string; message: { content: string } }[] }
    expect(cut.choices[0]!.finish_reason).toBe('content_filter')
    expect(() => JSON.parse(cut.choices[0]!.message.content)).toThrow()
    expect((await verdicts(await post(clean))).verdicts).toHaveLength(2)
    expect(fake.stats().byStatus).toEqual({ 400: 1, 200: 3 })
  })

  it('declines, as a model with structured outputs does, a request holding the marked text: content null, its words in refusal', async () => {
    fake.setFaults({ refusal: { match: 'TODO' } })
    const declined = (await (await post(body())).json()) as { choices: { finish_reason: string; message: { content: string | null; refusal: string | null } }[] }
    expect(declined.choices[0]!).toMatchObject({ finish_reason: 'stop', message: { content: null, refusal: expect.stringMatching(/can't assist/) } })
    const clean = body({ messages: [{ role: 'user', content: '```json\n' + JSON.stringify({ items: items.slice(0, 2) }) + '\n```' }] })
    expect((await verdicts(await post(clean))).verdicts).toHaveLength(2)
  })

  it('answers without a key when keyRequired is false, as a self-hosted server started without one', async () => {
    const open = await startFakeOpenAi({ keyRequired: false })
    try {
      const res = await fetch(`${open.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body()) })
      expect(res.status).toBe(200)
    } finally {
      await open.stop()
    }
  })

  // A test of what a client sends (which key, if any) must see the request the fake refused.
  it('shows onRequest each request, one it answers 401 too', async () => {
    const seen: Array<string | undefined> = []
    const watched = await startFakeOpenAi({ onRequest: (_b, h) => { seen.push(h.authorization as string | undefined) } })
    try {
      const send = (auth?: string) => fetch(`${watched.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, body: JSON.stringify(body()) })
      expect((await send()).status).toBe(401)
      expect((await send('Bearer ')).status).toBe(401)
      expect((await send('Bearer k')).status).toBe(200)
      expect(seen).toEqual([undefined, 'Bearer', 'Bearer k'])
      // Still 401 before 400: a body that is not JSON, without a key.
      const notJson = await fetch(`${watched.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{' })
      expect(notJson.status).toBe(401)
    } finally {
      await watched.stop()
    }
  })

  it('keeps the verdict deterministic', () => {
    expect(fakeVerdict(items[1]!)).toEqual(fakeVerdict(items[1]!))
    expect(fakeVerdict({ id: 'x', source: 'Version 1.5', translation: 'Version 1,5' }).errors).toHaveLength(1)
  })
})
