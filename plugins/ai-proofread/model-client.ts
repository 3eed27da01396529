// One structured review request to an OpenAI-compatible server, with the bounds around it: at most
// `concurrency` requests in flight (p-queue; waits between retries hold no slot), our own retries
// (the SDK's are off) on 429, 5xx, network errors and timeouts honouring Retry-After, a token
// budget per hour checked before sending (the prompt and the most its answer may take), answers
// held to the verdict schema, and the check's deadline: no attempt, nor wait for a retry or a slot,
// runs past it. A refusal by the server's content filter, or the model declining, is not retried
// (ContentFilterError: the plugin splits the request to find the string refused). close() fails the
// requests still waiting for a slot and lets those in flight finish.
//
// The SDK is imported, and the answer's validator compiled, on the first request, not when the
// plugin is: every pipeline thread imports every plugin of the pipelines it loads, and the SDK
// alone cost a thread about 86 ms of CPU to import (a fifth of a thread's start), in threads that
// may never run this plugin (the long-text lane starts on a translator's first long text).
import type OpenAI from 'openai'
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions'
import { Ajv, type ValidateFunction } from 'ajv'
import PQueue from 'p-queue'
import type { PluginMetrics } from '../../src/engine/types.js'
import type { Logger } from '../../src/util/logger.js'
import { backoffMs, retryAfterMs, sleep } from './backoff.js'
import { isOpenAi } from './foreign-server.js'
import { limitText, seconds, type Deadline } from './time-limit.js'
import { PROMPT_VERSION, SYSTEM_PROMPT, VERDICT_SCHEMA, estimateTokens, userMessage, type AnswerVerdict, type PromptItem, type PromptLanguage, type Verdict } from './prompt.js'
import { TokenBudget } from './token-budget.js'

/** How many more times a malformed answer is asked again before the request fails. */
export const MALFORMED_RETRIES = 2
/**
 * Output tokens a request may use: room for each string's verdict, at most `cap` (0: no limit
 * sent). Without one, a model looping inside its JSON (whitespace, a repeated error) writes until
 * its own limit (16k tokens and more), billed in full, three times over as a malformed answer.
 */
export const maxCompletionTokens = (strings: number, cap: number): number | undefined => (cap > 0 ? Math.min(cap, 2048 + 1024 * strings) : undefined)
/** The default cap of a request's completion tokens (the option maxOutputTokens). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 16384
/**
 * Tokens held in the hour's budget for a request's answer: the completion limit it sends (the
 * most it can be billed), else what that limit would be by default (the model runs to its own:
 * an estimate). Held with the prompt's until the answer's usage settles them.
 */
const answerTokens = (strings: number, sent: number | undefined): number => sent ?? maxCompletionTokens(strings, DEFAULT_MAX_OUTPUT_TOKENS)!
/**
 * The smallest completion limit a request is sent with to fit the hour's budget: a verdict takes
 * some tens of tokens a string, a little more with issues. Below it the request waits for the
 * budget (BudgetExhaustedError) rather than being cut short by its own limit.
 */
export const minAnswerTokens = (strings: number): number => 256 + 128 * strings
/** Time an attempt needs at least (or its whole timeoutMs, if shorter): with less left before the check's deadline, none is started. */
const MIN_ATTEMPT_MS = 1000

/** A 400 saying the prompt and the completion limit do not fit the model's context (OpenAI, vLLM). */
function isContextLengthExceeded(error: unknown, { APIError }: Sdk): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false
  const code = (error as { code?: unknown }).code
  return code === 'context_length_exceeded' || /maximum context length/i.test(error.message)
}

/**
 * A 400 saying the server's content filter refused the prompt: Azure OpenAI's code `content_filter`
 * ("...triggering Azure OpenAI's content management policy"), OpenAI's `content_policy_violation`,
 * or a message about the content or usage policy (OpenAI's `invalid_prompt` for a flagged prompt).
 * The same text is refused every time: retrying it as it is cannot help.
 */
