// The plugin against the fake OpenAI server on loopback: the real SDK code path, with faults.
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { instantiatePlugin } from '../../src/engine/instantiate-plugin.js'
import { testContext, testItem, type PluginTestCase } from '../../src/engine/plugin-tester.js'
import type { Item, PluginCache, PluginContext, PluginDefinition } from '../../src/engine/types.js'
import { startFakeOpenAi, type RunningFakeOpenAi } from '../../src/emulator/fake-openai.js'
import aiProofread, { BudgetExhaustedError, ModelRefusalError, ModelRequestError } from './index.js'
import { ModelClient } from './model-client.js'
import { withinServer } from './foreign-server.js'
import { retryAfterMs } from './backoff.js'
import { pino } from 'pino'

let fake: RunningFakeOpenAi
const bodies: Record<string, unknown>[] = []
/** The Authorization header of each request to `fake`. */
const keys: unknown[] = []
beforeAll(async () => { fake = await startFakeOpenAi({ onRequest: (b, h) => { bodies.push(b); keys.push(h.authorization) } }) })
afterAll(async () => { await fake.stop() })
beforeEach(() => { fake.reset(); bodies.length = 0; keys.length = 0 })

const definition = aiProofread as unknown as PluginDefinition<never>

function memoryCache(): PluginCache {
  const map = new Map<string, unknown>()
  return { async get<T>(k: string) { return map.get(k) as T | undefined }, async set(k, v) { map.set(k, v) } }
}

async function setUp(options: Record<string, unknown> = {}, context: Partial<PluginContext> = {}) {
  const counters: Record<string, number> = {}
  const instance = await instantiatePlugin(aiProofread, { retryBaseMs: 10, ...options }, testContext(definition, {
    env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: fake.url },
    metrics: { add(name, n = 1) { counters[name] = (counters[name] ?? 0) + n } },
    ...context,
  }))
  // A string failed alone (an Error in its place) is thrown here, as the whole batch used to be:
  // tests of one failure read the same either way; partial failures are read from instance.checkBatch.
  const checkBatch = async (list: Item[]) => (await instance.checkBatch!(list)).map((r) => { if (r instanceof Error) throw r; return r })
  return { instance, checkBatch, counters }
}

const good = (n: number, from = 1): Item[] => Array.from({ length: n }, (_, i) => testItem({ source: `Save ${from + i} files`, translation: `Enregistrer ${from + i} fichiers` }, from + i))
const item = (c: Partial<PluginTestCase> & { translation: string }, id = 1) => testItem({ source: 'Save the file', ...c }, id)

describe('ai-proofread batching', () => {
  it('sends 100 strings in 5 requests at the default batch size and matches verdicts back by id', async () => {
    const { checkBatch, counters } = await setUp()
    const items = good(100)
    items[41] = item({ source: 'Delete 42 files', translation: 'Supprimer des fichiers' }, 42)
    items[76] = item({ translation: 'XXX le fichier' }, 77)
    const results = await checkBatch(items)
    expect(fake.stats().requests).toBe(5)
    expect(fake.stats().items).toBe(100)
    expect(results).toHaveLength(100)
    expect(results.filter((r) => r.length).length).toBe(2)
    expect(results[41]![0]!.message).toMatch(/^accuracy \(major\): .*42/)
    expect(results[76]![0]).toMatchObject({ severity: 'error', span: { start: 0, end: 3, in: 'translation' } })
    expect(counters['ai.requests']).toBe(5)
    expect(counters['ai.tokens.in']).toBe(fake.stats().tokensIn)
    expect(counters['ai.tokens.out']).toBe(fake.stats().tokensOut)
  })

  it('splits a batch that would exceed maxInputTokens', async () => {
    // About 210 tokens a string, 500 for strings in a request: two fit, not three.
    const { checkBatch } = await setUp({ maxInputTokens: 1700 })
    const long = (i: number) => testItem({ source: `${'word '.repeat(60)}${i}`, translation: `${'mot '.repeat(60)}${i}` }, i)
    await checkBatch([1, 2, 3, 4, 5, 6].map(long))
    expect(fake.stats().requests).toBe(3)
    expect(fake.stats().items).toBe(6)
  })

  // Rule: no request's estimated prompt exceeds maxInputTokens; a string too long alone is not sent
  // and gets a too-long-to-review finding, while the rest of its batch is reviewed.
  it('refuses a maxInputTokens that leaves no room for strings beside the system prompt', async () => {
    await expect(setUp({ maxInputTokens: 1000 })).rejects.toThrow(/maxInputTokens 1000 leaves no room/)
  })

  it('does not send a string that alone exceeds maxInputTokens, and says it was too long to review', async () => {
    const { checkBatch, counters } = await setUp({ maxInputTokens: 2000 })
    const long = testItem({ source: 'word '.repeat(1500), translation: 'mot '.repeat(1500) }, 1)
    const results = await checkBatch([long, item({ translation: 'TODO' }, 2)])
    expect(results[0]).toEqual([{ code: 'too-long-to-review', severity: 'error', message: expect.stringMatching(/^not reviewed: the string is too long to review by AI \(about \d+ tokens; .* 800\)$/) }])
    expect(results[1]).toMatchObject([{ code: 'accuracy' }])
    expect(fake.stats().requests).toBe(1)
    expect(fake.stats().items).toBe(1)
    for (const body of bodies) {
      const chars = (body.messages as { content: string }[]).reduce((n, m) => n + m.content.length, 0)
      expect(Math.ceil(chars / 3)).toBeLessThanOrEqual(2000)
    }
    expect(counters['ai.requests']).toBe(1)
  })

  it('asks identical strings once and groups requests by language pair', async () => {
    const { checkBatch } = await setUp()
    // Identical: the same key too (the key is sent, and can change the verdict).
    const same = [item({ translation: 'Enregistrer le fichier', key: 'save' }, 1), item({ translation: 'Enregistrer le fichier', key: 'save' }, 2)]
    const german = item({ translation: 'Datei speichern', targetLanguage: 'de' }, 3)
    await checkBatch([...same, german])
    expect(fake.stats().requests).toBe(2)
    expect(fake.stats().items).toBe(2)
  })
})

