// AI proofreading: a language model reviews each translation (MQM errors and a score) and the
// review becomes findings. Strings are looked up in the cache first, the rest are sent many per
// request; a string the model leaves out is asked again alone, then reported as "no verdict:"; a
// string too long for a request alone is not sent but reported as "not reviewed:"; a request the
// server's content filter refuses, or the model declines, is split until only the refused strings
// fail. Requests and their retries end within the check's time limit.
import { createHash } from 'node:crypto'
import { definePlugin, MAX_TIMER_MS, type FindingInput, type Item, type OptionsOf, type PluginContext, type PluginMetrics } from '../../src/engine/types.js'
import { loadGlossary, type GlossaryTerm } from './glossary.js'
import { DEFAULT_BASE_URL, isForeignServer, isOpenAi, quotable } from './foreign-server.js'
import { ContentFilterError, KEY_FORBIDDEN, ModelClient, ModelRefusalError } from './model-client.js'
import { MQM_SEVERITIES, PROMPT_VERSION, estimateTokens, promptItem, promptLanguage, type MqmSeverity, type PromptItem, type PromptLanguage, type Verdict } from './prompt.js'
import { deadlineAfter, type Deadline } from './time-limit.js'
import { messages, report, verdictToFindings } from './to-findings.js'

export { BudgetExhaustedError } from './token-budget.js'
export { ContentFilterError, ModelRefusalError, ModelRequestError, TimeLimitError } from './model-client.js'

/** How many more times a string left out of an answer is asked about alone. */
export const MISSING_RETRIES = 2

/** The engine's limit of a batch when the pipeline sets no `timeout`: requests and retries for many strings. */
const PLUGIN_TIMEOUT_MS = 600_000

export type AiProofreadOptions = OptionsOf<typeof OPTIONS>

const OPTIONS = {
  type: 'object',
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1, default: 'gpt-4o-mini', description: 'Model name as the server knows it.' },
    baseUrl: { type: 'string', minLength: 1, description: "Base URL of an OpenAI-compatible API (ending in /v1); default OPENAI_BASE_URL, else OpenAI. A server other than the environment's gets `apiKey` or no key: OPENAI_API_KEY is sent to the environment's server only." },
    apiKey: { type: 'string', description: "API key; default OPENAI_API_KEY, for the environment's server only. A `baseUrl` elsewhere that wants a key needs this one; take it from a step setting (`${settings.x}`) rather than writing it into a pipeline, which is often committed." },
    glossary: {
      description: 'Terms to follow: inline, or a CSV file (columns term, translation, note, language) relative to the pipeline file.',
      oneOf: [
        { type: 'string', minLength: 1 },
        {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['term', 'translation'],
            properties: { term: { type: 'string', minLength: 1 }, translation: { type: 'string' }, note: { type: 'string' }, language: { type: 'string' } },
          },
        },
      ],
    },
    instructions: { type: 'string', default: '', description: "The step's instructions for the reviewer (typically ${settings.instructions})." },
    errorAt: { type: 'string', enum: [...MQM_SEVERITIES], default: 'major', description: 'Lowest MQM severity that is an error; one level below is a warning, further below info.' },
    minScore: { type: 'number', minimum: 0, maximum: 100, default: 0, description: 'A score below this is an error as well; 0 ignores the score.' },
    batchSize: { type: 'integer', minimum: 1, maximum: 500, default: 20, description: 'Strings per request, at most.' },
    maxInputTokens: { type: 'integer', minimum: 200, default: 16000, description: 'Estimated prompt tokens per request, at most (about chars/3, a CJK character one each); a batch is split to fit.' },
    concurrency: { type: 'integer', minimum: 1, maximum: 64, default: 4, description: 'Requests in flight at once, at most.' },
    timeoutMs: { type: 'integer', minimum: 100, maximum: MAX_TIMER_MS, default: 60000, description: 'Time limit of one request.' },
    maxRetries: { type: 'integer', minimum: 0, maximum: 10, default: 4, description: 'Retries of a request on 429, 5xx, network errors and timeouts.' },
    retryBaseMs: { type: 'integer', minimum: 1, default: 1000, description: 'First back-off wait when the server names none; doubles each retry (max 30 s).' },
    maxOutputTokens: { type: 'integer', minimum: 0, default: 16384, description: 'Completion tokens per request, at most: 2048 plus 1024 a string (room for a reasoning model\'s thinking), capped at this; 0 sends no limit (the model runs to its own). A server whose context cannot hold the prompt and the limit together is asked once more without it.' },
    tokensPerHour: { type: 'integer', minimum: 0, default: 0, description: 'Prompt+completion tokens per rolling hour; 0 means unlimited.' },
    cacheTtlHours: { type: 'number', minimum: 0, default: 720, description: 'How long a verdict is kept; 0 keeps it forever.' },
  },
} as const

