// One structured review request to an OpenAI-compatible server, with the bounds around it: at most
// `concurrency` requests in flight (p-queue; waits between retries hold no slot), our own retries
// (the SDK's are off) on 429, 5xx, network errors and timeouts honouring Retry-After, a token
// budget per hour checked before sending, and answers held to the verdict schema.
//
// The SDK is imported, and the answer's validator compiled, on the first request, not when the
// plugin is: every pipeline thread imports every plugin of the pipelines it loads, and the SDK
// alone cost a thread about 86 ms of CPU to import (a fifth of a thread's start), in threads that
// may never run this plugin (the long-text lane starts on a translator's first long text).
import type OpenAI from 'openai'
import { Ajv, type ValidateFunction } from 'ajv'
import PQueue from 'p-queue'
import type { PluginMetrics } from '../../src/engine/types.js'
import type { Logger } from '../../src/util/logger.js'
import { backoffMs, retryAfterMs, sleep } from './backoff.js'
import { PROMPT_VERSION, SYSTEM_PROMPT, VERDICT_SCHEMA, estimateTokens, userMessage, type AnswerVerdict, type PromptItem, type PromptLanguage, type Verdict } from './prompt.js'
import { TokenBudget } from './token-budget.js'

/** How many more times a malformed answer is asked again before the request fails. */
export const MALFORMED_RETRIES = 2
/** A Retry-After longer than this is not waited out: the request fails and on-error decides. */
const MAX_RETRY_AFTER_MS = 120_000

export class ModelRequestError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message)
    this.name = 'ModelRequestError'
  }
}

export interface ModelClientOptions {
  apiKey: string | undefined
  baseUrl: string
  model: string
  timeoutMs: number
  maxRetries: number
  retryBaseMs: number
  concurrency: number
  tokensPerHour: number
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
    if (!verdicts.has(v.id)) verdicts.set(v.id, { score: Math.min(100, Math.max(0, v.score)), errors: v.errors })
  }
  return verdicts
}

/** Whether a failed attempt is worth another, and the wait the server asked for, if any. */
function classify(error: unknown, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError }: Sdk): { retry: boolean; after?: number; reason: string; status?: number } {
  if (error instanceof APIUserAbortError) return { retry: false, reason: 'aborted' }
  if (error instanceof APIConnectionError) return { retry: true, reason: error instanceof APIConnectionTimeoutError ? 'timeout' : 'network error' }
  if (error instanceof APIError) {
    const status = error.status
    const retry = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500
    return { retry, after: retryAfterMs(error.headers), reason: `HTTP ${status ?? '?'}`, status }
  }
  return { retry: false, reason: error instanceof Error ? error.message : String(error) }
}

export class ModelClient {
  private client: OpenAI | undefined
  private readonly queue: PQueue
  private readonly budget: TokenBudget

  constructor(private readonly options: ModelClientOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency })
    this.budget = new TokenBudget(options.tokensPerHour)
  }

  /** Verdicts by id; ids the model left out are simply absent. Throws when the request fails. */
  async review(request: ReviewRequest, signal?: AbortSignal): Promise<Map<string, Verdict>> {
    const { metrics, model } = this.options
    const { apiKey } = this.options
    if (!apiKey) throw new ModelRequestError('ai-proofread: no API key: set OPENAI_API_KEY (or the apiKey option); for a server that needs none, set any placeholder')
    let sdk: Sdk
    try {
      sdk = await loadSdk()
    } catch (error) {
      metrics.add('ai.errors')
      throw error
    }
    // Everything passed explicitly: the SDK would otherwise read OPENAI_* from process.env.
    const client = (this.client ??= new sdk.default({ apiKey, adminAPIKey: null, baseURL: this.options.baseUrl, organization: null, project: null, maxRetries: 0, timeout: this.options.timeoutMs, logLevel: 'off' }))
    const user = userMessage(request)
    const messages = [
      { role: 'system' as const, content: SYSTEM_PROMPT },
      { role: 'user' as const, content: user },
    ]
    const estimate = estimateTokens(SYSTEM_PROMPT + user)
    let transient = 0
    let malformed = 0
    for (;;) {
      signal?.throwIfAborted()
      const settle = this.budget.reserve(estimate)
      let wait: number
      let reason: string
      try {
        metrics.add('ai.requests')
        const completion = await this.queue.add(() => client.chat.completions.create({
          model,
          messages,
          response_format: { type: 'json_schema', json_schema: { name: `proofread_v${PROMPT_VERSION}`, strict: true, schema: VERDICT_SCHEMA as unknown as Record<string, unknown> } },
        }, { signal, timeout: this.options.timeoutMs, maxRetries: 0 }), { signal })
        const tokensIn = completion.usage?.prompt_tokens ?? estimate
        const content = completion.choices[0]?.message.content
        const tokensOut = completion.usage?.completion_tokens ?? estimateTokens(content ?? '')
        settle(tokensIn + tokensOut)
        metrics.add('ai.tokens.in', tokensIn)
        metrics.add('ai.tokens.out', tokensOut)
        const answer = parseAnswer(content)
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
        const c = classify(error, sdk)
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
      metrics.add('ai.retries')
      this.options.log.warn({ reason, waitMs: Math.round(wait) }, 'ai-proofread: retrying model request')
      if (wait > 0) await sleep(wait, signal)
    }
  }

  async close(): Promise<void> {
    this.queue.clear()
    await this.queue.onIdle()
  }
}
