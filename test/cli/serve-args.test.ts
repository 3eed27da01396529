// `switchyard serve` takes no arguments: `-h` prints its help as every other command's does, and
// anything else is refused, never a worker started that silently ignores what it was given.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const data = mkdtempSync(path.join(tmpdir(), 'switchyard-serve-args-'))
afterAll(() => rmSync(data, { recursive: true, force: true }))

function serve(...args: string[]) {
  // Were the arguments ignored, a worker would start (on loopback, a free port) and the timeout end it.
  return spawnSync(process.execPath, [path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'serve', ...args], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: data, STORE_URL: 'memory://', PIPELINE_THREADS: '0', INGEST_THREADS: '0', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 8000,
  })
}

describe('switchyard serve arguments', () => {
  it('-h prints the help, like --help, and starts nothing', () => {
    const r = serve('-h')
    expect(r.signal).toBeNull()
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^switchyard serve: run the worker/)
  })

  it('an unknown argument is refused with exit 2', () => {
    const r = serve('--port', '8080')
    expect(r.signal).toBeNull()
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/unknown argument --port/)
  })
})