describe('ai-proofread answers with gaps or garbage', () => {
  it('asks again alone for a string missing from an answer, then uses its verdict', async () => {
    const { checkBatch, counters } = await setUp()
    fake.setFaults({ dropItem: { times: 1 } })
    const items = [...good(4), item({ translation: 'TODO' }, 5)]
    const results = await checkBatch(items)
    expect(fake.stats().requests).toBe(2)
    expect(JSON.stringify(bodies[1]).match(/\\"id\\":/g)).toHaveLength(1)
    expect(results[4]).toHaveLength(1)
    expect(results[4]![0]!.message).toContain('accuracy (major)')
    expect(counters['ai.retries']).toBe(1)
  })

  it('reports "no verdict:" as an error when the model keeps leaving a string out', async () => {
    const { checkBatch } = await setUp()
    fake.setFaults({ dropItem: { match: 'NOVERDICT' } })
    const results = await checkBatch([...good(3), item({ source: 'NOVERDICT here', translation: 'ici' }, 4)])
    expect(fake.stats().requests).toBe(3)
    expect(results.slice(0, 3)).toEqual([[], [], []])
    expect(results[3]).toEqual([{ code: 'no-verdict', severity: 'error', message: expect.stringMatching(/^no verdict:/) }])
  })

  it('retries a malformed answer (not JSON, wrong schema) and then succeeds', async () => {
    const { checkBatch, counters } = await setUp()
    fake.setFaults({ malformed: { times: 1, kind: 'not-json' } })
    expect(await checkBatch(good(3))).toEqual([[], [], []])
    fake.setFaults({ malformed: { times: 1, kind: 'wrong-schema' } })
    expect(await checkBatch(good(3, 10))).toEqual([[], [], []])
    expect(fake.stats().requests).toBe(4)
    expect(counters['ai.errors']).toBe(2)
  })

  // Rule: a request that fails for good fails its own strings only; the other requests of the
  // run keep their verdicts (docs/plugins.md: an Error in a string's place fails it alone).
  it('fails only the strings of a request that fails for good, not the rest of the run', async () => {
    // One string a request, one request at a time: the first request is refused (400: not retried).
    const { instance } = await setUp({ batchSize: 1, concurrency: 1 })
    fake.setFaults({ serverError: { times: 1, status: 400 } })
    const results = await instance.checkBatch!(good(3))
    expect(results[0]).toBeInstanceOf(Error)
    expect((results[0] as Error).message).toMatch(/400/)
    expect(results.slice(1)).toEqual([[], []])
    expect(fake.stats().requests).toBe(3)
  })

  it('fails the batch when every answer is malformed', async () => {
    const { checkBatch } = await setUp()
    fake.setFaults({ malformed: { kind: 'wrong-schema' } })
    await expect(checkBatch(good(2))).rejects.toThrow(/malformed answer.*schema/)
    expect(fake.stats().requests).toBe(3)
  })
})

