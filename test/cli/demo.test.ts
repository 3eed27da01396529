// `switchyard demo` runs on embedded defaults, whatever the shell holds for a real worker, and
// refuses a pipeline that is not there before it sends a string (it parked every one of them).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { runDemo } from '../../src/cli/demo.js'

function capture() {
  const out: string[] = []
  const err: string[] = []
  vi.spyOn(console, 'log').mockImplementation((s: unknown) => void out.push(String(s)))
  vi.spyOn(console, 'error').mockImplementation((s: unknown) => void err.push(String(s)))
  return { out: () => out.join('\n'), err: () => err.join('\n') }
}

afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllEnvs()
})

describe('switchyard demo', () => {
  // Each made the demo need an outside service or refused it: Redis for the queue (refused before
  // anything started), a password for its own connection through /oauth/start, the operator's own
  // pipelines in place of the shipped ones the sample project is made for.
  it.each([
    ['QUEUE=bullmq', { QUEUE: 'bullmq' }],
    ['OPERATOR_PASSWORD', { OPERATOR_PASSWORD: 'the real one' }],
    ['PIPELINES_DIR', { PIPELINES_DIR: '/nonexistent/switchyard/pipelines' }],
  ])('takes nothing from the environment but how to log: %s set for a real worker changes nothing', async (_, env: Record<string, string>) => {
    vi.stubEnv('BASE_URL', '') // vitest's own BASE_URL=/, which the worker refuses
    vi.stubEnv('LOG_LEVEL', 'silent')
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value)
    const io = capture()
    expect(await runDemo(['--strings', '2', '--languages', 'de'])).toBe(0)
    expect(io.out()).toMatch(/Sent 2 strings in 1 signed batches/)
    expect(io.out()).toMatch(/Not done: 0\. Wrong port: 0\. Protocol mistakes: 0\./)
  }, 60_000)

  it('refuses a pipeline that is not there at once (exit 2), naming the ones there are', async () => {
    vi.stubEnv('LOG_LEVEL', 'silent')
    const io = capture()
    expect(await runDemo(['--pipeline', 'nope', '--strings', '2', '--languages', 'de'])).toBe(2)
    expect(io.err()).toBe('switchyard demo: there is no pipeline "nope"; --pipeline takes one of: ai-proofread, qa-gate')
    expect(io.out()).not.toMatch(/Sent/)
  }, 60_000)
})
