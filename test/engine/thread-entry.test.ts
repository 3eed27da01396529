// The threads of the pipeline pool and of the ingest pool start from a CommonJS entry that loads
// their ES module with import(). Piscina require()s a thread's file first, and on Node 20 a
// require() of an ES module can race the import() calls that module starts while it loads (the
// pipeline thread imports plugins): Node then aborts the whole process ("v8::Module::IsGraphAsync
// must be used on an instantiated module"), seen once in a CI run. Run with require() of ES
// modules switched off, the entries must still load; a thread module given to piscina directly
// would throw ERR_REQUIRE_ESM here. Runs the build (dist/).
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { pipelineThreadFile } from '../../src/engine/pipeline-pool.js'
import { decodeThreadFile } from '../../src/webhooks/decode-pool.js'

describe('thread entries', () => {
  it.each([
    ['pipeline', pipelineThreadFile],
    ['ingest', decodeThreadFile],
  ] as const)('the %s threads start from CommonJS and load their ES module with import() only', (_, fileOf) => {
    const file = fileOf()
    if (!file) throw new Error('the thread module is missing: run npm run build first')
    // Outside a thread the module's own start may fail (no workerData): only how it loads counts.
    const script = `const m = require(${JSON.stringify(file)}); console.log(typeof m.then); m.catch(() => undefined)`
    const run = spawnSync(process.execPath, ['--no-experimental-require-module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(run.stderr).not.toMatch(/ERR_REQUIRE_ESM/)
    expect(run.stdout.trim()).toBe('function')
  })
})
