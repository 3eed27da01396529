// Without a built pipeline thread module, `switchyard try` runs the pipeline on its own thread as
// before (no time budget) and says so on stderr; the output is the same.
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { runTry } from '../../src/cli/try.js'
import { FIXTURE_PLUGINS, FIXTURES } from '../engine/helpers.js'
import { captureIo } from './io.js'

vi.mock('../../src/engine/pipeline-pool.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/engine/pipeline-pool.js')>()),
  // As createPipelinePool answers when pipelineThreadFile() finds no dist/.
  createPipelinePool: () => undefined,
}))

const PIPELINE = path.join(FIXTURES, 'pipelines', 'try-gate.yaml')
const STRINGS = path.join(FIXTURES, 'strings', 'try.json')
const env = { PLUGINS_DIR: FIXTURE_PLUGINS }

describe('switchyard try without the pipeline thread module', () => {
  it('runs on the main thread with a note, the same results and plugin metrics', async () => {
    const io = captureIo(env)
    expect(await runTry([PIPELINE, STRINGS], io)).toBe(0)
    expect(io.err()).toBe('note: the pipeline thread module is missing (run the build); the checks run on the main thread, without CHECK_TIME_BUDGET_MS: a check that never ends holds try up\n')
    expect((JSON.parse(io.out()) as Array<{ output: string }>).map((r) => r.output)).toEqual(['translated', '', 'approved', 'approved'])
    const pretty = captureIo(env)
    expect(await runTry([PIPELINE, STRINGS, '--pretty'], pretty)).toBe(0)
    expect(pretty.out()).toMatch(/batcher\.calls\s+2/)
    expect(pretty.out()).toMatch(/batcher\.items\s+4/)
  })
})
