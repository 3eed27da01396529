// A fake OpenAI-compatible chat-completions endpoint, for tests, the demo and benchmarks. It answers
// the ai-proofread plugin's structured requests deterministically: the user message carries the
// strings as a ```json block```; translations that drop a number of the source or contain a marker
// word (XXX, TODO) get a major accuracy error, a double space a minor fluency error, the rest are
// approved. Faults (latency, 429, 5xx, a dropped item, malformed JSON, a hang, a content filter's
// refusal, the model declining) are injected on demand.
import { seededRandom } from './sample-project.js'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import getRawBody from 'raw-body'

/**
 * When a fault applies: to the next `times` requests; or to a fraction `rate` of requests (seeded,
 * so runs repeat); or, with neither, to every request.
 */
export interface FaultRule {
  times?: number
  rate?: number
}

export interface FakeOpenAiFaults {
  /** Added before every answer: fixed ms, or a [min, max] range. */
  latencyMs?: number | [number, number]
  /**
   * Answer 429 with these headers (default `Retry-After: 1`); with `quota`, as OpenAI answers an
   * account out of credit: code `insufficient_quota`, no Retry-After (waiting does not help).
   */
  tooManyRequests?: FaultRule & { retryAfter?: string; retryAfterMs?: number; quota?: boolean }
  /** Answer a 5xx (default 500). */
  serverError?: FaultRule & { status?: number }
  /** Leave an item out of the answer: the first whose source contains `match`, else the last. */
  dropItem?: FaultRule & { match?: string }
  /** Answer 200 with content that is not JSON, or JSON of the wrong shape. */
  malformed?: FaultRule & { kind?: 'not-json' | 'wrong-schema' }
  /** Never answer (until the client gives up, `reset()` or `stop()`). */
  hang?: FaultRule
  /**
   * Send the 200's headers and the first bytes of the completion, then nothing more (a connection
   * or proxy stalled mid-body), until the client gives up, `reset()` or `stop()`.
   */
  stallBody?: FaultRule
  /** Send the 200's headers and the first bytes of the completion, then drop the connection. */
  cutBody?: FaultRule
  /**
   * The model loops (whitespace inside its JSON, as structured output sometimes does) until its
   * output limit: the request's `max_completion_tokens` (or `max_tokens`), else the model's own
   * (`MODEL_MAX_OUTPUT_TOKENS`); the answer stops there with finish_reason "length", billed in full.
   */
  runaway?: FaultRule
  /**
   * Refuse by content filter, as Azure OpenAI does, a request holding a string whose source or
   * translation contains `match` (with no `match`, any request): 400 with code `content_filter`
   * (the prompt filtered; the default), or with `at: 'completion'` a 200 whose answer is cut short
   * with finish_reason `content_filter` (the completion filtered).
   */
  contentFilter?: FaultRule & { match?: string; at?: 'prompt' | 'completion' }
  /**
   * The model declines, as structured outputs let it (OpenAI's "refusal"), a request holding a
   * string whose source or translation contains `match` (with no `match`, any request): a 200
   * whose message has `content: null` and the refusal's words in `refusal`.
   */
  refusal?: FaultRule & { match?: string }
}

/** The output limit of the fake model when a request sets none (gpt-4o-mini's). */
export const MODEL_MAX_OUTPUT_TOKENS = 16_384

export interface FakeOpenAiOptions {
  faults?: FakeOpenAiFaults
  /** Seed of the generator behind `rate` faults and latency ranges. */
  seed?: number
  models?: string[]
  /**
   * The model's context window in tokens: a request whose messages (counted as a BPE tokenizer
   * roughly does: about 4 ASCII characters a token, a token for each other character, as CJK
   * text takes) plus its `max_completion_tokens` exceed it is answered 400
   * `context_length_exceeded`, as OpenAI and vLLM do. No limit when absent.
   */
  contextTokens?: number
  /**
   * false: requests without a key are answered too, as by a self-hosted server started without
   * one (vLLM, Ollama, llama.cpp). Default true: no bearer token, 401 (OpenAI's answer).
   */
  keyRequired?: boolean
  /**
   * Sees each chat-completions body that is JSON and its headers, for tests of what was sent:
   * before the auth check, so the headers of a request answered 401 can be seen too.
   */
  onRequest?: (body: Record<string, unknown>, headers: Record<string, string | string[] | undefined>) => void
}

export interface FakeOpenAiStats {
  /** POST chat/completions received (including those answered with an error). */
  requests: number
  byStatus: Record<number, number>
  /** Strings asked about, over all requests. */
  items: number
  tokensIn: number
  tokensOut: number
  inFlight: number
  maxInFlight: number
}

