// A stand-in for compiled pipelines in tests of the worker's plumbing (queue, journal, reporter):
// routes a string by a rule given in the test. The real engine is tested in test/engine and
// end to end against the emulator.
import type { Finding, Item } from '../../src/engine/types.js'
import type { PipelineSource, WorkerPipeline } from '../../src/worker.js'

export function fakePipelines(
  key = 'test-step',
  decide: (item: Item) => string | 'retry' = () => 'approved',
  opts: { needsTranslation?: boolean; delayMs?: number; findings?: (item: Item) => Finding[]; issues?: { outputs: string[] } } = {},
): PipelineSource & { runs: number } {
  const state = { runs: 0 }
  const pipeline: WorkerPipeline = {
    key,
    name: 'Test step',
    description: 'test',
    editorMode: 'side-by-side',
    input: ['translated'],
    outputs: [{ name: 'passed', port: 'approved', title: 'Passed' }, { name: 'failed', port: 'translated', title: 'Failed' }],
    needsTranslation: opts.needsTranslation ?? false,
    issues: opts.issues,
    resolveSettings: () => ({ ok: true, settings: {} }),
    async run(items) {
      state.runs++
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs))
      return items.map((item) => {
        const d = decide(item)
        if (d === 'retry') return { id: item.id, port: '', output: null, findings: [], retry: true }
        // The output is named after its port: `translated` is the failed output here.
        return { id: item.id, port: d, output: d === '' ? null : d, findings: opts.findings?.(item) ?? [] }
      })
    },
  }
  const set = { get: (k: string) => (k === key ? pipeline : undefined), all: () => [pipeline], events: () => [], dispatchEvent: async () => {} }
  return { current: set, get runs() { return state.runs } }
}

/** A fetch that plays the status API: records every PATCH, answers 200 (or what `answer` says). */
const STATUS_PATH = /\/projects\/(\d+)\/workflow-steps\/(\d+)\/languages\/([^/]+)\/status$/
const COMMENTS_PATH = /\/projects\/(\d+)\/comments(?:\/(\d+))?$/

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

export function fakeServiceFetch(answer: (req: { method: string; url: string; body: unknown }) => { status: number; body?: unknown; headers?: Record<string, string> } | undefined = () => undefined) {
  const patches: Array<{ url: string; ops: Array<{ path: string; value: string }> }> = []
  const outputs = new Map<string, string>()
  const comments: FakeComment[] = []
  /** Every request, in the order it reached the fake (`METHOD route`), answered or not. */
  const log: string[] = []
  const fetchImpl = (async (input: string | URL, init?: RequestInit) => {
    const url = String(input)
    const method = init?.method ?? 'GET'
    const body = init?.body ? JSON.parse(String(init.body)) : undefined
    const pathname = new URL(url).pathname
    const commentsRoute = COMMENTS_PATH.exec(pathname)
    log.push(`${method} ${commentsRoute ? 'comments' : STATUS_PATH.test(pathname) ? 'status' : pathname}`)
    const custom = answer({ method, url, body })
    if (custom) return new Response(custom.body === undefined ? '' : JSON.stringify(custom.body), { status: custom.status, headers: custom.headers })
    if (commentsRoute) return commentsApi(comments, method, new URL(url), commentsRoute, body)
    const step = STATUS_PATH.exec(pathname)
    if (method === 'PATCH') {
      patches.push({ url, ops: body })
      if (step) for (const op of body as Array<{ path: string; value: string }>) outputs.set(`${step[1]}|${step[2]}|${step[3]}|${op.path.split('/')[1]}`, op.value)
      return new Response(JSON.stringify({ data: [] }), { status: 200 })
    }
    if (step) {
      // A string this fake never saw reported waits (NEED_PROCESS); a reported one is DONE (or TODO for "").
      const query = new URL(url).searchParams
      const ids = (query.get('stringIds') ?? '').split(',').filter(Boolean).map(Number)
      const records = ids.map((stringId) => {
        const output = outputs.get(`${step[1]}|${step[2]}|${step[3]}|${stringId}`)
        return { stringId, languageId: decodeURIComponent(step[3]!), stepId: Number(step[2]), status: output === undefined ? 'NEED_PROCESS' : output === '' ? 'TODO' : 'DONE', output: output ?? '' }
      })
      const wanted = query.get('status')
      return new Response(JSON.stringify({ data: records.filter((r) => !wanted || r.status === wanted).map((data) => ({ data })) }), { status: 200 })
    }
    return new Response(JSON.stringify({ data: [] }), { status: 200 })
  }) as typeof fetch
  return { fetch: fetchImpl, patches, comments, log }
}