describe('ai-proofread retries and bounds', () => {
  it('honours Retry-After on 429', async () => {
    const { checkBatch, counters } = await setUp({ retryBaseMs: 1 })
    fake.setFaults({ tooManyRequests: { times: 1, retryAfter: '1' } })
    const started = performance.now()
    expect(await checkBatch(good(2))).toEqual([[], []])
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000)
    expect(fake.stats().byStatus).toEqual({ 429: 1, 200: 1 })
    expect(counters['ai.retries']).toBe(1)
  })

  it('prefers retry-after-ms over Retry-After', async () => {
    const { checkBatch } = await setUp({ retryBaseMs: 1 })
    fake.setFaults({ tooManyRequests: { times: 1, retryAfter: '30', retryAfterMs: 250 } })
    const started = performance.now()
    await checkBatch(good(1))
    expect(performance.now() - started).toBeGreaterThanOrEqual(250)
    // Which header won, without an upper time limit: the wait the plugin computes.
    expect(retryAfterMs(new Headers({ 'retry-after': '30', 'retry-after-ms': '250' }))).toBe(250)
  })

  it('retries a 500 and succeeds', async () => {
    const { checkBatch, counters } = await setUp()
    fake.setFaults({ serverError: { times: 1 } })
    expect(await checkBatch(good(2))).toEqual([[], []])
    expect(fake.stats().byStatus).toEqual({ 500: 1, 200: 1 })
    expect(counters['ai.errors']).toBe(1)
    expect(counters['ai.retries']).toBe(1)
  })

  it('throws after maxRetries when the server keeps failing, and does not retry a 401', async () => {
    const { checkBatch } = await setUp({ maxRetries: 2 })
    fake.setFaults({ serverError: { status: 503 } })
    await expect(checkBatch(good(1))).rejects.toThrow(ModelRequestError)
    expect(fake.stats().requests).toBe(3)
    fake.reset()
    // No key for a server that wants one: asked once without, and its 401 says which key to set.
    const unauthorised = await setUp({}, { env: { OPENAI_API_KEY: '', OPENAI_BASE_URL: fake.url } })
    await expect(unauthorised.checkBatch(good(1))).rejects.toThrow(/failed \(HTTP 401 invalid_api_key\): the server wants an API key, and this check sends none: set OPENAI_API_KEY \(or the apiKey option\)$/)
    expect(fake.stats().requests).toBe(1)
    // OpenAI's API answers nothing without a key: not asked at all.
    const openAi = await setUp({}, { env: { OPENAI_API_KEY: '' } })
    await expect(openAi.checkBatch(good(1))).rejects.toThrow(/^ai-proofread: no API key for OpenAI's API: set OPENAI_API_KEY/)
    expect(fake.stats().requests).toBe(1)
  })

  it('times out a hanging request and retries it', async () => {
    const { checkBatch } = await setUp({ timeoutMs: 200 })
    fake.setFaults({ hang: { times: 1 } })
    expect(await checkBatch(good(1))).toEqual([[]])
    expect(fake.stats().requests).toBe(2)
  })

  it('fails with a timeout when every request hangs', async () => {
    const { checkBatch } = await setUp({ timeoutMs: 150, maxRetries: 1 })
    fake.setFaults({ hang: {} })
    await expect(checkBatch(good(1))).rejects.toThrow(/timeout/)
    expect(fake.stats().requests).toBe(2)
  })

  it('keeps at most `concurrency` requests in flight', async () => {
    const { checkBatch } = await setUp({ concurrency: 3, batchSize: 2 })
    fake.setFaults({ latencyMs: 40 })
    await checkBatch(good(30))
    expect(fake.stats().requests).toBe(15)
    expect(fake.stats().maxInFlight).toBeLessThanOrEqual(3)
    expect(fake.stats().maxInFlight).toBeGreaterThanOrEqual(2)
  })

  it('throws BudgetExhaustedError without calling when the prompt alone exceeds the budget', async () => {
    const { checkBatch } = await setUp({ tokensPerHour: 100 })
    await expect(checkBatch(good(3))).rejects.toThrow(BudgetExhaustedError)
    expect(fake.stats().requests).toBe(0)
  })

  it('reviews with a budget smaller than one prompt and the default completion limit, the limit lowered to fit', async () => {
    // About 600 tokens of prompt and 3072 of completion limit: more than 3000 together.
    const { checkBatch } = await setUp({ tokensPerHour: 3000 })
    expect(await checkBatch(good(1))).toEqual([[]])
    expect(fake.stats().requests).toBe(1)
  })

  it('stops calling once the hour\'s tokens are spent', async () => {
    // A small completion limit: the budget holds the prompt and the most the answer may take.
    const { checkBatch, counters } = await setUp({ tokensPerHour: 2000, maxOutputTokens: 100 })
    let runs = 0
    let error: unknown
    for (; runs < 10 && !error; runs++) await checkBatch(good(1, runs + 1)).catch((e: unknown) => { error = e })
    expect(error).toBeInstanceOf(BudgetExhaustedError)
    expect(fake.stats().requests).toBe(runs - 1)
    expect((counters['ai.tokens.in'] ?? 0) + (counters['ai.tokens.out'] ?? 0)).toBeLessThanOrEqual(2000)
  })

  // Rule: the hour's budget holds, for each request in flight, its prompt and the most its answer
  // may take (the completion limit it sends, lowered to fit what is left), so requests sent
  // together cannot overrun the budget with their answers; each is then settled with the usage the
  // server reports.
  it('holds room for the answers of requests in flight, not only their prompts', async () => {
    // A prompt of about 600 tokens; each answer runs to its limit (2048 + 1024 for one string),
    // billed in full: the first request is sent with that limit, the second with what is left.
    const budget = 5000
    const { instance } = await setUp({ batchSize: 1, concurrency: 2, tokensPerHour: budget })
    fake.setFaults({ runaway: {} })
    const results = await instance.checkBatch!(good(2))
    expect(results.every((r) => r instanceof BudgetExhaustedError)).toBe(true)
    expect(fake.stats().requests).toBe(2)
    const limits = bodies.map((b) => b.max_completion_tokens as number).sort((a, b) => b - a)
    expect(limits[0]).toBe(3072)
    expect(limits[1]).toBeLessThan(3072)
    expect(fake.stats().tokensIn + fake.stats().tokensOut).toBeLessThanOrEqual(budget)
    // Once nothing is in flight, the hour's use is what the answers' usage says, not what was held.
    const after = await instance.checkBatch!(good(1, 3))
    expect((after[0] as BudgetExhaustedError).used).toBe(fake.stats().tokensIn + fake.stats().tokensOut)
  })

  it('stops when the items are aborted', async () => {
    const { checkBatch } = await setUp()
    fake.setFaults({ latencyMs: 5000 })
    const controller = new AbortController()
    const items = good(2).map((i) => ({ ...i, signal: controller.signal }))
    const outcome = expect(checkBatch(items)).rejects.toThrow(/shutting down/)
    // Abort once the fake has the request: aborted earlier under load, the request could reach
    // the fake only after the next test's reset() and be counted there.
    await vi.waitFor(() => expect(fake.stats().inFlight).toBe(1), { timeout: 10_000, interval: 5 })
    controller.abort(new Error('shutting down'))
    // The fake answers only after 5 s; the abort's own reason proves the request was cut short.
    await outcome
    await vi.waitFor(() => expect(fake.stats().inFlight).toBe(0), { timeout: 10_000, interval: 5 })
    expect(fake.stats().requests).toBe(1)
  })
})

describe('ai-proofread closing', () => {
  // Rule: close() settles every request still waiting for a slot at once, with a clear error; the
  // one in flight is left to finish (before, the queue was cleared and the waiting ones never settled).
  it('fails the requests waiting in the queue when the instance is closed, and lets the one in flight finish', async () => {
    const { instance, checkBatch, counters } = await setUp({ concurrency: 1, batchSize: 1 })
    fake.setFaults({ latencyMs: 300 })
    const outcome = checkBatch(good(3)).then(() => 'resolved', (e: Error) => e.message)
    await vi.waitFor(() => expect(fake.stats().inFlight).toBe(1), { timeout: 10_000, interval: 5 })
    const t = performance.now()
    await instance.close!()
    expect(fake.stats().requests).toBe(1)
    const settled = await Promise.race([outcome, new Promise((r) => setTimeout(() => r('hung'), 5000))])
    expect(settled).toBe('ai-proofread: the check was closed before this request was sent')
    expect(performance.now() - t).toBeLessThan(2000)
    expect(fake.stats().inFlight).toBe(0)
    expect(counters['ai.requests']).toBe(1)
    await expect(checkBatch(good(1, 10))).rejects.toThrow(/closed/)
    expect(fake.stats().requests).toBe(1)
  })
})