export interface FakeOpenAi {
  middleware: Koa.Middleware
  stats(): FakeOpenAiStats
  setFaults(faults: FakeOpenAiFaults): void
  /** Zero the stats, clear the faults and release hanging requests. */
  reset(): void
}

export interface RunningFakeOpenAi {
  /** Base URL ending in /v1, as the OpenAI SDK's `baseURL` wants it. */
  url: string
  stop(): Promise<void>
  stats(): FakeOpenAiStats
  setFaults(faults: FakeOpenAiFaults): void
  reset(): void
}

const MARKERS = /\b(XXX|TODO)\b/
const NUMBER = /\d+(?:[.,]\d+)*/g

interface AskedItem { id: string; source: string; translation: string }
interface MqmError { category: string; severity: string; span: string; explanation: string; suggestion: string }

/** The deterministic review of one string. */
export function fakeVerdict(item: AskedItem): { id: string; score: number; errors: MqmError[] } {
  const errors: MqmError[] = []
  const translationNumbers = new Set(item.translation.match(NUMBER) ?? [])
  for (const n of new Set(item.source.match(NUMBER) ?? [])) {
    if (!translationNumbers.has(n)) {
      errors.push({ category: 'accuracy', severity: 'major', span: '', explanation: `the number ${n} of the source is missing`, suggestion: `include ${n}` })
    }
  }
  const marker = MARKERS.exec(item.translation)
  if (marker) {
    errors.push({ category: 'accuracy', severity: 'major', span: marker[0], explanation: `the marker ${marker[0]} stands where a translation should be`, suggestion: '' })
  }
  if (item.translation.includes('  ')) {
    errors.push({ category: 'fluency', severity: 'minor', span: '  ', explanation: 'double space', suggestion: ' ' })
  }
  const score = errors.length === 0 ? 98 : Math.max(0, 100 - errors.reduce((s, e) => s + (e.severity === 'major' ? 30 : 10), 0))
  return { id: item.id, score, errors }
}

/** The ```json block``` of the last user message, as the plugin writes it. */
function askedItems(messages: unknown): AskedItem[] | undefined {
  if (!Array.isArray(messages)) return undefined
  const user = [...messages].reverse().find((m) => m && typeof m === 'object' && (m as { role?: unknown }).role === 'user') as { content?: unknown } | undefined
  const content = typeof user?.content === 'string' ? user.content : undefined
  const block = content && /```json\n([\s\S]*?)\n```/.exec(content)
  if (!block) return undefined
  try {
    const parsed = JSON.parse(block[1]!) as { items?: unknown }
    if (!Array.isArray(parsed.items)) return undefined
    return parsed.items.filter((i): i is AskedItem => !!i && typeof i === 'object' && typeof (i as AskedItem).id === 'string'
      && typeof (i as AskedItem).source === 'string' && typeof (i as AskedItem).translation === 'string')
  } catch {
    return undefined
  }
}


const tokens = (chars: number) => Math.ceil(chars / 4)

/** Tokens of a text as a BPE tokenizer roughly counts them: ASCII about 4 characters a token, any other character one. */
export function realisticTokens(text: string): number {
  let ascii = 0
  let other = 0
  for (const ch of text) if (ch.charCodeAt(0) < 0x80) ascii++; else other++
  return Math.ceil(ascii / 4) + other
}

/** An error answer in OpenAI's shape. */
function fail(ctx: Koa.Context, status: number, message: string, type: string, code: string | null = null): void {
  ctx.status = status
  ctx.body = { error: { message, type, param: null, code } }
}

/** The 400 a model with a context of `contextTokens` gives a request past it (as OpenAI and vLLM word it), if it is past it. */
function contextLengthError(body: Record<string, unknown>, contextTokens: number): string | undefined {
  const messages = Array.isArray(body.messages) ? body.messages as { content?: unknown }[] : []
  const inMessages = messages.reduce((n, m) => n + 4 + (typeof m?.content === 'string' ? realisticTokens(m.content) : 0), 3)
  const completion = [body.max_completion_tokens, body.max_tokens].find((n): n is number => typeof n === 'number') ?? 0
  if (inMessages + completion <= contextTokens) return undefined
  return `This model's maximum context length is ${contextTokens} tokens. However, you requested ${inMessages + completion} tokens (${inMessages} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`
}

/** Whether a string asked about holds `match` in its source or translation (any does when there is no `match`). */
const holding = (items: AskedItem[], match: string | undefined): boolean => match === undefined || items.some((i) => i.source.includes(match) || i.translation.includes(match))

/** What the model says when it declines a request (structured outputs' refusal), as OpenAI's models word it. */
const REFUSAL = "I'm sorry, but I can't assist with that request."

