// `switchyard serve` refuses at its start, as `config --check` does (exit 2, the same message), a
// DATA_DIR or SQLite directory it cannot write: such a worker started and said it was listening,
// then failed at the store's first write, or (DATA_DIR/incoming) at the first large webhook body.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-serve-unwritable-'))
const aFile = path.join(dir, 'a-file')
writeFileSync(aFile, 'not a directory\n')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function serve(env: Record<string, string>) {
  // Were the directories not checked, a worker would start (on loopback, a free port) and the timeout end it.
  return spawnSync(process.execPath, [path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'serve'], {
    env: {
      // BASE_URL: vitest puts its own ("/") in process.env. TOKEN_KEY: no key file to write at the start.
      ...process.env, BASE_URL: '', PORT: '0', HOST: '127.0.0.1', TOKEN_KEY: randomBytes(32).toString('base64'),
      PIPELINE_THREADS: '0', INGEST_THREADS: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env,
    },
    encoding: 'utf8',
    timeout: 10_000,
  })
}

describe('switchyard serve: the directories it writes', () => {
  it('refuses a DATA_DIR it cannot write, before it listens (exit 2, as config --check)', () => {
    const r = serve({ DATA_DIR: aFile, STORE_URL: 'memory://' })
    expect(r.signal, `still running when the timeout killed it: ${r.stdout}`).toBeNull()
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`Invalid configuration:\n  DATA_DIR: "${aFile}" is a file, not a directory\n`)
    expect(r.stdout).not.toContain('listening')
  })

  it('refuses the directory of a sqlite:// STORE_URL it cannot create', () => {
    const store = path.join(aFile, 'store', 'switchyard.sqlite')
    const r = serve({ DATA_DIR: path.join(dir, 'data'), STORE_URL: `sqlite://${store}` })
    expect(r.signal).toBeNull()
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`Invalid configuration:\n  STORE_URL: the SQLite store's directory "${path.dirname(store)}" does not exist and cannot be created: "${aFile}" is a file, not a directory\n`)
  })
})