function isContentFiltered(error: unknown, { APIError }: Sdk): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false
  const code = (error as { code?: unknown }).code
  return code === 'content_filter' || code === 'content_policy_violation' || /content[ _-]?filter|content (management )?polic|usage polic/i.test(error.message)
}

/**
 * A signal that aborts when any of `signals` does, and lets go of them on `dispose` (Node 20's
 * AbortSignal.any stays linked to a long-lived signal: 1.2 KB a call, never freed).
 */
function linked(...signals: Array<AbortSignal | undefined>): { signal: AbortSignal; controller: AbortController; dispose(): void } {
  const controller = new AbortController()
  const links: Array<[AbortSignal, () => void]> = []
  for (const s of signals) {
    if (!s) continue
    if (s.aborted) {
      controller.abort(s.reason)
      break
    }
    const abort = () => controller.abort(s.reason)
    s.addEventListener('abort', abort, { once: true })
    links.push([s, abort])
  }
  return { signal: controller.signal, controller, dispose: () => { for (const [s, abort] of links) s.removeEventListener('abort', abort) } }
}
/** A Retry-After longer than this is not waited out: the request fails and on-error decides. */
const MAX_RETRY_AFTER_MS = 120_000

export class ModelRequestError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message)
    this.name = 'ModelRequestError'
  }
}

/**
 * The server's content filter refused the request's text (a 400 `content_filter`, or a completion
 * cut with finish_reason `content_filter`): the same text is refused every time, so it is not
 * retried; the plugin splits the request to find the string(s) refused.
 */
export class ContentFilterError extends ModelRequestError {
  constructor(message: string, readonly detail: string, status?: number) {
    super(message, status)
    this.name = 'ContentFilterError'
  }
}

/**
 * The model declined the request (structured outputs' `refusal`, content null): no malformed
 * answer to ask again, as the same text is declined again; split like the content filter's
 * refusal, so that only the strings declined fail. `detail` holds the model's words.
 */
export class ModelRefusalError extends ContentFilterError {
  constructor(message: string, detail: string) {
    super(message, detail, 200)
    this.name = 'ModelRefusalError'
  }
}

/** The check's time limit is spent, or would be before the next attempt could end: not (again) sent. */
export class TimeLimitError extends ModelRequestError {
  constructor(message: string) {
    super(message)
    this.name = 'TimeLimitError'
  }
}

export interface ModelClientOptions {
  /** None: requests carry no key (a self-hosted server may need none); none is sent to OpenAI's API. */
  apiKey: string | undefined
  /** What to do when a key is wanted and there is none (said in the error). */
  missingKey: string
  baseUrl: string
  model: string
  timeoutMs: number
  maxRetries: number
  retryBaseMs: number
  concurrency: number
  tokensPerHour: number
  /** Cap of a request's completion tokens (default 8192); 0 sends none. */
  maxOutputTokens?: number
  metrics: PluginMetrics
  log: Logger
}

export interface ReviewRequest {
  sourceLanguage: PromptLanguage
  targetLanguage: PromptLanguage
  instructions: string
  items: PromptItem[]
}

type Sdk = typeof import('openai')
let sdkImport: Promise<Sdk> | undefined
/** The SDK; an import that failed is not kept, so the next request tries again. */
function loadSdk(): Promise<Sdk> {
  sdkImport ??= import('openai').catch((error: unknown) => {
    sdkImport = undefined
    throw new ModelRequestError(`ai-proofread: the OpenAI SDK could not be loaded (${error instanceof Error ? error.message : String(error)}); reinstall the worker's dependencies`)
  })
  return sdkImport
}

let answerValidator: ValidateFunction<{ verdicts: AnswerVerdict[] }> | undefined
const validator = () => (answerValidator ??= new Ajv({ strict: false }).compile<{ verdicts: AnswerVerdict[] }>(VERDICT_SCHEMA))

