// ai-proofread in a pipeline, against the fake OpenAI server: the engine's time limit and a
// pipeline loaded where no key is set. The engine stops waiting for a batch at the check's
// `timeout` and fails every string of it (plugin-timed-out), those already answered too: the
// plugin ends its requests, retries and waits for a slot before that, failing only the strings it
// could not review in time, saying so. A check naming a server of its own without an apiKey loads
// with or without keys in the environment (`switchyard validate` in a CI has none).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { runValidate } from '../../src/cli/validate.js'
import { startFakeOpenAi, type RunningFakeOpenAi } from '../../src/emulator/fake-openai.js'
import type { PipelineSet } from '../../src/engine/load-pipelines.js'
import type { RunResult } from '../../src/engine/run-pipeline.js'
import { captureIo } from '../cli/io.js'
import { items, loadOne, pipelineYaml, testDeps, writePipelines } from '../engine/helpers.js'

let fake: RunningFakeOpenAi
beforeAll(async () => { fake = await startFakeOpenAi() })
afterAll(async () => { await fake.stop() })
beforeEach(() => fake.reset())

const open: PipelineSet[] = []
afterEach(async () => { await Promise.all(open.splice(0).map((s) => s.close(0))) })

/** The pipeline `t`, whose one check is ai-proofread with these options and `timeout` (ms), against the fake. */
async function proofreading(options: string, timeout: number) {
  const yaml = pipelineYaml(`checks:\n  - uses: ai-proofread\n    timeout: ${timeout}\n    with: ${options}\nroute:\n  - to: passed\n`)
  const { set } = await loadOne(yaml, testDeps({ env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: fake.url } }))
  open.push(set)
  return set.get('t')!
}

const strings = (n: number, word = 'Save') => items(Array.from({ length: n }, (_, i) => ({ source: `${word} ${i + 1} files`, translation: `Enregistrer ${i + 1} fichiers` })))
/** Each string's finding codes, joined. */
const outcomes = (results: RunResult[]) => results.map((r) => r.findings.map((f) => f.code).join())

describe("ai-proofread within the check's timeout", () => {
  it('fails at once a string whose retry would end past the timeout, saying so; the rest of the batch keeps its verdicts', async () => {
    const run = await proofreading('{ batchSize: 1, concurrency: 1 }', 3000)
    // The first request (the first string's) is asked to wait 10 s: more than the check has.
    fake.setFaults({ tooManyRequests: { times: 1, retryAfter: '10' } })
    const results = await run.run(strings(2))
    expect(outcomes(results)).toEqual(['plugin-threw', ''])
    expect(results[0]!.findings[0]!.message).toMatch(/request to gpt-4o-mini failed \(HTTP 429 rate_limit_exceeded\) after 1 attempt, and another after the 10 s wait would not end within the check's time limit \(3 s\); not tried again$/)
    expect(fake.stats().requests).toBe(2)
  })

  it('sends its request within a short timeout (1 s) too', async () => {
    const run = await proofreading('{ batchSize: 1 }', 1000)
    expect(outcomes(await run.run(strings(1)))).toEqual([''])
    expect(fake.stats().requests).toBe(1)
  })

  it('ends a request still unanswered at the timeout itself, failing its own strings only', async () => {
    const run = await proofreading('{ batchSize: 1, concurrency: 2 }', 3000)
    // One of the two requests is never answered; its own timeoutMs (60 s) is past the check's.
    fake.setFaults({ hang: { times: 1 } })
    const results = await run.run(strings(2))
    expect([...outcomes(results)].sort()).toEqual(['', 'plugin-threw'])
    const failed = results.find((r) => r.findings.length)!
    expect(failed.findings[0]!.message).toMatch(/request to gpt-4o-mini failed \(timeout\) after 1 attempt, and another .*would not end within the check's time limit \(3 s\); not tried again$/)
  })

  it("does not let a request wait for a slot past its batch's timeout while a later batch holds it", async () => {
    const run = await proofreading('{ concurrency: 1 }', 6000)
    // The first batch's request is asked to wait 2 s (a wait holds no slot); a second batch,
    // started 1 s later, takes the slot with a request that hangs until that batch's own limit.
    fake.setFaults({ tooManyRequests: { times: 1, retryAfter: '2' } })
    const first = run.run(strings(1))
    await vi.waitFor(() => expect(fake.stats().byStatus[429]).toBe(1), { timeout: 10_000, interval: 5 })
    fake.setFaults({ hang: {} })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const second = run.run(strings(1, 'Open'))
    const [waited, hung] = await Promise.all([first, second])
    expect(waited[0]!.findings).toEqual([expect.objectContaining({ code: 'plugin-threw', message: expect.stringMatching(/the check's time limit \(6 s\) ran out while the request to gpt-4o-mini waited for a free slot \(concurrency\); it was not sent$/) })])
    expect(outcomes(hung)).toEqual(['plugin-threw'])
  })
})

describe('ai-proofread naming a server of its own without an apiKey', () => {
  it('passes `switchyard validate` with no key in the environment, or only the operator\'s', async () => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml("checks:\n  - uses: ai-proofread\n    with: { baseUrl: 'http://127.0.0.1:9/v1' }\nroute:\n  - to: passed\n") })
    for (const env of [{}, { OPENAI_API_KEY: 'operator-key' }]) {
      const io = captureIo(env)
      expect(await runValidate(paths, io), io.out()).toBe(0)
    }
  })

  it("sends a server from a step's settings the step's key when it has one, else nothing: never the operator's key, never keyless", async () => {
    const sent: unknown[] = []
    const theirs = await startFakeOpenAi({ onRequest: (_b, h) => { sent.push(h.authorization) } })
    try {
      const env = { OPENAI_API_KEY: 'operator-key', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }
      const settings = 'settings:\n  properties:\n    server: { type: string, format: uri }\n    key: { type: string }\n'
      const { set } = await loadOne(pipelineYaml("checks:\n  - uses: ai-proofread\n    with: { baseUrl: '${settings.server}', apiKey: '${settings.key}', retryBaseMs: 1 }\nroute:\n  - to: passed\n", settings), testDeps({ env }))
      open.push(set)
      const run = async (s: Record<string, unknown>) => (await set.get('t')!.run(items([{ source: 'Save 2 files', translation: 'Enregistrer 2 fichiers' }], s)))[0]!.findings
      // A workflow editor's server without their key: nothing is sent (any address, an internal one too).
      expect(await run({ server: theirs.url })).toEqual([expect.objectContaining({ message: expect.stringMatching(/comes from the step's settings and names a server other than the environment's, and the check has no apiKey for it/) })])
      expect(await run({ server: theirs.url, key: 'their-key' })).toEqual([])
      // Only the second was asked, with their key.
      expect(theirs.stats().byStatus).toEqual({ 200: 1 })
      expect(sent).toEqual(['Bearer their-key'])
    } finally {
      await theirs.stop()
    }
  })
})