/** One distinct question to the model (identical strings in a batch are asked once). */
interface Ask {
  cacheKey: string
  group: string
  sourceLanguage: PromptLanguage
  targetLanguage: PromptLanguage
  instructions: string
  fields: Omit<PromptItem, 'id'>
  signals: AbortSignal[]
  /** When the engine stops waiting for the batch the string came in. */
  deadline: Deadline
}

/** Aborts once every one of the signals has: a request serves all its strings. */
function allAborted(signals: AbortSignal[]): AbortSignal {
  const distinct = [...new Set(signals)]
  if (distinct.length === 1) return distinct[0]!
  const controller = new AbortController()
  const check = () => { if (distinct.every((s) => s.aborted)) controller.abort(distinct[0]!.reason) }
  for (const s of distinct) s.addEventListener('abort', check, { once: true })
  check()
  return controller.signal
}

/** A string's estimated share of a request's prompt. */
const costOf = (ask: Ask, id = '1') => estimateTokens(JSON.stringify(promptItem(id, ask.fields)))

/**
 * The key for the check's server: the apiKey option, else OPENAI_API_KEY, which goes to the environment's
 * server only (OPENAI_BASE_URL, else OpenAI): a pipeline must not be able to hand the operator's
 * key to a server of its choosing. A server elsewhere without an apiKey gets no key: a
 * self-hosted one may need none, and one that does says so (401) when asked, not when the
 * pipeline loads (`switchyard validate` runs where no key is set). Surrounding whitespace is
 * trimmed; a key with a line break, space or control character inside is refused.
 */
function keyFor(option: string | undefined, env: Record<string, string | undefined>, baseUrl: string | undefined): { apiKey: string | undefined; missingKey: string } {
  const own = option?.trim()
  const foreign = isForeignServer(baseUrl, env.OPENAI_BASE_URL)
  const apiKey = own || (foreign ? undefined : env.OPENAI_API_KEY?.trim()) || undefined
  // The message never quotes the key: it ends up in logs.
  if (apiKey && KEY_FORBIDDEN.test(apiKey)) throw new Error(`ai-proofread: the API key (${own ? 'the apiKey option' : 'OPENAI_API_KEY'}) has a line break, space or control character inside, which no key has; check that its secret holds the key alone on one line`)
  // What to do when the server wants a key and the check has none.
  const missingKey = foreign
    ? "give this check its own key with the apiKey option (OPENAI_API_KEY is sent to the environment's server only)"
    : 'set OPENAI_API_KEY (or the apiKey option)'
  return { apiKey, missingKey }
}

/**
 * The server's base URL: the option, else OPENAI_BASE_URL, else OpenAI's. One without http:// or
 * https:// (`localhost:11434/v1`, which the URL parser reads as the scheme `localhost:`) is refused
 * at load: it failed every request, each string parked with "network error" after the retries.
 */
function baseUrlOf(option: string | undefined, env: Record<string, string | undefined>): string {
  const baseUrl = (option || env.OPENAI_BASE_URL || '').trim() || DEFAULT_BASE_URL
  if (!/^https?:\/\/[^/]/i.test(baseUrl)) {
    const shown = baseUrl.replace(/\/\/[^/@]*@/, '//***@')
    throw new Error(`ai-proofread: the base URL (${option ? 'the baseUrl option' : 'OPENAI_BASE_URL'}) "${shown}" must start with http:// or https:// (e.g. http://localhost:11434/v1)`)
  }
  return baseUrl
}