describe('ai-proofread cache', () => {
  it('never asks twice about the same string, across instances sharing a cache', async () => {
    const cache = memoryCache()
    const first = await setUp({}, { cache })
    const items = [...good(5), item({ translation: 'XXX' }, 6)]
    const before = await first.checkBatch(items)
    expect(fake.stats().requests).toBe(1)
    const second = await setUp({}, { cache })
    expect(await second.checkBatch(items)).toEqual(before)
    expect(fake.stats().requests).toBe(1)
    expect(second.counters['ai.cache.hits']).toBe(6)
    expect(second.counters['ai.requests']).toBeUndefined()
    // The threshold is not part of the key: a stricter step reuses the verdict.
    const critical = await setUp({ errorAt: 'critical' }, { cache })
    expect((await critical.checkBatch(items))[5]![0]!.severity).toBe('warning')
    expect(fake.stats().requests).toBe(1)
  })

  it('asks again when the translation or the instructions change, and does not cache a missing verdict', async () => {
    const cache = memoryCache()
    const { checkBatch } = await setUp({}, { cache })
    await checkBatch([item({ translation: 'Enregistrer le fichier' })])
    await checkBatch([item({ translation: 'Enregistrer ce fichier' })])
    await checkBatch([item({ translation: 'Enregistrer ce fichier', settings: { instructions: 'Use tu.' } })])
    expect(fake.stats().requests).toBe(3)
    fake.setFaults({ dropItem: {} })
    expect((await checkBatch([item({ translation: 'Sauver' })]))[0]![0]!).toMatchObject({ code: 'no-verdict', message: expect.stringMatching(/^no verdict:/) })
    fake.setFaults({})
    expect(await checkBatch([item({ translation: 'Sauver' })])).toEqual([[]])
    expect(fake.stats().requests).toBe(3 + 3 + 1)
  })
})

describe('ai-proofread findings and prompt', () => {
  const mixed = () => [item({ translation: 'XXX  le fichier' })]

  it.each([
    ['major', ['error', 'warning']],
    ['critical', ['warning', 'info']],
    ['minor', ['error', 'error']],
  ] as const)('maps MQM severities with errorAt %s', async (errorAt, severities) => {
    const { checkBatch } = await setUp({ errorAt })
    const [findings] = await checkBatch(mixed())
    expect(findings!.map((f) => f.severity)).toEqual(severities)
    expect(findings![0]).toMatchObject({ code: 'accuracy', message: expect.stringMatching(/^accuracy \(major\): the marker XXX/), span: { start: 0, end: 3 } })
    expect(findings![1]).toMatchObject({ code: 'fluency', message: 'fluency (minor): double space', span: { start: 3, end: 5 }, suggestion: ' ' })
  })

  it('adds an error when the score is below minScore', async () => {
    const { checkBatch } = await setUp({ minScore: 80 })
    const [findings] = await checkBatch(mixed())
    expect(findings!.at(-1)).toEqual({ code: 'below-min-score', severity: 'error', message: 'score 60 is below the minimum of 80' })
  })

  it('sends what a reviewer sees: languages, key, context, max length, relevant glossary terms, instructions', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ai-proofread-'))
    await writeFile(join(dir, 'terms.csv'), 'term,translation,note,language\nfile,fichier,"noun, not verb",fr\nfile,Datei,,de\nfolder,dossier,,\n')
    const { checkBatch } = await setUp({ glossary: 'terms.csv', instructions: 'Formal register.' }, { pipelineDir: dir })
    await checkBatch([item({ translation: 'Enregistrer le fichier', key: 'save.title', context: 'Button', maxLength: 30, settings: { instructions: 'Use vous.' } })])
    const body = bodies[0] as { model: string; response_format: { type: string; json_schema: { strict: boolean } }; messages: { role: string; content: string }[] }
    expect(body.model).toBe('gpt-4o-mini')
    expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { strict: true } })
    const user = body.messages.find((m) => m.role === 'user')!.content
    expect(user).toContain('Formal register.\n\nUse vous.')
    const data = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(user)![1]!)
    expect(data).toEqual({
      sourceLanguage: { name: 'en', code: 'en' },
      targetLanguage: { name: 'fr', code: 'fr' },
      items: [{ id: '1', key: 'save.title', context: 'Button', maxLength: 30, source: 'Save the file', translation: 'Enregistrer le fichier', glossary: [{ term: 'file', translation: 'fichier', note: 'noun, not verb' }] }],
    })
  })

  it('rejects a glossary file it cannot read at load', async () => {
    await expect(setUp({ glossary: 'missing.csv' })).rejects.toThrow(/cannot read/)
    await expect(setUp({ glossary: 'terms.tbx' })).rejects.toThrow(/only CSV/)
  })

  it('skips strings without a translation', async () => {
    const { checkBatch } = await setUp()
    expect(await checkBatch([item({ translation: '' })])).toEqual([[]])
    expect(fake.stats().requests).toBe(0)
  })
})

describe('ai-proofread statuses', () => {
  it('retries 408 and 409 like 5xx and 429', async () => {
    for (const status of [408, 409]) {
      fake.reset()
      const { checkBatch, counters } = await setUp()
      fake.setFaults({ serverError: { times: 1, status } })
      expect(await checkBatch(good(1))).toEqual([[]])
      expect(fake.stats().byStatus).toEqual({ [status]: 1, 200: 1 })
      expect(counters['ai.retries']).toBe(1)
    }
  })

  it('does not retry a 400, and says which status failed', async () => {
    const { checkBatch } = await setUp()
    fake.setFaults({ serverError: { status: 400 } })
    const failure = checkBatch(good(1))
    await expect(failure).rejects.toMatchObject({ name: 'ModelRequestError', status: 400 })
    await expect(failure).rejects.toThrow(/^ai-proofread: request to gpt-4o-mini failed \(HTTP 400\)$/)
    expect(fake.stats().requests).toBe(1)
  })

  it('counts the attempts in the error when retries run out', async () => {
    const { checkBatch } = await setUp({ maxRetries: 1 })
    fake.setFaults({ serverError: { status: 502 } })
    await expect(checkBatch(good(1))).rejects.toThrow(/^ai-proofread: request to gpt-4o-mini failed \(HTTP 502\) after 2 attempts$/)
  })

  it('does not wait when the server asks for more than two minutes', async () => {
    const { checkBatch } = await setUp()
    fake.setFaults({ tooManyRequests: { retryAfter: '3600' } })
    await expect(checkBatch(good(1))).rejects.toThrow(/^ai-proofread: gpt-4o-mini asks to wait 3600 s \(HTTP 429 rate_limit_exceeded\); not waiting that long$/)
    expect(fake.stats().requests).toBe(1)
  })

  // Rule: a 429 for an account out of credit (insufficient_quota) is not waited out: retrying
  // cannot help, and each retry delays every string of the run.
  it('does not retry an account out of credit (429 insufficient_quota)', async () => {
    const { checkBatch } = await setUp({ retryBaseMs: 1 })
    fake.setFaults({ tooManyRequests: { quota: true } })
    await expect(checkBatch(good(1))).rejects.toThrow(/failed \(HTTP 429 insufficient_quota\)$/)
    expect(fake.stats().requests).toBe(1)
  })

  it('logs each retry with its reason and wait', async () => {
    const lines: Record<string, unknown>[] = []
    const log = pino({ level: 'warn' }, { write: (line: string) => { lines.push(JSON.parse(line)) } })
    const { checkBatch } = await setUp({ retryBaseMs: 1 }, { log })
    fake.setFaults({ tooManyRequests: { times: 1, retryAfter: '0', retryAfterMs: 20 } })
    await checkBatch(good(1))
    expect(lines.map((l) => ({ msg: l.msg, reason: l.reason, waitMs: l.waitMs }))).toEqual([{ msg: 'ai-proofread: retrying model request', reason: 'HTTP 429 rate_limit_exceeded', waitMs: 20 }])
  })
})

