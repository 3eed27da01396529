// A stand-in for compiled pipelines in tests of the worker's plumbing (queue, journal, reporter):
// routes a string by a rule given in the test. The real engine is tested in test/engine and
// end to end against the emulator.
import type { Item } from '../../src/engine/types.js'
import type { PipelineSource, WorkerPipeline } from '../../src/worker.js'

export function fakePipelines(key = 'test-step', decide: (item: Item) => string | 'retry' = () => 'approved', opts: { needsTranslation?: boolean; delayMs?: number } = {}): PipelineSource & { runs: number } {
  const state = { runs: 0 }
  const pipeline: WorkerPipeline = {
    key,
    name: 'Test step',
    description: 'test',
    editorMode: 'side-by-side',
    input: ['translated'],
    outputs: [{ name: 'passed', port: 'approved', title: 'Passed' }, { name: 'failed', port: 'translated', title: 'Failed' }],
    needsTranslation: opts.needsTranslation ?? false,
    resolveSettings: () => ({ ok: true, settings: {} }),
    async run(items) {
      state.runs++
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs))
      return items.map((item) => {
        const d = decide(item)
        return d === 'retry' ? { id: item.id, port: '', output: null, findings: [], retry: true } : { id: item.id, port: d, output: d, findings: [] }
      })
    },
  }
  const set = { get: (k: string) => (k === key ? pipeline : undefined), all: () => [pipeline], events: () => [], dispatchEvent: async () => {} }
  return { current: set, get runs() { return state.runs } }
}

/** A fetch that plays the status API: records every PATCH, answers 200 (or what `answer` says). */
const STATUS_PATH = /\/projects\/(\d+)\/workflow-steps\/(\d+)\/languages\/([^/]+)\/status$/

export function fakeServiceFetch(answer: (req: { method: string; url: string; body: unknown }) => { status: number; body?: unknown; headers?: Record<string, string> } | undefined = () => undefined) {
  const patches: Array<{ url: string; ops: Array<{ path: string; value: string }> }> = []
  const outputs = new Map<string, string>()
  const fetchImpl = (async (input: string | URL, init?: RequestInit) => {
    const url = String(input)
    const method = init?.method ?? 'GET'
    const body = init?.body ? JSON.parse(String(init.body)) : undefined
    const custom = answer({ method, url, body })
    if (custom) return new Response(custom.body === undefined ? '' : JSON.stringify(custom.body), { status: custom.status, headers: custom.headers })
    const step = STATUS_PATH.exec(new URL(url).pathname)
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
  return { fetch: fetchImpl, patches }
}
