// The service's API, as the worker uses it: string statuses (4.4, 4.5) and translations (platform
// notes). At most `maxInFlight` requests per organization (the service allows 20 at once), 429
// honoured with Retry-After, 5xx/network errors/timeouts retried with exponential back-off and
// full jitter, 401 answered by one refresh and one retry, a bounded number of attempts.
import PQueue from 'p-queue'
import { apiUrlFor, type Config } from '../config/load-config.js'
import type { Logger } from '../util/logger.js'
import { redactSecrets } from '../util/redact-secrets.js'
import { parseRetryAfter, RETRY_AFTER_MAX_MS } from '../util/retry-after.js'
import { createHttpTransport, type Transport } from './http-transport.js'
import type { TokenProvider } from './token-provider.js'

/** The transport every client without its own shares (its connections are kept alive between requests). */
let shared: Transport | undefined

export class ApiError extends Error {
  /** How long the service asked to wait before the next try (its Retry-After), if it did (ms). */
  retryAfterMs?: number

  /**
   * An attempt of this request (this one or an earlier) ended with no word on its outcome (no
   * answer, a timeout, a 5XX, a 2XX that was no answer): the service may have applied it, though
   * the last attempt was refused.
   */
  mayHaveApplied = false

  constructor(readonly status: number, readonly body: string, readonly method: string, readonly path: string, readonly attempts: number) {
    super(`${method} ${path} answered ${status}${body ? `: ${body.slice(0, 300)}` : ''}`)
    this.name = 'ApiError'
  }
  /** The request itself was refused (bad port, unknown language): retrying won't help. */
  get permanent(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429
  }
}

/** Errors other than ApiError (no token after a retry's wait) of a request that may have been applied. */
const appliedUnknown = new WeakSet<object>()

/** A rejection handler that throws the error on, remembered as of a request that may have been applied when `unknown`. */
const markUnknown = (unknown: boolean) => (error: unknown): never => {
  if (unknown && typeof error === 'object' && error !== null) appliedUnknown.add(error)
  throw error
}

/**
 * Whether the request that failed with `error` may have been applied all the same: an attempt
 * before the last ended with no word on its outcome (ApiError.mayHaveApplied), or the token for
 * the next attempt failed after one did.
 */
export function mayHaveApplied(error: unknown): boolean {
  if (error instanceof ApiError) return error.mayHaveApplied
  return typeof error === 'object' && error !== null && appliedUnknown.has(error)
}

export interface ApiObserver {
  request?(info: { method: string; route: string; status: number; ms: number; domain: string }): void
  retry?(info: { reason: string; delayMs: number; domain: string }): void
}

export interface PatchOperation {
  op: 'replace'
  path: string
  value: string
}

/** How one request is sent: its place in the organization's queue and its own attempt budget. */
export interface RequestOptions {
  /** Higher goes first among requests waiting for a slot; status updates and reads use 0. */
  priority?: number
  /** Attempts of this request (default API_MAX_ATTEMPTS). */
  maxAttempts?: number
  /**
   * false for a request that must not be sent twice (a POST that creates): only answers that say it
   * was not applied (429, 401 before the refresh) are retried; a 5XX, timeout or network error is
   * thrown at once, for the caller to find out what happened.
   */
  idempotent?: boolean
  /**
   * The longest wait between attempts this request takes in place (ms): a back-off or Retry-After
   * longer than this ends the attempts and throws, for the caller to try again later instead of
   * keeping a work slot asleep (process-jobs.ts).
   */
  maxWaitMs?: number
  /**
   * false: an attempt that timed out (API_TIMEOUT_MS) ends the attempts and throws: an API that
   * hangs would keep a work slot for one timeout per attempt (process-jobs.ts).
   */
  retryTimeouts?: boolean
  /** The answer's body is not read as JSON (a status update's: nothing in it is used). */
  ignoreBody?: boolean
}

/** A comment or issue on a string (platform notes, "String comments"). */
export interface StringComment {
  id: number
  text: string
  stringId: number
  languageId?: string
  type: 'comment' | 'issue'
  issueType?: string
  issueStatus?: 'resolved' | 'unresolved'
}

