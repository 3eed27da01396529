// A stand-in for compiled pipelines in tests of the worker's plumbing (queue, journal, reporter):
// routes a string by a rule given in the test. The real engine is tested in test/engine and
// end to end against the emulator.
import type { Pipeline, PipelineSource } from '../../src/engine/pipeline.js'
import type { Finding, Item } from '../../src/engine/types.js'
import { contractFake, type ContractFakeOptions } from './contract-fake.js'

export function fakePipelines(
  key = 'test-step',
  decide: (item: Item) => string | 'retry' = () => 'approved',
  opts: { needsTranslation?: boolean; delayMs?: number; findings?: (item: Item) => Finding[]; issues?: { outputs: string[] } } = {},
): PipelineSource & { runs: number } {
  const state = { runs: 0 }
  const pipeline: Pipeline = {
    key,
    name: 'Test step',
    description: 'test',
    editorMode: 'side-by-side',
    file: 'test-step.yaml',
    settingsSchema: { type: 'object', properties: {} },
    input: ['translated'],
    outputs: [{ name: 'passed', port: 'approved', title: 'Passed' }, { name: 'failed', port: 'translated', title: 'Failed' }],
    needsTranslation: opts.needsTranslation ?? false,
    issues: opts.issues,
    resolveSettings: () => ({ ok: true, settings: {} }),
    checkSettings: async () => [],
    timedOut: (id) => ({ id, port: '', output: null, findings: [] }),
    settingsInvalid: (id) => ({ id, port: '', output: null, findings: [] }),
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
  const set = { get: (k: string) => (k === key ? pipeline : undefined), all: () => [pipeline], events: () => [], dispatchEvent: async () => {}, close: async () => {} }
  return { current: set, get runs() { return state.runs } }
}

/**
 * A fetch that plays the service by its contract (test/support/contract-fake.ts): checks every
 * request's wire format, keeps statuses and the string comments API, records each accepted PATCH,
 * answers 200 (or what `answer` says).
 */
export function fakeServiceFetch(answer: ContractFakeOptions['answer'] = () => undefined, options: Omit<ContractFakeOptions, 'answer'> = {}) {
  const fake = contractFake({ ...options, answer })
  return { fetch: fake.fetch, patches: fake.patches, comments: fake.comments, log: fake.log, fake }
}
