// An independent fake of the service, written from the contract (shared/spec/service-interfaces.md
// sections 2.2, 2.7, 4.3-4.5, 5.2 and platform-notes.md "String status endpoints", "Fetching the
// translation text", "OAuth token endpoint"), not from our emulator: tests of the API client,
// reporter and receiver run against it without starting src/emulator.
//
// It is a `fetch` that checks the whole wire format of every request: method, path, query,
// headers (Bearer token, JSON content type on bodies) and body shape. A request that breaks the
// contract is answered as a strict service would (400, 401, 404, 405, 415) and also recorded in
// `violations`; test/setup.ts fails any test that leaves a violation behind, so a broken request
// fails the test even where the worker would shrug the refusal off (retry, park, log).
//
// It keeps state like the service: string statuses per (project, step, language), PATCH moves a
// string to DONE (or TODO with ""), GET filters by status/stringIds and pages with limit/offset
// (a string asked for by id that was never reported is waiting: NEED_PROCESS); string comments;
// translations (plain or plural) per language; access tokens that expire and refresh tokens that
// rotate.

export interface TranslationFixture {
  text?: string
  plurals?: Array<{ plural: string; text: string }>
}

export interface StatusRecord {
  stringId: number
  languageId: string
  stepId: number
  status: string
  output: string
}

export interface RecordedRequest {
  method: string
  url: URL
  headers: Headers
  body: unknown
  /** What the fake answered. */
  status: number
}

export interface RecordedPatch {
  url: string
  projectId: number
  stepId: number
  languageId: string
  ops: Array<{ op: string; path: string; value: string }>
}

export interface ContractFakeOptions {
  /** The API base the worker is configured with (its API_URL, `{organization_domain}` resolved). */
  apiUrl?: string
  /** The authorization server (AUTH_URL). */
  authUrl?: string
  clientId?: string
  clientSecret?: string
  /** Access tokens valid from the start (a StaticTokenProvider's). Default: ['token']. */
  accessTokens?: string[]
  /** Output ports the step declares; a PATCH value outside them (and not "") is a 400. */
  ports?: string[]
  /** Target languages of the step; a PATCH or GET for another language is a 404. */
  languages?: string[]
  /** Target texts by language and string id. */
  translations?: Record<string, Record<number, TranslationFixture>>
  /** Seconds in each token response's expires_in. */
  expiresIn?: number
  /**
   * A hook that answers before the contract checks of the route (faults, custom refusals): return
   * a response to send, or undefined to let the fake answer. It sees only requests whose wire
   * format was valid.
   */
  answer?: (req: { method: string; url: string; body: unknown; headers: Headers }) => { status: number; body?: unknown; headers?: Record<string, string> } | undefined
}

const STATUSES = new Set(['TODO', 'DONE', 'INCOMPLETE', 'NEED_PROCESS', 'FAILED'])
const STATUS_PATH = /^\/api\/v2\/projects\/(\d+)\/workflow-steps\/(\d+)\/languages\/([^/]+)\/status$/
const TRANSLATIONS_PATH = /^\/api\/v2\/projects\/(\d+)\/languages\/([^/]+)\/translations$/
const COMMENTS_PATH = /^\/api\/v2\/projects\/(\d+)\/comments(?:\/(\d+))?$/

/** A comment or issue as the fake service keeps it (platform notes, "String comments"). */
export interface FakeComment {
  id: number
  projectId: number
  stringId: number
  languageId: string
  text: string
  type: 'comment' | 'issue'
  issueType?: string
  issueStatus: 'resolved' | 'unresolved'
}

