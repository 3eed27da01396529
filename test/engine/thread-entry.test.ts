// The threads of the pipeline pool and of the ingest pool start from a CommonJS entry that loads
// their ES module with import(). Piscina require()s a thread's file first, and on Node 20 a
// require() of an ES module can race the import() calls that module starts while it loads (the
// pipeline thread imports plugins): Node then aborts the whole process ("v8::Module::IsGraphAsync
// must be used on an instantiated module"), seen once in a CI run. Run with require() of ES
// modules switched off, the entries must still load; a thread module given to piscina directly
// would throw ERR_REQUIRE_ESM here. Runs the build (dist/).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { pipelineThreadFile } from '../../src/engine/pipeline-pool.js'
import { decodeThreadFile } from '../../src/webhooks/decode-pool.js'

// The vitest global set-up builds dist/; Stryker's sandbox has it only when dist/ is copied in
// (docs/testing.md): without it these are skipped, as the thread tests of decode-pool.test.ts are.
const built = pipelineThreadFile() !== undefined && decodeThreadFile() !== undefined

describe.skipIf(!built)('thread entries', () => {
  it.each([
    ['pipeline', pipelineThreadFile],
    ['ingest', decodeThreadFile],
  ] as const)('the %s threads start from CommonJS and load their ES module with import() only', (_, fileOf) => {
    const file = fileOf()!
    // Outside a thread the module's own start may fail (no workerData): only how it loads counts.
    const script = `const m = require(${JSON.stringify(file)}); console.log(typeof m.then); m.catch(() => undefined)`
    const run = spawnSync(process.execPath, ['--no-experimental-require-module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(run.stderr).not.toMatch(/ERR_REQUIRE_ESM/)
    expect(run.stdout.trim()).toBe('function')
    // What it imports is the built thread module beside it.
    const target = /import\('(\.\/[^']+)'\)/.exec(readFileSync(file, 'utf8'))?.[1]
    expect(target).toMatch(/-thread\.js$/)
    expect(existsSync(path.resolve(path.dirname(file), target!))).toBe(true)
  })
})