/** A chat completion in OpenAI's shape: the assistant's answer, or its refusal with content null. */
function chatCompletion(n: number, model: unknown, message: { content: string | null; refusal: string | null }, finishReason: string, usage: Record<string, number>) {
  return {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof model === 'string' ? model : 'fake',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: null }],
    usage,
  }
}

/** The 400 of a prompt the content filter refuses, in Azure OpenAI's words and shape. */
function refuseByContentFilter(ctx: Koa.Context): void {
  ctx.status = 400
  ctx.body = {
    error: {
      message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
      type: null, param: 'prompt', code: 'content_filter', status: 400,
      innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: true, severity: 'medium' } } },
    },
  }
}

/**
 * A 200 whose headers and first half go out at once and the rest never does: the connection cut
 * (no `hanging`), or left open until the client goes or the fake is reset (added to `hanging`).
 */
async function sendHalf(ctx: Koa.Context, completion: unknown, hanging: Set<() => void> | undefined): Promise<void> {
  const text = JSON.stringify(completion)
  ctx.respond = false
  ctx.res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' })
  ctx.res.write(text.slice(0, Math.floor(text.length / 2)))
  if (!hanging) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    ctx.res.destroy()
    return
  }
  await new Promise<void>((resolve) => {
    hanging.add(resolve)
    ctx.req.once('close', resolve)
    ctx.res.once('close', resolve)
  })
  ctx.res.destroy()
}