/** The verdicts of an answer by id, or a reason it cannot be used. */
export function parseAnswer(content: string | null | undefined): Map<string, Verdict> | string {
  if (!content) return 'empty answer'
  let parsed: unknown
  try {
    parsed = JSON.parse(content)
  } catch {
    return 'answer is not JSON'
  }
  const validateAnswer = validator()
  if (!validateAnswer(parsed)) return `answer does not follow the schema (${validateAnswer.errors?.[0]?.instancePath || '/'} ${validateAnswer.errors?.[0]?.message ?? ''})`
  const verdicts = new Map<string, Verdict>()
  for (const v of parsed.verdicts) {
    const score = Math.min(100, Math.max(0, v.score))
    const earlier = verdicts.get(v.id)
    // A string answered twice keeps the worse of both: the lower score and every error. Keeping
    // either one alone would let another string's text (an instruction typed into it) put a
    // clean verdict for this id ahead of the real one.
    verdicts.set(v.id, earlier ? { score: Math.min(earlier.score, score), errors: [...earlier.errors, ...v.errors] } : { score, errors: v.errors })
  }
  return verdicts
}

/** What an API key cannot hold: a header with it cannot be built (a secret file of two lines). */
export const KEY_FORBIDDEN = /[\s\p{Cc}\p{Cf}]+/u

/** The message without the key: an error about a header may quote it whole, or one of its lines. */
function withoutKey(message: string, apiKey: string): string {
  const parts = [apiKey, ...apiKey.split(KEY_FORBIDDEN)].filter((p) => p.length >= 4)
  return parts.reduce((m, part) => m.split(part).join('[API key]'), message)
}

/**
 * The completion in a 200's body, or why there is none: a body cut off, a proxy's HTML page, JSON
 * without choices. The SDK's timeout ends with the headers: `stop` aborts the body still coming
 * once the request's time is up (`deadline`), a timeout like one before the headers.
 */
async function readCompletion(response: Response, { APIConnectionError, APIConnectionTimeoutError }: Sdk, deadline: number, stop: AbortController): Promise<ChatCompletion | string> {
  let text: string
  const timer = setTimeout(() => stop.abort(), Math.max(0, deadline - performance.now()))
  try {
    text = await response.text()
  } catch (error) {
    if (stop.signal.aborted) throw new APIConnectionTimeoutError()
    throw new APIConnectionError({ cause: error instanceof Error ? error : undefined })
  } finally {
    clearTimeout(timer)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return `the response is not JSON (${response.headers.get('content-type') || 'no content type'})`
  }
  if (!body || typeof body !== 'object' || !Array.isArray((body as { choices?: unknown }).choices)) return 'the response has no choices'
  return body as ChatCompletion
}

/** Whether a failed attempt is worth another, and the wait the server asked for, if any. */
function classify(error: unknown, apiKey: string, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError }: Sdk): { retry: boolean; after?: number; reason: string; status?: number } {
  if (error instanceof APIUserAbortError) return { retry: false, reason: 'aborted' }
  if (error instanceof APIConnectionError) return { retry: true, reason: error instanceof APIConnectionTimeoutError ? 'timeout' : 'network error' }
  if (error instanceof APIError) {
    const status = error.status
    // An account out of credit is answered 429 too, but waiting does not bring the credit back.
    const quota = (error as { code?: unknown }).code === 'insufficient_quota'
    const retry = !quota && (status === undefined || status === 408 || status === 409 || status === 429 || status >= 500)
    // The API's own error code says what to change (context_length_exceeded, invalid_api_key,
    // insufficient_quota); a code of its own words only, never a quoted text.
    const code = (error as { code?: unknown }).code
    const named = typeof code === 'string' && /^[\w.-]{1,64}$/.test(code) ? ` ${code}` : ''
    return { retry, after: retryAfterMs(error.headers), reason: `HTTP ${status ?? '?'}${named}`, status }
  }
  // Not the SDK's: the request could not be built (a header) or sent; its text may quote the key.
  return { retry: false, reason: withoutKey(error instanceof Error ? error.message : String(error), apiKey) }
}

/** Time left before the check's deadline; without one, no end. */
const timeLeft = (deadline: Deadline | undefined): number => (deadline ? deadline.at - performance.now() : Infinity)