function instructionsOf(option: string, item: Item): string {
  const fromSettings = typeof item.settings.instructions === 'string' ? item.settings.instructions : ''
  return [...new Set([option.trim(), fromSettings.trim()])].filter(Boolean).join('\n\n')
}

/** Tokens of a request that are not its strings: the system prompt and the request's header (estimated). */
const PROMPT_OVERHEAD = 1200

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)))

/** Why a string refused by the content filter, or declined by the model, failed: its own text, not its request's. */
const refusedAlone = (error: ContentFilterError) => error instanceof ModelRefusalError
  ? new ModelRefusalError(`ai-proofread: the model declined to review this string ("${error.detail}"); it was not reviewed: review it by hand`, error.detail)
  : new ContentFilterError(`ai-proofread: the content filter of the model's server refused this string (${error.detail}); it was not reviewed: review it by hand`, error.detail, error.status)

/**
 * The review of one chunk: its verdicts into `verdicts`, why its strings failed into `failedBy`.
 * A request the server's content filter refuses, or the model declines, is asked again in halves,
 * down to single strings, so that only the refused strings fail: at most 2n-1 requests for a
 * chunk of n (every string refused). A string left out of an answer is asked alone up to MISSING_RETRIES times.
 */
function chunkReviewer(request: (asks: Ask[]) => Promise<Map<string, Verdict>>, remember: (key: string, verdict: Verdict) => Promise<void>, metrics: PluginMetrics) {
  /** A string left out of its request's answer, asked alone up to MISSING_RETRIES times; a failure fails it alone. */
  const askAlone = async (ask: Ask, verdict: Verdict | undefined, verdicts: Map<string, Verdict>, failedBy: Map<string, Error>) => {
    try {
      for (let attempt = 0; !verdict && attempt < MISSING_RETRIES; attempt++) {
        metrics.add('ai.retries')
        verdict = (await request([ask])).get(ask.cacheKey)
      }
    } catch (error) {
      failedBy.set(ask.cacheKey, error instanceof ContentFilterError ? refusedAlone(error) : asError(error))
      return
    }
    if (!verdict) return
    verdicts.set(ask.cacheKey, verdict)
    await remember(ask.cacheKey, verdict)
  }

  const reviewChunk = async (asks: Ask[], verdicts: Map<string, Verdict>, failedBy: Map<string, Error>): Promise<void> => {
    let answered: Map<string, Verdict>
    try {
      answered = await request(asks)
    } catch (error) {
      if (error instanceof ContentFilterError && asks.length > 1) {
        const half = Math.ceil(asks.length / 2)
        metrics.add('ai.retries', 2)
        await Promise.all([reviewChunk(asks.slice(0, half), verdicts, failedBy), reviewChunk(asks.slice(half), verdicts, failedBy)])
        return
      }
      const failure = error instanceof ContentFilterError ? refusedAlone(error) : asError(error)
      for (const ask of asks) failedBy.set(ask.cacheKey, failure)
      return
    }
    await Promise.all(asks.map((ask) => askAlone(ask, answered.get(ask.cacheKey), verdicts, failedBy)))
  }
  return reviewChunk
}

/**
 * The missing-key reasons warned of in this process. A check whose options take a step's settings
 * is created once per settings value (and every check again at a reload): each instance repeated
 * the same warning, one per step using the check.
 */
const warnedMissingKey = new Set<string>()

function warnOfMissingKey(log: PluginContext['log'], missingKey: string): void {
  if (warnedMissingKey.has(missingKey)) return
  warnedMissingKey.add(missingKey)
  log.warn(`ai-proofread: no API key for OpenAI's API; every check will fail until one is given: ${missingKey}`)
}