/** The comments API: POST (201), GET with the platform's filters, PATCH of /issueStatus or /text. */
function commentsApi(comments: FakeComment[], method: string, url: URL, m: RegExpExecArray, body: unknown): Response {
  const projectId = Number(m[1])
  const json = (status: number, data: unknown) => new Response(JSON.stringify(data), { status })
  if (method === 'POST' && !m[2]) {
    const b = body as Partial<FakeComment> & { targetLanguageId?: string }
    if (typeof b?.stringId !== 'number' || typeof b.targetLanguageId !== 'string' || !b.text || (b.type !== 'issue' && b.type !== 'comment')) return json(400, { error: { code: 400, message: 'bad comment' } })
    if (b.type === 'issue' && !['general_question', 'translation_mistake', 'context_request', 'source_mistake'].includes(b.issueType ?? '')) return json(400, { error: { code: 400, message: 'bad issueType' } })
    const c: FakeComment = { id: comments.length + 1, projectId, stringId: b.stringId, languageId: b.targetLanguageId, text: b.text, type: b.type, issueType: b.issueType, issueStatus: 'unresolved' }
    comments.push(c)
    return json(201, { data: c })
  }
  if (method === 'GET' && !m[2]) {
    const q = url.searchParams
    const found = comments.filter((c) => c.projectId === projectId
      && (!q.get('stringId') || c.stringId === Number(q.get('stringId')))
      && (!q.get('type') || c.type === q.get('type'))
      && (!q.get('targetLanguageId') || c.languageId === q.get('targetLanguageId'))
      && (!q.get('issueStatus') || c.issueStatus === q.get('issueStatus')))
    return json(200, { data: found.map((data) => ({ data })), pagination: { offset: 0, limit: 500 } })
  }
  if (method === 'PATCH' && m[2]) {
    const c = comments.find((x) => x.id === Number(m[2]) && x.projectId === projectId)
    if (!c) return json(404, { error: { code: 404, message: 'no such comment' } })
    for (const op of body as Array<{ op: string; path: string; value: string }>) {
      if (op.path === '/issueStatus' && (op.value === 'resolved' || op.value === 'unresolved')) c.issueStatus = op.value
      else if (op.path === '/text') c.text = op.value
      else return json(400, { error: { code: 400, message: `cannot change ${op.path}` } })
    }
    return json(200, { data: c })
  }
  return json(405, { error: { code: 405, message: 'method not allowed' } })
}


const LIVE_FAKES = new Set<{ violations: string[] }>()

/** Violations recorded by any fake of this test file since the last call (test/setup.ts asks after each test). */
export function takeContractViolations(): string[] {
  const out: string[] = []
  for (const fake of LIVE_FAKES) out.push(...fake.violations.splice(0))
  return out
}

export type ContractFake = ReturnType<typeof contractFake>