export interface TranslationRecord {
  stringId: number
  text?: string
  plurals?: Array<{ plural: string; text: string }>
}

export interface ApiClientOptions {
  config: Pick<Config, 'apiUrl' | 'apiMaxInFlight' | 'apiMaxAttempts' | 'apiTimeoutMs'>
  tokens: TokenProvider
  log: Logger
  observer?: ApiObserver
  /** Instead of the http transport (http-transport.ts): a fetch (tests script answers with one). */
  fetch?: typeof fetch
  /** Longest single back-off, ms. */
  maxDelayMs?: number
  baseDelayMs?: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Open issues asked for per page (the comments API's largest `limit`), and pages read at most (10,000 issues). */
const ISSUE_PAGE = 500
const ISSUE_PAGES_MAX = 20

/**
 * The `data` list of a 2XX answer to a GET. One without it says nothing of what was asked: thrown as
 * an answer that did not come (status 0), never read as empty: the caller's own rules for a failed
 * read apply (a group's translations are tried again later; an issue look-up counts as failed, and
 * the catch-up or the string's next outcome looks again).
 */
function listOf<T>(body: { data?: T[] } | undefined, what: string, path: string): T[] {
  if (Array.isArray(body?.data)) return body.data
  throw new ApiError(0, `answered without a list of ${what}: ${redactSecrets(JSON.stringify(body)?.slice(0, 2000) ?? '', []).slice(0, 200)}`, 'GET', path, 1)
}

export class ApiClient {
  private readonly limiters = new Map<string, PQueue>()
  private readonly doFetch: Transport
  private readonly maxDelayMs: number
  private readonly baseDelayMs: number

  constructor(private readonly options: ApiClientOptions) {
    this.doFetch = (options.fetch as unknown as Transport | undefined) ?? (shared ??= createHttpTransport())
    this.maxDelayMs = options.maxDelayMs ?? 30_000
    this.baseDelayMs = options.baseDelayMs ?? 200
  }

  private limiter(domain: string): PQueue {
    let q = this.limiters.get(domain)
    if (!q) {
      q = new PQueue({ concurrency: this.options.config.apiMaxInFlight })
      this.limiters.set(domain, q)
    }
    return q
  }

  /** Requests in flight for an organization right now. */
  inFlight(domain: string): number {
    return this.limiters.get(domain)?.pending ?? 0
  }

  private backoff(attempt: number): number {
    const cap = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** attempt)
    return Math.round(cap / 2 + Math.random() * (cap / 2))
  }

  async request<T>(domain: string, method: string, path: string, route: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const url = `${apiUrlFor(this.options.config, domain)}${path}`
    const maxAttempts = options.maxAttempts ?? this.options.config.apiMaxAttempts
    let token = await this.options.tokens.getAccessToken(domain)
    let refreshed = false
    let lastError: ApiError | Error | undefined
    // Whether an attempt so far may have been applied (see ApiError.mayHaveApplied).
    let unknown = false
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      let delay = 0
      // The slot is held only for the request itself, never while backing off, so the limit
      // counts real requests in flight.
      const outcome = await this.limiter(domain).add(async () => {
        const started = performance.now()
        try {
          const response = await this.doFetch(url, {
            method,
            headers: {
              authorization: `Bearer ${token}`,
              accept: 'application/json',
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(this.options.config.apiTimeoutMs),
          })
          const text = await response.text()
          this.options.observer?.request?.({ method, route, status: response.status, ms: performance.now() - started, domain })
          return { status: response.status, text, retryAfter: response.headers.get('retry-after'), timedOut: false }
        } catch (error) {
          this.options.observer?.request?.({ method, route, status: 0, ms: performance.now() - started, domain })
          return { status: 0, text: (error as Error).message, retryAfter: null, timedOut: (error as Error).name === 'TimeoutError' }
        }
      }, { priority: options.priority ?? 0 })
      if (!outcome) throw new Error('request dropped by the limiter')
      const { text, retryAfter, timedOut } = outcome
      let status = outcome.status
      let reason = status === 0 ? `network error: ${text}` : text
      if (status >= 200 && status < 300) {
        if (!text || options.ignoreBody) return undefined as T
        try {
          return JSON.parse(text) as T
        } catch (error) {
          // A 2XX whose body is not JSON (a proxy's page, an answer cut short) is no answer: tried
          // again like a network error, never taken as a refusal of the strings.
          status = 0
          reason = `answer ${outcome.status} was not JSON (${(error as Error).message}): ${redactSecrets(text.slice(0, 100 + token.length), [token]).slice(0, 100)}`
        }
      }
      // An answer may quote what was sent (the Authorization header): the token, and anything
      // shaped like a credential, go before the text reaches the ApiError, the log or the operator page.
      reason = redactSecrets(reason, [token])
      const failed = new ApiError(status, reason, method, path, attempt + 1)
      if (status === 0 || status === 408 || status >= 500) unknown = true
      failed.mayHaveApplied = unknown
      const asked = parseRetryAfter(retryAfter)
      if (asked !== undefined) failed.retryAfterMs = Math.min(asked, RETRY_AFTER_MAX_MS)
      lastError = failed
      if (status === 401 && !refreshed) {
        refreshed = true
        token = await this.options.tokens.refreshAfterUnauthorized(domain, token).catch(markUnknown(unknown))
        attempt--
        continue
      }
      if (status === 429) delay = asked ?? this.backoff(attempt)
      else if (options.idempotent === false) throw lastError
      else if (status === 0 || status === 408 || status >= 500) delay = asked ?? this.backoff(attempt)
      else throw lastError
      if (attempt + 1 >= maxAttempts || (timedOut && options.retryTimeouts === false)) break
      // A wait the service asks for is honoured whole (platform notes): one longer than this client
      // waits between attempts ends them, and the caller waits it out (the hold, the strings' own
      // back-off, the next sweep: each keeps `retryAfterMs`), never sending before it is over.
      if (asked !== undefined && asked > this.maxDelayMs) break
      delay = Math.min(delay, this.maxDelayMs)
      if (options.maxWaitMs !== undefined && delay > options.maxWaitMs) break
      this.options.observer?.retry?.({ reason: status === 0 ? 'network' : String(status), delayMs: delay, domain })
      this.options.log.debug({ domain, route, status, delay, attempt: attempt + 1 }, 'api request will be retried')
      await sleep(delay)
      // A long wait may outlive the token: take the current one.
      token = await this.options.tokens.getAccessToken(domain).catch(markUnknown(unknown))
    }
    throw lastError ?? new Error(`${method} ${path} failed`)
  }

  patchStatuses(domain: string, projectId: number, stepId: number, languageId: string, ops: PatchOperation[]): Promise<unknown> {
    const path = `/api/v2/projects/${projectId}/workflow-steps/${stepId}/languages/${encodeURIComponent(languageId)}/status`
    // A 2XX is all that matters: a body that is not JSON (or a large one) must not make an applied
    // update look failed.
    // Not sent again blindly after an answer that says nothing of its outcome (5XX, timeout,
    // network): the update may have landed, and the string may since have come back to the step
    // (sent back, fixed): the same PATCH would give the new arrival the old arrival's output. The
    // reporter holds such strings with `mayHaveLanded`, and the service is asked first.
    return this.request(domain, 'PATCH', path, 'status.patch', ops, { ignoreBody: true, idempotent: false })
  }

  async getStatuses(
    domain: string, projectId: number, stepId: number, languageId: string,
    query: { status?: string; stringIds?: number[]; limit?: number; offset?: number } = {},
    options?: RequestOptions,
  ): Promise<Array<{ stringId: number; languageId: string; stepId: number; status: string; output: string }>> {
    const params = new URLSearchParams()
    if (query.status) params.set('status', query.status)
    params.set('limit', String(query.limit ?? 500))
    params.set('offset', String(query.offset ?? 0))
    // Whole numbers joined by literal commas ("comma-separated", platform notes), as the
    // translations call sends them; URLSearchParams would write %2C.
    const ids = query.stringIds?.length ? `stringIds=${query.stringIds.map((id) => Math.trunc(id)).join(',')}&` : ''
    const path = `/api/v2/projects/${projectId}/workflow-steps/${stepId}/languages/${encodeURIComponent(languageId)}/status?${ids}${params}`
    const body = await this.request<{ data?: Array<{ data: { stringId: number; languageId: string; stepId: number; status: string; output: string } }> }>(domain, 'GET', path, 'status.get', undefined, options)
    // Taken as "none of them waits", an answer without the list would forget the strings.
    return listOf(body, 'statuses', path).map((d) => d?.data).filter((d) => d && typeof d.stringId === 'number')
  }

  /** Target texts of up to any number of strings, 500 ids a call. */
  async getTranslations(domain: string, projectId: number, languageId: string, stringIds: number[], options?: RequestOptions): Promise<Map<number, TranslationRecord>> {
    const out = new Map<number, TranslationRecord>()
    for (let i = 0; i < stringIds.length; i += 500) {
      const ids = stringIds.slice(i, i + 500)
      const path = `/api/v2/projects/${projectId}/languages/${encodeURIComponent(languageId)}/translations?stringIds=${ids.join(',')}&limit=500`
      const body = await this.request<{ data?: Array<{ data: TranslationRecord }> }>(domain, 'GET', path, 'translations.get', undefined, options)
      // Taken as "no translations", an answer without the list would check every string as untranslated.
      for (const d of listOf(body, 'translations', path)) if (d?.data && typeof d.data.stringId === 'number') out.set(d.data.stringId, d.data)
    }
    return out
  }

  /** Raise an issue (or a comment) on a string in one target language. */
  async createComment(
    domain: string, projectId: number,
    comment: { stringId: number; targetLanguageId: string; text: string; type: 'comment' | 'issue'; issueType?: string },
    options?: RequestOptions,
  ): Promise<StringComment> {
    const body = await this.request<{ data?: StringComment }>(domain, 'POST', `/api/v2/projects/${projectId}/comments`, 'comments.post', comment, { ...options, idempotent: false })
    if (!body?.data || typeof body.data.id !== 'number') throw new Error('POST comments answered without a comment id')
    return body.data
  }

  /** Unresolved issues of a string in one target language (the first 500). */
  async listOpenIssues(domain: string, projectId: number, stringId: number, languageId: string, options?: RequestOptions): Promise<StringComment[]> {
    // Page by page (limit 500, offset): a string with more open issues than one page (reviewers'
    // ones) may hold the worker's own on a later page. An answer without a list is no answer (as
    // for every read here): read as "none open", it would have the worker forget its open issues,
    // or raise one again.
    const out: StringComment[] = []
    const seen = new Set<number>()
    for (let page = 0; page < ISSUE_PAGES_MAX; page++) {
      const params = new URLSearchParams({ stringId: String(stringId), type: 'issue', targetLanguageId: languageId, issueStatus: 'unresolved', limit: String(ISSUE_PAGE), offset: String(page * ISSUE_PAGE) })
      const path = `/api/v2/projects/${projectId}/comments?${params}`
      const rows = listOf(await this.request<{ data?: Array<{ data: StringComment }> }>(domain, 'GET', path, 'comments.get', undefined, options), 'comments', path)
      let fresh = 0
      for (const row of rows) {
        const c = row?.data
        if (!c || typeof c.id !== 'number' || seen.has(c.id)) continue
        seen.add(c.id)
        out.push(c)
        fresh++
      }
      // A short page is the last; so is one with nothing new (a service that ignores offset).
      if (rows.length < ISSUE_PAGE || fresh === 0) break
    }
    return out
  }

  /** Mark an issue resolved. */
  resolveIssue(domain: string, projectId: number, commentId: number, options?: RequestOptions): Promise<unknown> {
    return this.request(domain, 'PATCH', `/api/v2/projects/${projectId}/comments/${commentId}`, 'comments.patch', [{ op: 'replace', path: '/issueStatus', value: 'resolved' }], options)
  }
}