const attemptsText = (n: number): string => `${n} attempt${n === 1 ? '' : 's'}`

/** A model's words as an error quotes them: one line, at most 200 characters. */
const oneLine = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}

/** A token count of an answer's usage, if it is one (a finite number of 0 or more). */
const tokenCount = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)

export class ModelClient {
  private client: OpenAI | undefined
  private readonly queue: PQueue
  private readonly budget: TokenBudget
  /** Requests waiting for a slot; close() aborts them. */
  private readonly waiting = new Set<AbortController>()
  /** Aborted by close(), with the error of the requests that can no longer be sent. */
  private readonly closing = new AbortController()
  /** Set once the server refused the completion limit for its context: no request sends it again. */
  private noCompletionLimit = false

  constructor(private readonly options: ModelClientOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency })
    this.budget = new TokenBudget(options.tokensPerHour)
  }

  /**
   * Verdicts by id; ids the model left out are simply absent. Throws when the request fails. With
   * a `deadline` (the check's), no attempt, nor wait for a slot or a retry, runs past it.
   */
  async review(request: ReviewRequest, signal?: AbortSignal, deadline?: Deadline): Promise<Map<string, Verdict>> {
    const { metrics, model } = this.options
    const { apiKey } = this.options
    // OpenAI's API answers nothing without a key: not asked. Another server may need none.
    if (!apiKey && isOpenAi(this.options.baseUrl)) throw new ModelRequestError(`ai-proofread: no API key for OpenAI's API: ${this.options.missingKey}`)
    this.closing.signal.throwIfAborted()
    let sdk: Sdk
    try {
      sdk = await loadSdk()
    } catch (error) {
      metrics.add('ai.errors')
      throw error
    }
    const client = (this.client ??= this.sdkClient(sdk))
    const user = userMessage(request)
    const messages = [
      { role: 'system' as const, content: SYSTEM_PROMPT },
      { role: 'user' as const, content: user },
    ]
    const estimate = estimateTokens(SYSTEM_PROMPT + user)
    let transient = 0
    let malformed = 0
    let attempts = 0
    // A short check limit (a `timeout` of a second or two) still gets its attempt: half of it at most.
    const minAttemptMs = Math.min(MIN_ATTEMPT_MS, this.options.timeoutMs, deadline ? deadline.limitMs / 2 : Infinity)
    // A server whose context cannot hold the prompt and the completion limit together (a small
    // self-hosted model) is asked once more without the limit.
    let limited = !this.noCompletionLimit && (this.options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) > 0
    for (;;) {
      signal?.throwIfAborted()
      const completionLimit = this.fitted(estimate, request.items.length, limited ? maxCompletionTokens(request.items.length, this.options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) : undefined)
      const settle = this.budget.reserve(estimate + answerTokens(request.items.length, completionLimit))
      let wait: number
      let reason: string
      try {
        const completion = await this.send(async () => {
          // Started only with time left to end before the check's deadline, and cut there.
          // (Whole ms: the SDK refuses a timeout that is not an integer.)
          const timeoutMs = Math.floor(Math.min(this.options.timeoutMs, timeLeft(deadline)))
          if (deadline && timeoutMs < minAttemptMs) throw new TimeLimitError(`ai-proofread: the check's time limit (${limitText(deadline)}) is nearly spent: the request to ${model} was not sent${attempts ? ` again after ${attemptsText(attempts)}` : ''}`)
          attempts++
          metrics.add('ai.requests')
          const body = {
            model,
            messages,
            ...(completionLimit !== undefined ? { max_completion_tokens: completionLimit } : {}),
            response_format: { type: 'json_schema' as const, json_schema: { name: `proofread_v${PROMPT_VERSION}`, strict: true, schema: VERDICT_SCHEMA as unknown as Record<string, unknown> } },
          }
          return this.attempt(client, sdk, body, timeoutMs, signal)
        }, signal, deadline)
        const answer = this.answerOf(completion, estimate, settle)
        if (typeof answer !== 'string') return answer
        metrics.add('ai.errors')
        if (malformed++ >= MALFORMED_RETRIES) throw new ModelRequestError(`ai-proofread: malformed answer from ${model} after ${malformed} attempts: ${answer}`)
        reason = answer
        wait = 0
      } catch (error) {
        settle(0)
        if (error instanceof ModelRequestError) throw error
        if (signal?.aborted) throw signal.reason
        metrics.add('ai.errors')
        if (limited && isContextLengthExceeded(error, sdk)) {
          limited = false
          metrics.add('ai.retries')
          // Said once, and not asked with the limit again: every request would pay a 400 first.
          if (!this.noCompletionLimit) this.options.log.warn('ai-proofread: the model\'s context cannot hold the prompt and the completion limit (maxOutputTokens); asking without the limit from now on')
          this.noCompletionLimit = true
          continue
        }
        const c = classify(error, apiKey ?? '', sdk)
        if (isContentFiltered(error, sdk)) throw new ContentFilterError(`ai-proofread: the content filter of ${model}'s server refused the request (${c.reason})`, c.reason, c.status)
        // A request sent without a key (none is usable for this server) that the server wants one for.
        if (!apiKey && c.status === 401) throw new ModelRequestError(`ai-proofread: request to ${model} failed (${c.reason}): the server wants an API key, and this check sends none: ${this.options.missingKey}`, c.status)
        if (!c.retry || transient >= this.options.maxRetries) {
          throw new ModelRequestError(`ai-proofread: request to ${model} failed (${c.reason})${c.retry ? ` after ${transient + 1} attempts` : ''}`, c.status)
        }
        if (c.after !== undefined && c.after > MAX_RETRY_AFTER_MS) {
          throw new ModelRequestError(`ai-proofread: ${model} asks to wait ${Math.round(c.after / 1000)} s (${c.reason}); not waiting that long`, c.status)
        }
        wait = c.after ?? backoffMs(transient, this.options.retryBaseMs)
        reason = c.reason
        transient++
      }
      // Not waited for when the wait and another attempt would not end before the check's deadline.
      if (deadline && timeLeft(deadline) - wait < minAttemptMs) {
        throw new TimeLimitError(`ai-proofread: request to ${model} failed (${reason}) after ${attemptsText(attempts)}, and another${wait > 0 ? ` after the ${seconds(wait)} wait` : ''} would not end within the check's time limit (${limitText(deadline)}); not tried again`)
      }
      metrics.add('ai.retries')
      this.options.log.warn({ reason, waitMs: Math.round(wait) }, 'ai-proofread: retrying model request')
      if (wait > 0) {
        const waiting = linked(signal, this.closing.signal)
        try {
          await sleep(wait, waiting.signal)
        } finally {
          waiting.dispose()
        }
      }
    }
  }

  /**
   * The completion limit a request is sent with: `wanted`, or less when the hour's budget cannot
   * hold the prompt and that much answer but can hold at least minAnswerTokens of it (a budget of
   * a few thousand tokens an hour still reviews strings; the answer's limit keeps the hour within
   * it). Not lowered without a limit sent (a server that takes none): the reservation then holds
   * the default's worth.
   */
  private fitted(prompt: number, strings: number, wanted: number | undefined): number | undefined {
    if (wanted === undefined) return undefined
    const room = Math.floor(this.budget.room() - prompt)
    return room < wanted && room >= minAnswerTokens(strings) ? room : wanted
  }

  /**
   * The SDK's client, everything passed explicitly: the SDK would otherwise read OPENAI_* from
   * process.env. Without a key, requests carry no Authorization header (the SDK wants a key: the
   * placeholder given is never sent).
   */
  private sdkClient(sdk: Sdk): OpenAI {
    const { apiKey } = this.options
    return new sdk.default({
      apiKey: apiKey ?? 'none', adminAPIKey: null, baseURL: this.options.baseUrl, organization: null, project: null, maxRetries: 0, timeout: this.options.timeoutMs, logLevel: 'off',
      ...(apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    })
  }

  /** One attempt of a request, its body read within `timeoutMs` too. */
  private async attempt(client: OpenAI, sdk: Sdk, body: ChatCompletionCreateParamsNonStreaming, timeoutMs: number, signal: AbortSignal | undefined): Promise<ChatCompletion | string> {
    const deadline = performance.now() + timeoutMs
    // The attempt's own signal: the string's aborts it, and so does the attempt's deadline while
    // its body is read. The SDK never removes the listener it adds to the signal it is given, so
    // it gets this short-lived one, never the string's (which can live as long as the worker).
    const attempt = linked(signal)
    try {
      // The body is read here, not by the SDK: one that is no completion is a malformed answer.
      const response = await client.chat.completions.create(body, { signal: attempt.signal, timeout: timeoutMs, maxRetries: 0 }).asResponse()
      return await readCompletion(response, sdk, deadline, attempt.controller)
    } finally {
      attempt.dispose()
    }
  }

  /** The verdicts of a completion, its tokens counted and settled, or why they cannot be used; a completion the content filter cut, or the model declined, throws. */
  private answerOf(completion: ChatCompletion | string, estimate: number, settle: (tokens: number) => void): Map<string, Verdict> | string {
    if (typeof completion === 'string') {
      settle(0)
      return completion
    }
    const { metrics } = this.options
    const message = completion.choices[0]?.message
    const content = message?.content
    // A server's usage is counted only as a number (one sent as text made the hour's use a string,
    // "0900…", and the budget refused every request after it): else the estimate, as with none.
    const tokensIn = tokenCount(completion.usage?.prompt_tokens) ?? estimate
    const tokensOut = tokenCount(completion.usage?.completion_tokens) ?? estimateTokens(typeof content === 'string' ? content : '')
    settle(tokensIn + tokensOut)
    metrics.add('ai.tokens.in', tokensIn)
    metrics.add('ai.tokens.out', tokensOut)
    // A completion the server's filter cut (Azure OpenAI) is no malformed answer to ask again: the
    // same text is cut every time.
    if (completion.choices[0]?.finish_reason === 'content_filter') {
      metrics.add('ai.errors')
      throw new ContentFilterError(`ai-proofread: the content filter of ${this.options.model}'s server cut the answer (finish_reason content_filter)`, 'finish_reason content_filter', 200)
    }
    // Nor is the model declining (structured outputs' refusal): it declines the same text again.
    const refusal = typeof message?.refusal === 'string' ? oneLine(message.refusal) : ''
    if (refusal) {
      metrics.add('ai.errors')
      throw new ModelRefusalError(`ai-proofread: ${this.options.model} declined the request ("${refusal}")`, refusal)
    }
    return parseAnswer(content)
  }

  /**
   * The task once a slot is free; a request still waiting for one when close() is called, or at
   * the check's deadline, fails at once.
   */
  private async send<T>(task: () => Promise<T>, signal: AbortSignal | undefined, deadline?: Deadline): Promise<T> {
    this.closing.signal.throwIfAborted()
    const waiting = new AbortController()
    this.waiting.add(waiting)
    const late = deadline && setTimeout(() => waiting.abort(new TimeLimitError(`ai-proofread: the check's time limit (${limitText(deadline)}) ran out while the request to ${this.options.model} waited for a free slot (concurrency); it was not sent`)), Math.max(0, deadline.at - performance.now()))
    // Linked for as long as it waits, then let go (see linked()).
    const either = linked(signal, waiting.signal)
    try {
      return await this.queue.add(() => {
        this.waiting.delete(waiting)
        clearTimeout(late)
        return task()
      }, { signal: either.signal })
    } finally {
      clearTimeout(late)
      this.waiting.delete(waiting)
      either.dispose()
    }
  }

  /** Requests waiting for a slot fail at once, none is sent after; those in flight are left to finish. */
  async close(): Promise<void> {
    if (!this.closing.signal.aborted) this.closing.abort(new ModelRequestError('ai-proofread: the check was closed before this request was sent'))
    for (const waiting of this.waiting) waiting.abort(this.closing.signal.reason)
    this.waiting.clear()
    await this.queue.onIdle()
  }
}