describe('ai-proofread set-up', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = []
    return { lines, log: pino({ level: 'warn' }, { write: (line: string) => { lines.push(JSON.parse(line)) } }) }
  }

  it('sends the instructions once when the string\'s settings repeat the option\'s', async () => {
    const { checkBatch } = await setUp({ instructions: '  Use Sie. ' })
    await checkBatch([testItem({ source: 'Save', translation: 'Speichern', targetLanguage: 'de', settings: { instructions: 'Use Sie.\n' } })])
    const user = (bodies[0]!.messages as { role: string; content: string }[]).find((m) => m.role === 'user')!.content
    expect(user.startsWith('Instructions for this project:\nUse Sie.\n\nReview these translations')).toBe(true)
  })

  // The warning is once per process and reason: a fresh copy of the plugin's module stands for a
  // fresh process (other tests of this file have warned already).
  const freshPlugin = async () => {
    vi.resetModules()
    return (await import('./index.js')).default as unknown as PluginDefinition<never>
  }
  const load = (plugin: PluginDefinition<never>, options: Record<string, unknown>, context: Partial<PluginContext>) =>
    instantiatePlugin(plugin, options, testContext(plugin, { env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: fake.url }, ...context }))

  it("warns at load when there is no API key for OpenAI's API, and only then", async () => {
    const plugin = await freshPlugin()
    const withKey = capture()
    await load(plugin, {}, { log: withKey.log })
    expect(withKey.lines).toEqual([])
    // Another server may need no key (a self-hosted one).
    const selfHosted = capture()
    await load(plugin, {}, { env: { OPENAI_BASE_URL: fake.url }, log: selfHosted.log })
    expect(selfHosted.lines).toEqual([])
    const without = capture()
    await load(plugin, {}, { env: { OPENAI_API_KEY: '' }, log: without.log })
    expect(without.lines.map((l) => l.msg)).toEqual(["ai-proofread: no API key for OpenAI's API; every check will fail until one is given: set OPENAI_API_KEY (or the apiKey option)"])
  })

  // A check whose options take a step's settings is created once per settings value: each of its
  // instances (every step using it) repeated the warning.
  it('warns of a missing key once per process and reason, however many instances are created', async () => {
    const plugin = await freshPlugin()
    const lines = capture()
    for (const instructions of ['Use Sie.', 'Use du.', 'Be brief.']) await load(plugin, { instructions }, { env: { OPENAI_API_KEY: '' }, log: lines.log })
    // Another reason (a server named by the option, with OpenAI's address) is warned of once too.
    for (let i = 0; i < 2; i++) await load(plugin, { baseUrl: 'https://api.openai.com/v1/' }, { env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: fake.url }, log: lines.log })
    expect(lines.lines.map((l) => l.msg)).toEqual([
      "ai-proofread: no API key for OpenAI's API; every check will fail until one is given: set OPENAI_API_KEY (or the apiKey option)",
      "ai-proofread: no API key for OpenAI's API; every check will fail until one is given: give this check its own key with the apiKey option (OPENAI_API_KEY is sent to the environment's server only)",
    ])
  })

  // Rule: a key with a line break, space or control character inside is refused at load, and the
  // message names where it came from, never the key; whitespace around a key is trimmed.
  it('refuses at load an API key with a line break or space inside, without quoting it', async () => {
    for (const [key, from] of [['sk-proj-SECRETSECRET\nsk-proj-OLDKEY', 'OPENAI_API_KEY'], ['sk-proj-SECRET SECRET', 'OPENAI_API_KEY'], ['sk-proj-\u200bSECRETSECRET', 'OPENAI_API_KEY']]) {
      const error = await setUp({}, { env: { OPENAI_API_KEY: key!, OPENAI_BASE_URL: fake.url } }).then(() => undefined, (e: Error) => e)
      expect(error, 'refused at load').toBeInstanceOf(Error)
      expect(error?.message).toContain(`the API key (${from}) has a line break, space or control character inside`)
      expect(`${error?.message} ${error?.stack}`).not.toContain('SECRET')
    }
    const option = await setUp({ apiKey: 'sk-proj-SECRET\tSECRET' }).then(() => undefined, (e: Error) => e)
    expect(option?.message).toContain('the API key (the apiKey option)')
    const { checkBatch } = await setUp({}, { env: { OPENAI_API_KEY: ' test-key\n', OPENAI_BASE_URL: fake.url } })
    expect(await checkBatch(good(1))).toEqual([[]])
  })

  // Rule: a base URL without http:// or https:// is refused at load, naming where it came from; it
  // parsed as a URL of another scheme (`localhost:11434/v1`) and failed every request at run time.
  it('refuses at load a base URL that is not http(s)', async () => {
    const fromEnv = await setUp({}, { env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'localhost:11434/v1' } }).then(() => undefined, (e: Error) => e)
    expect(fromEnv?.message).toContain('the base URL (OPENAI_BASE_URL) "localhost:11434/v1" must start with http:// or https://')
    const fromOption = await setUp({ baseUrl: 'ftp://u:SECRET@models.example/v1' }).then(() => undefined, (e: Error) => e)
    expect(fromOption?.message).toContain('the base URL (the baseUrl option) "ftp://***@models.example/v1"')
    const { checkBatch } = await setUp({}, { env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: fake.url } })
    expect(await checkBatch(good(1))).toEqual([[]])
  })

  // Rule: an error whose text may quote the key (building the request's headers) reaches neither the
  // error nor the log with the key in it.
  it('keeps the key out of the error and the log when the request cannot be built', async () => {
    const lines: string[] = []
    const log = pino({ level: 'trace' }, { write: (line: string) => { lines.push(line) } })
    const client = new ModelClient({
      apiKey: 'sk-proj-SECRETSECRET\nsk-proj-OLDKEY', missingKey: 'set one', baseUrl: fake.url, model: 'gpt-4o-mini', timeoutMs: 5000, maxRetries: 1,
      retryBaseMs: 1, concurrency: 1, tokensPerHour: 0, metrics: { add() {} }, log,
    })
    const language = { name: 'French', code: 'fr' }
    const error = await client.review({ sourceLanguage: language, targetLanguage: language, instructions: '', items: [] }).then(() => undefined, (e: Error) => e)
    expect(error).toBeInstanceOf(ModelRequestError)
    expect(error!.message).toMatch(/^ai-proofread: request to gpt-4o-mini failed \(.*\[API key\]/)
    expect(`${error!.message} ${error!.stack}`).not.toMatch(/SECRETSECRET|OLDKEY/)
    expect(lines.join('\n')).not.toMatch(/SECRETSECRET|OLDKEY/)
    expect(fake.stats().requests).toBe(0)
  })

  it('keeps verdicts cacheTtlHours, or forever with 0', async () => {
    const ttls: (number | undefined)[] = []
    const cache: PluginCache = { async get() { return undefined }, async set(_k, _v, ttl) { ttls.push(ttl) } }
    await (await setUp({ cacheTtlHours: 2 }, { cache })).checkBatch(good(1))
    await (await setUp({ cacheTtlHours: 0 }, { cache })).checkBatch(good(1, 5))
    expect(ttls).toEqual([7_200_000, undefined])
  })
})