export function createFakeOpenAi(options: FakeOpenAiOptions = {}): FakeOpenAi {
  let random = seededRandom(options.seed ?? 1)
  let faults: FakeOpenAiFaults = structuredClone(options.faults ?? {})
  let stats: FakeOpenAiStats
  let hanging = new Set<() => void>()
  const zero = () => { stats = { requests: 0, byStatus: {}, items: 0, tokensIn: 0, tokensOut: 0, inFlight: 0, maxInFlight: 0 } }
  zero()

  /** Does this fault apply to the current request? Consumes one of its `times`. */
  const applies = (rule: FaultRule | undefined): boolean => {
    if (!rule) return false
    if (rule.times !== undefined) {
      if (rule.times <= 0) return false
      rule.times--
      return true
    }
    if (rule.rate !== undefined) return random() < rule.rate
    return true
  }

  const completions = async (ctx: Koa.Context) => {
    // A request that ends after a `reset()` is counted in the stats it started in, not in those of
    // the next test (an aborted request's latency can outlast its test).
    const mine = stats
    mine.requests++
    mine.inFlight++
    mine.maxInFlight = Math.max(mine.maxInFlight, mine.inFlight)
    try {
      await answer(ctx)
    } finally {
      mine.inFlight--
      mine.byStatus[ctx.status] = (mine.byStatus[ctx.status] ?? 0) + 1
    }
  }

  const answer = async (ctx: Koa.Context) => {
    let body: Record<string, unknown> | undefined
    try {
      const given = (ctx.request as { body?: unknown }).body
      body = given && typeof given === 'object' ? given as Record<string, unknown> : JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: '10mb' })) as Record<string, unknown>
    } catch {
      body = undefined
    }
    // Before the auth check: a test of what a client sends (which key, to which server) must see
    // the request that was refused too. The answers keep OpenAI's order: 401, then 400.
    if (body) options.onRequest?.(body, ctx.headers)
    const auth = ctx.get('authorization')
    if (options.keyRequired !== false && !/^Bearer \S+/.test(auth)) return fail(ctx, 401, 'Missing or empty bearer token.', 'invalid_request_error', 'invalid_api_key')
    if (!body) return fail(ctx, 400, 'The body is not JSON.', 'invalid_request_error')
    const format = body.response_format as { type?: unknown; json_schema?: { name?: unknown; schema?: unknown } } | undefined
    if (format?.type !== 'json_schema' || typeof format.json_schema?.name !== 'string' || typeof format.json_schema.schema !== 'object') {
      return fail(ctx, 400, 'This fake answers only structured requests: response_format must be { type: "json_schema", json_schema: { name, schema } }.', 'invalid_request_error')
    }
    const overContext = options.contextTokens !== undefined ? contextLengthError(body, options.contextTokens) : undefined
    if (overContext) return fail(ctx, 400, overContext, 'invalid_request_error', 'context_length_exceeded')
    const items = askedItems(body.messages)
    if (!items) return fail(ctx, 400, 'No ```json block with an "items" array in the user message.', 'invalid_request_error')
    stats.items += items.length

    if (applies(faults.hang)) {
      await new Promise<void>((resolve) => {
        hanging.add(resolve)
        ctx.req.once('close', resolve)
        ctx.res.once('close', resolve)
      })
      ctx.status = 504
      ctx.body = ''
      return
    }
    const tooMany = faults.tooManyRequests
    if (applies(tooMany)) {
      if (tooMany?.quota) return fail(ctx, 429, 'You exceeded your current quota, please check your plan and billing details.', 'insufficient_quota', 'insufficient_quota')
      ctx.set('Retry-After', tooMany?.retryAfter ?? '1')
      if (tooMany?.retryAfterMs !== undefined) ctx.set('retry-after-ms', String(tooMany.retryAfterMs))
      return fail(ctx, 429, 'Rate limit reached.', 'requests', 'rate_limit_exceeded')
    }
    if (applies(faults.serverError)) return fail(ctx, faults.serverError?.status ?? 500, 'The server had an error.', 'server_error')
    const filtered = holding(items, faults.contentFilter?.match) && applies(faults.contentFilter)
    if (filtered && faults.contentFilter?.at !== 'completion') return refuseByContentFilter(ctx)

    const latency = faults.latencyMs
    const wait = typeof latency === 'number' ? latency : latency ? latency[0] + random() * (latency[1] - latency[0]) : 0
    // Cut short when the client goes away (its request aborted): nothing outlasts its test.
    if (wait > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait)
        ctx.res.once('close', () => { clearTimeout(timer); resolve() })
      })
    }

    let verdicts = items.map(fakeVerdict)
    const drop = faults.dropItem
    if (verdicts.length && (drop?.match === undefined || items.some((i) => i.source.includes(drop.match!))) && applies(drop)) {
      const index = drop?.match !== undefined ? items.findIndex((i) => i.source.includes(drop.match!)) : verdicts.length - 1
      verdicts = verdicts.filter((_, i) => i !== index)
    }
    let content = JSON.stringify({ verdicts })
    const malformed = faults.malformed
    if (applies(malformed)) content = malformed?.kind === 'wrong-schema' ? JSON.stringify({ results: verdicts.map((v) => ({ ...v, score: 'good' })) }) : `Sure! Here is my review: ${content.slice(0, 20)}`

    let finishReason = 'stop'
    // The model declines: no answer at all, only its words saying so.
    const refusal = holding(items, faults.refusal?.match) && applies(faults.refusal) ? REFUSAL : null
    let completionTokens = tokens((refusal ?? content).length)
    if (applies(faults.runaway)) {
      const asked = [body.max_completion_tokens, body.max_tokens].find((n): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0)
      completionTokens = Math.min(asked ?? MODEL_MAX_OUTPUT_TOKENS, MODEL_MAX_OUTPUT_TOKENS)
      // What fits the limit: the answer's start, then whitespace (a few KB of it stand for the rest).
      content = (content.slice(0, 12) + ' '.repeat(4096)).slice(0, completionTokens * 4)
      finishReason = 'length'
    }
    // The completion filtered: the answer stops where the filter cut it.
    if (filtered) [content, finishReason] = [content.slice(0, Math.floor(content.length / 2)), 'content_filter']
    const promptChars = JSON.stringify(body.messages).length
    const usage = { prompt_tokens: tokens(promptChars), completion_tokens: completionTokens, total_tokens: tokens(promptChars) + completionTokens }
    stats.tokensIn += usage.prompt_tokens
    stats.tokensOut += usage.completion_tokens
    ctx.status = 200
    const completion = chatCompletion(stats.requests, body.model, refusal === null ? { content, refusal } : { content: null, refusal }, finishReason, usage)
    const stall = applies(faults.stallBody)
    if (stall || applies(faults.cutBody)) return sendHalf(ctx, completion, stall ? hanging : undefined)
    ctx.body = completion
  }

  // Matched on the path's end so it works mounted under /v1 (prefix stripped) or at the root.
  const middleware: Koa.Middleware = async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path.endsWith('/chat/completions')) return completions(ctx)
    if (ctx.method === 'GET' && /\/models\/?$/.test(ctx.path)) {
      ctx.body = { object: 'list', data: (options.models ?? ['gpt-4o-mini', 'fake-proofreader']).map((id) => ({ id, object: 'model', created: 0, owned_by: 'switchyard-fake' })) }
      return
    }
    await next()
  }

  return {
    middleware,
    stats: () => structuredClone(stats),
    setFaults(f) { faults = structuredClone(f) },
    reset() {
      zero()
      faults = {}
      random = seededRandom(options.seed ?? 1)
      for (const release of hanging) release()
      hanging = new Set()
    },
  }
}

/** The fake on its own loopback server (port chosen by the OS), for tests. */
export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<RunningFakeOpenAi> {
  const fake = createFakeOpenAi(options)
  const app = new Koa()
  app.use(fake.middleware)
  const server: Server = createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats: fake.stats,
    setFaults: fake.setFaults,
    reset: fake.reset,
    async stop() {
      fake.reset()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
