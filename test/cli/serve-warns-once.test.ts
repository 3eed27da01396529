// What loading the pipelines has to say is said once at a start, not once more per pipeline thread:
// each thread loads the same files with the same plugins as the main thread did just before, and
// ai-proofread's "no API key" warning came twice on two cores (three times with two threads).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-warns-once-'))
let child: ChildProcess | undefined
afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

let log = ''
const until = async (what: () => Promise<boolean> | boolean, ms = 20_000) => {
  const end = Date.now() + ms
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`timed out; the worker logged:\n${log.slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('switchyard serve', () => {
  it('warns once that OPENAI_API_KEY is not set, however many pipeline threads load the pipelines', async () => {
    child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'serve'], {
      env: {
        ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', BASE_URL: '', PORT: '0', HOST: '127.0.0.1',
        PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines', 'ai-proofread.yaml'), STORE_URL: 'memory://', DATA_DIR: dir,
        PIPELINE_THREADS: '2', INGEST_THREADS: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', APP_SECRET: 's',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve))
    child.stdout!.on('data', (c: Buffer) => { log += c.toString() })
    child.stderr!.on('data', (c: Buffer) => { log += c.toString() })
    await until(() => /worker listening/.test(log))
    const url = /"url":"(http:[^"]+)"/.exec(log)![1]!
    // Ready once both threads have loaded the pipelines too.
    await until(async () => (await fetch(`${url}/readyz`)).status === 200)
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    const warnings = log.split('\n').filter((line) => line.includes('no API key'))
    expect(warnings, log.slice(-3000)).toHaveLength(1)
  }, 60_000)
})