describe('ai-proofread answers that stop or run away', () => {
  // Rule (README: `timeoutMs` is the time limit of one request; timeouts are retried): a 200 whose
  // body stalls after the headers is a timeout like any other, not a wait until the engine gives up.
  it('times out a body that stalls after its headers, and retries it', async () => {
    const { checkBatch, counters } = await setUp({ timeoutMs: 300 })
    fake.setFaults({ stallBody: { times: 1 } })
    const guard = new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000))
    expect(await Promise.race([checkBatch(good(1)), guard])).toEqual([[]])
    expect(fake.stats().requests).toBe(2)
    expect(counters['ai.errors']).toBe(1)
  }, 10_000)

  it('fails with a timeout when every body stalls', async () => {
    const { checkBatch } = await setUp({ timeoutMs: 200, maxRetries: 1 })
    fake.setFaults({ stallBody: {} })
    const guard = new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000))
    await expect(Promise.race([checkBatch(good(1)), guard])).rejects.toThrow(/timeout/)
    expect(fake.stats().requests).toBe(2)
  }, 10_000)

  it('retries a body cut mid-way', async () => {
    const { checkBatch } = await setUp()
    fake.setFaults({ cutBody: { times: 1 } })
    expect(await checkBatch(good(2))).toEqual([[], []])
    expect(fake.stats().requests).toBe(2)
  })

  // Rule (the brief's cost bound): a model looping inside its JSON answer stops at an output limit
  // the plugin sets from the strings asked, not at the model's own (16k tokens, three times over).
  it('bounds the completion of a request by the strings it asks about', async () => {
    const { checkBatch } = await setUp()
    fake.setFaults({ runaway: {} })
    await expect(checkBatch(good(1))).rejects.toThrow(/malformed answer .* after 3 attempts/)
    expect(fake.stats().requests).toBe(3)
    expect(fake.stats().tokensOut).toBeLessThanOrEqual(3 * (2048 + 1024))
    const limits = bodies.map((b) => b.max_completion_tokens)
    expect(limits.every((n) => typeof n === 'number' && n > 0)).toBe(true)
    // A batch of twenty gets room for twenty verdicts, within what a model can write.
    fake.reset(); bodies.length = 0
    await checkBatch(good(20, 100))
    expect(bodies[0]!.max_completion_tokens).toBeGreaterThan(limits[0] as number)
    expect(bodies[0]!.max_completion_tokens).toBeLessThanOrEqual(16_384)
  })
})

describe('ai-proofread and a small context', () => {
  // Rule: a server whose context cannot hold the prompt and the completion limit together (vLLM
  // checks both against the model's context) is asked once more without the limit, not failed.
  it('asks again without the completion limit when the context cannot hold it', async () => {
    const tiny = await startFakeOpenAi({ contextTokens: 8_000 })
    try {
      const { checkBatch, counters } = await setUp({}, { env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: tiny.url } })
      expect(await checkBatch(good(20))).toEqual(good(20).map(() => []))
      expect(tiny.stats().byStatus).toEqual({ 200: 1, 400: 1 })
      expect(counters['ai.retries']).toBe(1)
      // The next requests go without the limit at once.
      expect(await checkBatch(good(20, 100))).toEqual(good(20).map(() => []))
      expect(tiny.stats().byStatus).toEqual({ 200: 2, 400: 1 })
      // Once only: a prompt too large for the context is refused for good.
      const { checkBatch: again } = await setUp({ maxInputTokens: 20_000 }, { env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: tiny.url } })
      tiny.reset()
      const long = [testItem({ source: 'Terms. '.repeat(3000), translation: 'Conditions. '.repeat(2000) }, 1)]
      await expect(again(long)).rejects.toThrow(/HTTP 400 context_length_exceeded/)
      expect(tiny.stats().byStatus).toEqual({ 400: 2 })
    } finally {
      await tiny.stop()
    }
  })
})

