// The worker runs with --max-semi-space-size=8 for its main thread (npm start, the image); V8 lets
// that flag win over a thread's resourceLimits, so every pool thread had a 16 MB new space instead
// of the 8 MB its pool asks for. Starting a pool clears the flag for the threads that follow.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const run = promisify(execFile)
const dist = (file: string) => pathToFileURL(path.join(PACKAGE_ROOT, 'dist', 'src', file)).href

/** In a process started with --max-semi-space-size=8: the main thread's new space and a thread's (MB). */
async function newSpaces(before: string): Promise<{ main: number; thread: number }> {
  const script = `
    import { Worker } from 'node:worker_threads'
    import v8 from 'node:v8'
    ${before}
    const churn = () => { let keep = []; for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = [] } }
    const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20
    const thread = new Worker(\`import v8 from 'node:v8'; import { parentPort } from 'node:worker_threads'
      let keep = []; for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = [] }
      parentPort.postMessage(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20)\`,
      { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 8 } })
    const inThread = await new Promise((resolve) => thread.once('message', resolve))
    await thread.terminate()
    churn()
    console.log(JSON.stringify({ main: newSpace(), thread: inThread }))
    process.exit(0)`
  // The thread's code is an ES module too: it inherits --input-type.
  const { stdout } = await run(process.execPath, ['--max-semi-space-size=8', '--input-type=module', '-e', script], { timeout: 30_000 })
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { main: number; thread: number }
}

describe('pool threads size their own young generation', () => {
  it('without the helper, the flag gives a thread the main thread’s new space (the bug)', async () => {
    expect(await newSpaces('')).toEqual({ main: 16, thread: 16 })
  })

  it('once a decode pool is created, a thread gets the 8 MB young generation its pool asks for; the main thread keeps its size', async () => {
    const before = `const { createDecodePool } = await import(${JSON.stringify(dist('webhooks/decode-pool.js'))})
      await createDecodePool({ threads: 1, secrets: ['s'] }).close()`
    const sizes = await newSpaces(before)
    expect(sizes.main).toBe(16)
    expect(sizes.thread).toBeLessThanOrEqual(8)
  })

  it('the helper alone does the same (the pipeline pool calls it before each pool it starts)', async () => {
    const before = `const { letThreadsSizeTheirYoungGeneration } = await import(${JSON.stringify(dist('config/thread-heap.js'))})
      letThreadsSizeTheirYoungGeneration()`
    expect((await newSpaces(before)).thread).toBeLessThanOrEqual(8)
  })
})