export default definePlugin({
  name: 'ai-proofread',
  description: 'A language model reviews each translation (MQM errors with severity, span and fix).',
  options: OPTIONS,
  messages,

  needs: ['translation'],
  // A batch may wait for several requests and their retries; the engine's usual limit is for one string.
  timeoutMs: PLUGIN_TIMEOUT_MS,
  async create(options, context) {
    // The system prompt and a request's header take about PROMPT_OVERHEAD tokens of each request:
    // below it (and a little room) no string could be sent, and every one would be "too long".
    if (options.maxInputTokens < PROMPT_OVERHEAD + 100) throw new Error(`ai-proofread: maxInputTokens ${options.maxInputTokens} leaves no room for strings beside the system prompt (about ${PROMPT_OVERHEAD} tokens); set it to 2000 or more`)
    const glossary = await loadGlossary(options.glossary, context.pipelineDir)
    // The URL's form first (http or https), then whether the environment's key may go there.
    const baseUrl = baseUrlOf(options.baseUrl, context.env)
    const { apiKey, missingKey } = keyFor(options.apiKey, context.env, options.baseUrl)
    // A server named by a step setting is chosen by whoever edits the workflow: strings (sources,
    // translations, glossary) go there only with a key given for it, never to any address keyless
    // (an internal one included).
    if (!apiKey && context.settingsOptions?.includes('baseUrl') && isForeignServer(options.baseUrl, context.env.OPENAI_BASE_URL)) {
      throw new Error(`ai-proofread: baseUrl ${quotable(baseUrl)} comes from the step's settings and names a server other than the environment's, and the check has no apiKey for it: strings go to a server a step's settings name only with a key given for it (the apiKey option, from a setting too); or have the operator set OPENAI_BASE_URL to that server`)
    }
    // OpenAI's API answers nothing without a key; another server may need none.
    if (!apiKey && isOpenAi(baseUrl)) warnOfMissingKey(context.log, missingKey)
    // The engine stops waiting for a batch after the check's time limit: requests end before it.
    const limitMs = context.timeoutMs ?? PLUGIN_TIMEOUT_MS
    const client = new ModelClient({
      apiKey, missingKey, baseUrl, model: options.model, timeoutMs: options.timeoutMs, maxRetries: options.maxRetries,
      retryBaseMs: options.retryBaseMs, concurrency: options.concurrency, tokensPerHour: options.tokensPerHour, maxOutputTokens: options.maxOutputTokens,
      metrics: context.metrics, log: context.log,
    })
    const { metrics, cache } = context
    const ttl = options.cacheTtlHours > 0 ? options.cacheTtlHours * 3_600_000 : undefined

    const askFor = (item: Item, deadline: Deadline): Ask => {
      const sourceLanguage = promptLanguage(item.sourceLanguage)
      const targetLanguage = promptLanguage(item.targetLanguage)
      const instructions = instructionsOf(options.instructions, item)
      const terms: GlossaryTerm[] = glossary.termsFor(item.source, item.targetLanguage)
      const fields: Omit<PromptItem, 'id'> = {
        key: item.key, context: item.context, maxLength: item.maxLength, source: item.source, translation: item.translation ?? '',
        plurals: item.plurals?.map((p) => ({ plural: p.plural, text: p.text })), glossary: terms,
      }
      // Everything that can change the verdict, and nothing that cannot (not the threshold).
      const cacheKey = 'ai-proofread:' + createHash('sha256').update(JSON.stringify([
        // The server too: one model name on two self-hosted servers is two models.
        baseUrl, options.model, PROMPT_VERSION, sourceLanguage.code, targetLanguage.code, instructions,
        fields.source, fields.translation, fields.plurals ?? [], terms, fields.key, fields.context, fields.maxLength,
      ])).digest('base64url')
      return { cacheKey, group: JSON.stringify([sourceLanguage, targetLanguage, instructions]), sourceLanguage, targetLanguage, instructions, fields, signals: [item.signal], deadline }
    }

    /** Requests of one language pair and instructions: at most batchSize strings and maxInputTokens (a string over it alone is not asked). */
    const chunksOf = (asks: Ask[]): Ask[][] => {
      const chunks: Ask[][] = []
      let chunk: Ask[] = []
      let tokens = 0
      for (const ask of asks) {
        const cost = costOf(ask, String(chunk.length + 1))
        if (chunk.length && (chunk.length >= options.batchSize || tokens + cost > budgetPerRequest(ask))) {
          chunks.push(chunk)
          chunk = []
          tokens = 0
        }
        chunk.push(ask)
        tokens += cost
      }
      if (chunk.length) chunks.push(chunk)
      return chunks
    }
    // What the system prompt and the instructions take leaves the room for strings.
    const budgetPerRequest = (ask: Ask) => Math.max(1, options.maxInputTokens - PROMPT_OVERHEAD - estimateTokens(ask.instructions))

    const request = async (asks: Ask[]): Promise<Map<string, Verdict>> => {
      const first = asks[0]!
      const answer = await client.review({
        sourceLanguage: first.sourceLanguage,
        targetLanguage: first.targetLanguage,
        instructions: first.instructions,
        items: asks.map((a, i) => promptItem(String(i + 1), a.fields)),
      }, allAborted(asks.flatMap((a) => a.signals)), first.deadline)
      const byKey = new Map<string, Verdict>()
      asks.forEach((a, i) => {
        const verdict = answer.get(String(i + 1))
        if (verdict) byKey.set(a.cacheKey, verdict)
      })
      return byKey
    }

    const remember = async (key: string, verdict: Verdict) => {
      try {
        await cache.set(key, verdict, ttl)
      } catch (error) {
        context.log.warn({ err: error }, 'ai-proofread: could not cache a verdict')
      }
    }

    const reviewChunk = chunkReviewer(request, remember, metrics)

    return {
      async checkBatch(items) {
        // The engine began waiting for this batch now.
        const deadline = deadlineAfter(limitMs)
        const asks = items.map((item) => (item.translation ? askFor(item, deadline) : undefined))
        const verdicts = new Map<string, Verdict>()
        await Promise.all(asks.map(async (ask) => {
          if (!ask || verdicts.has(ask.cacheKey)) return
          try {
            const cached = await cache.get<Verdict>(ask.cacheKey)
            if (cached) verdicts.set(ask.cacheKey, cached)
          } catch (error) {
            context.log.warn({ err: error }, 'ai-proofread: cache read failed; asking the model')
          }
        }))
        for (const ask of asks) if (ask && verdicts.has(ask.cacheKey)) metrics.add('ai.cache.hits')

        // Distinct questions, grouped by what the request header carries.
        const pending = new Map<string, Ask>()
        for (const ask of asks) {
          if (!ask || verdicts.has(ask.cacheKey)) continue
          const seen = pending.get(ask.cacheKey)
          if (seen) seen.signals.push(...ask.signals)
          else pending.set(ask.cacheKey, ask)
        }
        // A string that alone would exceed a request's budget is not sent.
        const tooLong = new Map<string, { tokens: number; max: number }>()
        for (const ask of pending.values()) {
          const tokens = costOf(ask)
          const max = budgetPerRequest(ask)
          if (tokens > max) tooLong.set(ask.cacheKey, { tokens, max })
        }
        for (const key of tooLong.keys()) pending.delete(key)
        const groups = new Map<string, Ask[]>()
        for (const ask of pending.values()) groups.set(ask.group, [...(groups.get(ask.group) ?? []), ask])
        const chunks = [...groups.values()].flatMap(chunksOf)

        // Every chunk runs to its end so its verdicts are cached even when another one fails, and
        // a chunk that fails for good fails its own strings only (an Error in their place), a
        // chunk the content filter refuses only the strings refused: the others of the run keep
        // their verdicts.
        const failedBy = new Map<string, Error>()
        await Promise.all(chunks.map((chunk) => reviewChunk(chunk, verdicts, failedBy)))

        return items.map((item, i): FindingInput[] | Error => {
          const ask = asks[i]
          if (!ask) return []
          const verdict = verdicts.get(ask.cacheKey)
          const failure = failedBy.get(ask.cacheKey)
          if (!verdict && failure) return failure
          const long = tooLong.get(ask.cacheKey)
          if (!verdict && long) return [report('too-long-to-review', long)]
          if (!verdict) return [report('no-verdict', { attempts: MISSING_RETRIES + 1 })]
          return verdictToFindings(verdict, item.translation ?? '', options)
        })
      },
      close: () => client.close(),
    }
  },
})