describe('ai-proofread cache key', () => {
  // Rule: the cache key holds everything sent about a string that can change the answer. The key
  // (`button.save` vs `error.title`) is sent and the system prompt tells the model to weigh it.
  it('asks again for the same text under another string key', async () => {
    const cache = memoryCache()
    const { checkBatch } = await setUp({}, { cache })
    await checkBatch([item({ translation: 'Enregistrer', key: 'button.save' }, 1)])
    await checkBatch([item({ translation: 'Enregistrer', key: 'error.title' }, 2)])
    expect(fake.stats().requests).toBe(2)
    const sent = bodies.map((b) => JSON.parse(/```json\n([\s\S]*?)\n```/.exec((b.messages as { content: string }[])[1]!.content)![1]!).items[0].key)
    expect(sent).toEqual(['button.save', 'error.title'])
  })
})

describe('ai-proofread token estimates', () => {
  // Rule (README: a batch is split to fit maxInputTokens; a string too long alone is not sent but
  // reported `too-long-to-review`): this holds for CJK text too, whose every character is about a
  // token, not a third of one. Against a model whose context fits maxInputTokens + maxOutputTokens.
  let small: RunningFakeOpenAi
  beforeAll(async () => { small = await startFakeOpenAi({ contextTokens: 16_000 + 16_384 + 512 }) })
  afterAll(async () => { await small.stop() })
  const japanese = (chars: number, n: number) => testItem({ source: `Terms of use, part ${n}. `.repeat(Math.ceil(chars / 80)), translation: `利用規約第${n}部。`.padEnd(chars, '本サービスの利用規約に同意します。') }, n)
  const onSmall = (options: Record<string, unknown> = {}) => setUp(options, { env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: small.url } })

  it('splits a batch of CJK translations to fit maxInputTokens', async () => {
    const { checkBatch } = await onSmall()
    const batch = Array.from({ length: 20 }, (_, i) => japanese(1500, i + 1))
    expect(await checkBatch(batch)).toEqual(batch.map(() => []))
    expect(small.stats().byStatus[400]).toBeUndefined()
  })

  it('does not send a CJK translation too long for a request alone', async () => {
    small.reset()
    const { checkBatch } = await onSmall()
    const [findings] = await checkBatch([japanese(24_000, 1)])
    expect(findings).toEqual([expect.objectContaining({ code: 'too-long-to-review' })])
    expect(small.stats().requests).toBe(0)
  })
})

describe('ai-proofread and a content filter', () => {
  // Rule: a string whose text the server's content filter refuses fails alone (an Error in its
  // place, naming the filter); the other strings of its request get their verdicts. The request is
  // split in halves down to single strings: at most 2n-1 requests for n strings.
  const refused = (e: unknown) => e instanceof Error && /^ai-proofread: the content filter of the model's server refused this string \(HTTP 400 content_filter\)/.test(e.message)

  it('fails only the string the filter refuses (400 content_filter), not the rest of its request', async () => {
    const cache = memoryCache()
    const { instance, counters } = await setUp({}, { cache })
    fake.setFaults({ contentFilter: { match: 'FORBIDDEN' } })
    const items = [...good(7), item({ translation: 'TODO FORBIDDEN' }, 8)]
    items[2] = item({ source: 'Delete 42 files', translation: 'Supprimer des fichiers' }, 3)
    const results = await instance.checkBatch!(items)
    expect(results.map(refused)).toEqual([false, false, false, false, false, false, false, true])
    expect((results[7] as Error).message).toMatch(/review it by hand$/)
    expect(results.slice(0, 7).map((r) => (r as { code?: string }[]).map((f) => f.code))).toEqual([[], [], ['accuracy'], [], [], [], []])
    // 8 strings, then 4 + 4, 2 + 2, 1 + 1: only the halves holding the refused string are split.
    expect(fake.stats().byStatus).toEqual({ 400: 4, 200: 3 })
    expect(counters['ai.retries']).toBe(6)
    // The verdicts are cached: the next run asks about the refused string alone, once.
    fake.reset()
    fake.setFaults({ contentFilter: { match: 'FORBIDDEN' } })
    const again = await instance.checkBatch!(items)
    expect(again.map(refused)).toEqual(results.map(refused))
    expect(fake.stats().byStatus).toEqual({ 400: 1 })
  })

  it('isolates two refused strings, and a completion the filter cuts (finish_reason content_filter) too', async () => {
    const { instance, counters } = await setUp()
    fake.setFaults({ contentFilter: { match: 'FORBIDDEN', at: 'completion' } })
    const items = [item({ translation: 'FORBIDDEN un' }, 1), ...good(3, 2), item({ translation: 'FORBIDDEN deux' }, 5)]
    const results = await instance.checkBatch!(items)
    expect(results.map((r) => (r instanceof Error ? r.message : r))).toEqual([
      "ai-proofread: the content filter of the model's server refused this string (finish_reason content_filter); it was not reviewed: review it by hand",
      [], [], [],
      "ai-proofread: the content filter of the model's server refused this string (finish_reason content_filter); it was not reviewed: review it by hand",
    ])
    // 5 = 3 + 2 (both refused), 3 = 2 + 1, each 2 = 1 + 1: 9 requests, 6 of them cut; no cut
    // answer is asked again as a malformed one.
    expect(fake.stats().byStatus).toEqual({ 200: 9 })
    expect(counters['ai.errors']).toBe(6)
  })

  it('costs at most 2n-1 requests when the filter refuses every string', async () => {
    const { instance } = await setUp()
    fake.setFaults({ contentFilter: {} })
    const results = await instance.checkBatch!(good(6))
    expect(results.every(refused)).toBe(true)
    expect(fake.stats().byStatus).toEqual({ 400: 11 })
  })

  it('does not split a request refused for another reason', async () => {
    const { instance } = await setUp()
    fake.setFaults({ serverError: { status: 400 } })
    const results = await instance.checkBatch!(good(4))
    expect(results.every((r) => r instanceof Error && /failed \(HTTP 400\)$/.test(r.message))).toBe(true)
    expect(fake.stats().requests).toBe(1)
  })
})