export function contractFake(options: ContractFakeOptions = {}) {
  // API_URL may hold {organization_domain}: any domain in its place is the API. Without an apiUrl,
  // the API is wherever the worker sends API paths (tests that care about the address give one).
  const apiTemplate = options.apiUrl?.includes('{organization_domain}') ? options.apiUrl : undefined
  const apiBase = new URL((options.apiUrl ?? 'http://127.0.0.1:9').replace('{organization_domain}', 'org'))
  const apiOrigin = apiTemplate
    ? new RegExp(`^${new URL(apiTemplate.replace('{organization_domain}', 'orgdomain')).origin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('orgdomain', '[a-z0-9.-]+')}$`)
    : undefined
  const isApi = (url: URL) => (apiOrigin ? apiOrigin.test(url.origin) : options.apiUrl ? url.origin === apiBase.origin : url.origin !== authBase.origin)
  const authBase = new URL(options.authUrl ?? 'http://auth.test')
  const clientId = options.clientId ?? 'cid'
  const clientSecret = options.clientSecret ?? 'csecret'
  const ports = new Set(options.ports ?? ['approved', 'translated'])
  const languages = options.languages ? new Set(options.languages) : undefined
  const expiresIn = options.expiresIn ?? 7200
  const liveAccess = new Set(options.accessTokens ?? ['token'])
  const liveRefresh = new Set<string>()
  const translations = options.translations ?? {}
  const statuses = new Map<string, StatusRecord & { projectId: number }>()
  let issued = 0

  const violations: string[] = []
  const requests: RecordedRequest[] = []
  const patches: RecordedPatch[] = []
  const tokenRequests: Array<{ contentType: string; body: Record<string, unknown> }> = []
  const comments: FakeComment[] = []
  /** Every API request, in the order it reached the fake (`METHOD status|comments|path`). */
  const log: string[] = []

  const statusKey = (projectId: number, stepId: number, languageId: string, stringId: number) => `${projectId}|${stepId}|${languageId}|${stringId}`

  function issue(): { access_token: string; token_type: string; expires_in: number; refresh_token: string } {
    issued++
    const access = `access-${issued}`
    const refresh = `refresh-${issued}`
    liveAccess.add(access)
    liveRefresh.add(refresh)
    return { access_token: access, token_type: 'bearer', expires_in: expiresIn, refresh_token: refresh }
  }

  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

  /** A broken request: recorded, and answered as a strict service would. */
  function refuse(status: number, what: string, req: { method: string; url: URL }): Response {
    violations.push(`${req.method} ${req.url.pathname}${req.url.search}: ${what}`)
    return json(status, { error: { code: status, message: what } })
  }

  function checkJsonBody(method: string, headers: Headers, raw: string | undefined): string | undefined {
    if (raw === undefined || raw === '') return `${method} without a body`
    const type = headers.get('content-type') ?? ''
    if (!/^application\/json(\s*;.*)?$/i.test(type)) return `a body sent with Content-Type ${JSON.stringify(type || '(none)')}, not application/json`
    return undefined
  }

  function checkBearer(headers: Headers): { ok: true; token: string } | { ok: false; why: string; violation: boolean } {
    const auth = headers.get('authorization')
    if (!auth) return { ok: false, why: 'no Authorization header', violation: true }
    const m = /^Bearer ([^\s]+)$/.exec(auth)
    if (!m) return { ok: false, why: `Authorization is not "Bearer <token>": ${JSON.stringify(auth.slice(0, 12))}...`, violation: true }
    // An expired or unknown token is not a wire-format mistake: the client is expected to refresh.
    if (!liveAccess.has(m[1]!)) return { ok: false, why: 'access token expired or unknown', violation: false }
    return { ok: true, token: m[1]! }
  }

  function intParam(url: URL, name: string, o: { min: number; max?: number }): number | string | undefined {
    const raw = url.searchParams.get(name)
    if (raw === null) return undefined
    if (!/^\d+$/.test(raw)) return `${name}=${raw} is not a non-negative integer`
    const n = Number(raw)
    if (n < o.min || (o.max !== undefined && n > o.max)) return `${name}=${n} is outside ${o.min}..${o.max ?? 'any'}`
    return n
  }

  function stringIdsParam(url: URL, required: boolean): number[] | string | undefined {
    const raw = url.searchParams.get('stringIds')
    if (raw === null) return required ? 'stringIds is required' : undefined
    const parts = raw.split(',')
    if (!parts.every((p) => /^\d+$/.test(p))) return `stringIds=${raw.slice(0, 40)} is not a comma-separated list of integers`
    if (parts.length > 500) return `stringIds holds ${parts.length} ids; at most 500`
    return parts.map(Number)
  }

  function unknownParams(url: URL, allowed: string[]): string | undefined {
    const extra = [...url.searchParams.keys()].filter((k) => !allowed.includes(k))
    return extra.length ? `unknown query parameters ${extra.join(', ')}` : undefined
  }

  function tokenEndpoint(req: { method: string; url: URL }, headers: Headers, raw: string | undefined): Response {
    if (req.method !== 'POST') return refuse(405, `${req.method} on the token endpoint; it takes POST`, req)
    const bad = checkJsonBody('POST', headers, raw)
    if (bad) return refuse(415, bad, req)
    let body: Record<string, unknown>
    try {
      body = JSON.parse(raw!) as Record<string, unknown>
    } catch {
      return refuse(400, 'token request body is not JSON', req)
    }
    tokenRequests.push({ contentType: headers.get('content-type') ?? '', body })
    if (body.client_id !== clientId) return refuse(401, 'token request without the right client_id', req)
    if (body.grant_type === 'refresh_token') {
      // 4.3: client_secret and refresh_token are required on refresh.
      if (body.client_secret !== clientSecret) return refuse(401, 'refresh without the right client_secret', req)
      if (typeof body.refresh_token !== 'string' || !body.refresh_token) return refuse(400, 'refresh without refresh_token', req)
      // Rotation: a retired refresh token is dead. Not a wire-format error, the service's answer.
      if (!liveRefresh.has(body.refresh_token)) return json(400, { error: 'invalid_grant', error_description: 'refresh token is not valid' })
      liveRefresh.delete(body.refresh_token)
      return json(200, issue())
    }
    if (body.grant_type === 'authorization_code') {
      for (const f of ['code', 'redirect_uri']) if (typeof body[f] !== 'string' || !body[f]) return refuse(400, `code exchange without ${f}`, req)
      if (body.client_secret !== clientSecret && typeof body.code_verifier !== 'string') return refuse(400, 'code exchange with neither client_secret nor code_verifier', req)
      return json(200, issue())
    }
    return refuse(400, `unknown grant_type ${JSON.stringify(body.grant_type)}`, req)
  }

  function statusList(records: StatusRecord[]) {
    return { data: records.map((r) => ({ data: { stringId: r.stringId, languageId: r.languageId, stepId: r.stepId, status: r.status, output: r.output } })) }
  }

  function statusRoute(req: { method: string; url: URL }, headers: Headers, raw: string | undefined, m: RegExpExecArray): Response {
    const projectId = Number(m[1])
    const stepId = Number(m[2])
    const languageId = decodeURIComponent(m[3]!)
    if (languages && !languages.has(languageId)) return json(404, { error: { code: 404, message: `language ${languageId} is not among the step's languages` } })
    if (req.method === 'PATCH') {
      if (req.url.search) return refuse(400, 'PATCH with a query string', req)
      const bad = checkJsonBody('PATCH', headers, raw)
      if (bad) return refuse(415, bad, req)
      let ops: unknown
      try {
        ops = JSON.parse(raw!)
      } catch {
        return refuse(400, 'PATCH body is not JSON', req)
      }
      if (!Array.isArray(ops) || ops.length === 0) return refuse(400, 'PATCH body is not a non-empty JSON array of operations', req)
      const seen = new Set<number>()
      for (const [i, op] of ops.entries()) {
        if (!op || typeof op !== 'object' || Array.isArray(op)) return refuse(400, `operation ${i} is not an object`, req)
        const keys = Object.keys(op).sort().join(',')
        if (keys !== 'op,path,value') return refuse(400, `operation ${i} has the fields ${keys}; expected exactly op, path, value`, req)
        const o = op as { op: unknown; path: unknown; value: unknown }
        if (o.op !== 'replace') return refuse(400, `operation ${i} has op ${JSON.stringify(o.op)}; only "replace" is allowed`, req)
        const p = typeof o.path === 'string' ? /^\/(\d+)\/output$/.exec(o.path) : null
        if (!p) return refuse(400, `operation ${i} has path ${JSON.stringify(o.path)}; expected "/<stringId>/output"`, req)
        if (typeof o.value !== 'string') return refuse(400, `operation ${i} has a value that is not a string`, req)
        const id = Number(p[1])
        if (seen.has(id)) return refuse(400, `string ${id} appears twice in one PATCH`, req)
        seen.add(id)
      }
      const custom = options.answer?.({ method: req.method, url: req.url.toString(), body: ops, headers })
      if (custom) return json(custom.status, custom.body, custom.headers)
      const typed = ops as Array<{ op: string; path: string; value: string }>
      // Platform notes: a value naming a port the step does not declare refuses the whole PATCH.
      const undeclared = typed.find((o) => o.value !== '' && !ports.has(o.value))
      if (undeclared) return json(400, { error: { code: 400, message: `output port "${undeclared.value}" is not declared by step ${stepId}` } })
      patches.push({ url: req.url.toString(), projectId, stepId, languageId, ops: typed })
      const changed: StatusRecord[] = []
      for (const o of typed) {
        const stringId = Number(/^\/(\d+)\//.exec(o.path)![1])
        const rec = { projectId, stringId, languageId, stepId, status: o.value === '' ? 'TODO' : 'DONE', output: o.value }
        statuses.set(statusKey(projectId, stepId, languageId, stringId), rec)
        changed.push(rec)
      }
      return json(200, statusList(changed))
    }
    if (req.method === 'GET') {
      if (raw) return refuse(400, 'GET with a body', req)
      const extra = unknownParams(req.url, ['stringIds', 'status', 'limit', 'offset'])
      if (extra) return refuse(400, extra, req)
      const ids = stringIdsParam(req.url, false)
      if (typeof ids === 'string') return refuse(400, ids, req)
      const limit = intParam(req.url, 'limit', { min: 1, max: 500 })
      if (typeof limit === 'string') return refuse(400, limit, req)
      const offset = intParam(req.url, 'offset', { min: 0 })
      if (typeof offset === 'string') return refuse(400, offset, req)
      const status = req.url.searchParams.get('status')
      if (status !== null && !STATUSES.has(status)) return refuse(400, `status=${status} is not one of ${[...STATUSES].join(', ')}`, req)
      const custom = options.answer?.({ method: req.method, url: req.url.toString(), body: undefined, headers })
      if (custom) return json(custom.status, custom.body, custom.headers)
      const wanted = ids ? new Set(ids) : undefined
      const known = [...statuses.values()].filter((r) => r.projectId === projectId && r.stepId === stepId && r.languageId === languageId && (!wanted || wanted.has(r.stringId)))
      // A string asked for by id that the fake holds no record of is one the service sent to the
      // step and still waits for.
      if (wanted) for (const id of wanted) if (!statuses.has(statusKey(projectId, stepId, languageId, id))) known.push({ projectId, stringId: id, languageId, stepId, status: 'NEED_PROCESS', output: '' })
      const all = known.filter((r) => status === null || r.status === status).sort((a, b) => a.stringId - b.stringId)
      const from = offset ?? 0
      return json(200, statusList(all.slice(from, from + (limit ?? 25))))
    }
    return refuse(405, `${req.method} on a status endpoint; it takes GET or PATCH`, req)
  }

  function translationsRoute(req: { method: string; url: URL }, headers: Headers, raw: string | undefined, m: RegExpExecArray): Response {
    if (req.method !== 'GET') return refuse(405, `${req.method} on translations; it takes GET`, req)
    if (raw) return refuse(400, 'GET with a body', req)
    const extra = unknownParams(req.url, ['stringIds', 'limit', 'offset'])
    if (extra) return refuse(400, extra, req)
    const ids = stringIdsParam(req.url, true)
    if (typeof ids === 'string' || !ids) return refuse(400, ids ?? 'stringIds is required', req)
    const limit = intParam(req.url, 'limit', { min: 1, max: 500 })
    if (typeof limit === 'string') return refuse(400, limit, req)
    if (limit !== undefined && limit < ids.length) return refuse(400, `limit=${limit} is smaller than the ${ids.length} ids asked for: the rest would be on a page never fetched`, req)
    const custom = options.answer?.({ method: req.method, url: req.url.toString(), body: undefined, headers })
    if (custom) return json(custom.status, custom.body, custom.headers)
    const languageId = decodeURIComponent(m[2]!)
    const texts = translations[languageId] ?? {}
    const data = ids
      .filter((id) => texts[id] !== undefined)
      .map((id) => {
        const t = texts[id]!
        const common = { stringId: id, translationId: 900_000 + id, user: { id: 1, username: 'translator' }, createdAt: '2026-01-02T00:00:00+00:00' }
        return { data: t.plurals ? { ...common, contentType: 'text/plain', plurals: t.plurals } : { ...common, contentType: 'text/plain', text: t.text ?? '' } }
      })
    return json(200, { data })
  }

  /** The comments API (platform notes, "String comments"): JSON bodies, then the fake's state. */
  function commentsRoute(req: { method: string; url: URL }, headers: Headers, raw: string | undefined, body: unknown, m: RegExpExecArray): Response {
    if (req.method !== 'GET') {
      const bad = checkJsonBody(req.method, headers, raw)
      if (bad) return refuse(415, bad, req)
    }
    const custom = options.answer?.({ method: req.method, url: req.url.toString(), body, headers })
    if (custom) return json(custom.status, custom.body, custom.headers)
    return commentsApi(comments, req.method, req.url, m, body)
  }

  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase()
    const headers = new Headers(init?.headers)
    const raw = init?.body === undefined || init.body === null ? undefined : String(init.body)
    let parsed: unknown = raw
    try {
      parsed = raw ? JSON.parse(raw) : undefined
    } catch {
      /* kept raw */
    }
    const req = { method, url }
    let response: Response
    if (url.origin === authBase.origin && url.pathname === `${authBase.pathname.replace(/\/+$/, '')}/oauth/token`) {
      response = tokenEndpoint(req, headers, raw)
    } else if (!isApi(url)) {
      response = refuse(404, `a request to ${url.origin}, which is neither the API (${apiBase.origin}) nor the authorization server (${authBase.origin})`, req)
    } else {
      const base = apiBase.pathname.replace(/\/+$/, '')
      const local = url.pathname.startsWith(base) ? url.pathname.slice(base.length) : url.pathname
      const statusMatch = STATUS_PATH.exec(local)
      const translationsMatch = TRANSLATIONS_PATH.exec(local)
      const commentsMatch = COMMENTS_PATH.exec(local)
      log.push(`${method} ${commentsMatch ? 'comments' : statusMatch ? 'status' : local}`)
      if (!statusMatch && !translationsMatch && !commentsMatch) {
        response = refuse(404, `no such endpoint: ${local}`, req)
      } else {
        const auth = checkBearer(headers)
        if (!auth.ok) {
          response = auth.violation ? refuse(401, auth.why, req) : json(401, { error: { code: 401, message: auth.why } })
        } else if (statusMatch) {
          response = statusRoute(req, headers, raw, statusMatch)
        } else if (commentsMatch) {
          response = commentsRoute(req, headers, raw, parsed, commentsMatch)
        } else {
          response = translationsRoute(req, headers, raw, translationsMatch!)
        }
      }
    }
    requests.push({ method, url, headers, body: parsed, status: response.status })
    return response
  }) as typeof fetch

  const fake = {
    fetch: fetchImpl,
    violations,
    requests,
    patches,
    tokenRequests,
    comments,
    log,
    /** A token response as from a code exchange, with a live refresh token. */
    issue,
    /** Every access token issued so far stops working (the service's answer becomes 401). */
    expireAccessTokens() {
      liveAccess.clear()
    },
    /** Put strings at the step, as the service holds them. */
    setStatuses(projectId: number, records: StatusRecord[]) {
      for (const r of records) statuses.set(statusKey(projectId, r.stepId, r.languageId, r.stringId), { ...r, projectId })
    },
    statusOf(projectId: number, stepId: number, languageId: string, stringId: number): StatusRecord | undefined {
      return statuses.get(statusKey(projectId, stepId, languageId, stringId))
    },
    /** Refresh grants received. */
    refreshes(): number {
      return tokenRequests.filter((r) => r.body.grant_type === 'refresh_token').length
    },
    /** Requests made to one kind of endpoint. */
    requestsTo(kind: 'status' | 'translations' | 'token', method?: string): RecordedRequest[] {
      const re = kind === 'status' ? /\/status$/ : kind === 'translations' ? /\/translations$/ : /\/oauth\/token$/
      return requests.filter((r) => re.test(r.url.pathname) && (!method || r.method === method))
    },
  }
  LIVE_FAKES.add(fake)
  return fake
}