describe('ai-proofread and a model that declines', () => {
  // Rule: a structured-output refusal (content null, the model's words in `refusal`) is the model
  // declining the text, as the content filter refuses it: not a malformed answer asked again as it
  // was, but split like the filter's refusal, so that only the strings declined fail, saying so.
  const declined = `ai-proofread: the model declined to review this string ("I'm sorry, but I can't assist with that request."); it was not reviewed: review it by hand`

  it('fails only the string the model declines, not the rest of its request, and asks nothing again as it was', async () => {
    const cache = memoryCache()
    const { instance, counters } = await setUp({}, { cache })
    fake.setFaults({ refusal: { match: 'FORBIDDEN' } })
    const items = [...good(3), item({ translation: 'TODO FORBIDDEN' }, 4)]
    const results = await instance.checkBatch!(items)
    expect(results.slice(0, 3)).toEqual([[], [], []])
    expect(results[3]).toBeInstanceOf(ModelRefusalError)
    expect((results[3] as Error).message).toBe(declined)
    // 4 strings, then 2 + 2, then 1 + 1: each request once, three of them declined.
    expect(fake.stats().requests).toBe(5)
    expect(counters['ai.errors']).toBe(3)
    // The others' verdicts are cached: the next run asks about the declined string alone, once.
    fake.reset()
    fake.setFaults({ refusal: { match: 'FORBIDDEN' } })
    expect((await instance.checkBatch!(items)).map((r) => (r instanceof Error ? r.message : r))).toEqual([[], [], [], declined])
    expect(fake.stats().requests).toBe(1)
  })
})

describe('ai-proofread and whose key goes where', () => {
  // Rule: the environment's key (OPENAI_API_KEY) goes to the environment's server only
  // (OPENAI_BASE_URL, else OpenAI's); a pipeline's baseUrl elsewhere gets its own apiKey or no key
  // at all. Such a check loads with or without any key in the environment (`switchyard validate`
  // runs where none is set): a self-hosted server may need none, and one that wants a key says so
  // when asked, and the error says which key to give.
  let other: RunningFakeOpenAi
  const otherKeys: unknown[] = []
  beforeAll(async () => { other = await startFakeOpenAi({ onRequest: (_b, h) => { otherKeys.push(h.authorization) } }) })
  afterAll(async () => { await other.stop() })
  beforeEach(() => { other.reset(); otherKeys.length = 0 })

  it("loads a baseUrl elsewhere without an apiKey, with or without keys in the environment, and never sends it the environment's key", async () => {
    for (const env of [{ OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: fake.url }, { OPENAI_API_KEY: 'test-key' }, {}]) {
      const { instance } = await setUp({ baseUrl: other.url, apiKey: ' ' }, { env })
      const [result] = await instance.checkBatch!(good(1))
      expect((result as Error).message, JSON.stringify(env)).toBe("ai-proofread: request to gpt-4o-mini failed (HTTP 401 invalid_api_key): the server wants an API key, and this check sends none: give this check its own key with the apiKey option (OPENAI_API_KEY is sent to the environment's server only)")
    }
    // Asked once each (a 401 is not retried), never with a key: the fake takes any key it is given,
    // and shows the headers of the requests it refuses too.
    expect(other.stats().byStatus).toEqual({ 401: 3 })
    expect(otherKeys).toEqual([undefined, undefined, undefined])
    expect(keys).toEqual([])
    await expect(setUp({ baseUrl: 'not a url' })).rejects.toThrow(/^ai-proofread: the base URL \(the baseUrl option\) "not a url" must start with http:\/\/ or https:\/\//)
  })

  it('reviews with a self-hosted server that needs no key, named by baseUrl or OPENAI_BASE_URL, none in the environment', async () => {
    const keyless = await startFakeOpenAi({ keyRequired: false })
    try {
      const named = await setUp({ baseUrl: keyless.url }, { env: {} })
      expect(await named.checkBatch([item({ translation: 'TODO' })])).toEqual([[expect.objectContaining({ code: 'accuracy' })]])
      const operators = await setUp({}, { env: { OPENAI_BASE_URL: keyless.url } })
      expect(await operators.checkBatch(good(1))).toEqual([[]])
      expect(keyless.stats().byStatus).toEqual({ 200: 2 })
    } finally {
      await keyless.stop()
    }
  })

  it("sends the pipeline's own key to its server, and the environment's key to the environment's server", async () => {
    const own = await setUp({ baseUrl: other.url, apiKey: 'pipeline-key' })
    expect(await own.checkBatch(good(1))).toEqual([[]])
    expect(otherKeys).toEqual(['Bearer pipeline-key'])
    // The environment's server named again (with a trailing slash) is still its own.
    const url = new URL(fake.url)
    const again = await setUp({ baseUrl: `http://${url.hostname}:${url.port}${url.pathname}/` })
    expect(await again.checkBatch(good(1, 5))).toEqual([[]])
    expect(keys).toEqual(['Bearer test-key'])
  })

  it('compares servers by scheme, host and port, and a path inside the environment\'s', () => {
    const home = 'https://gateway.example.com/openai/v1'
    for (const same of [home, `${home}/`, 'HTTPS://Gateway.Example.com:443/openai/v1', `${home}/deployments/x`, 'https://gateway.example.com/openai/v1/../v1']) expect(withinServer(same, home), same).toBe(true)
    for (const elsewhere of [
      'http://gateway.example.com/openai/v1', 'https://gateway.example.com:8443/openai/v1', 'https://evil.example.com/openai/v1',
      'https://gateway.example.com.evil.example/openai/v1', 'https://gateway.example.com@evil.example/openai/v1', 'https://gateway.example.com/openai/v1evil',
      'https://gateway.example.com/other/v1', 'https://gateway.example.com/', 'https://gateway.example.com/openai/v1/..%2F..%2Fother', 'not a url', 'data:,x',
    ]) expect(withinServer(elsewhere, home), elsewhere).toBe(false)
    expect(withinServer('https://api.openai.com/v1', 'https://api.openai.com')).toBe(true)
    expect(withinServer('http://127.0.0.1:8000/v1', 'http://localhost:8000/v1')).toBe(false)
  })
})
