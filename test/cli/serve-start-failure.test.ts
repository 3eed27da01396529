// A `switchyard serve` whose start fails ends with exit 1 and a message naming what to change,
// even when something it opened before failing keeps the event loop alive (a Redis store's or
// BullMQ's connections did: the process went on for ever, listening nowhere). Here a timer loaded
// with --import stands for such a connection.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const data = mkdtempSync(path.join(tmpdir(), 'switchyard-serve-start-failure-'))
let taken: Server
let port: number

beforeAll(async () => {
  taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  port = (taken.address() as { port: number }).port
})

afterAll(async () => {
  await new Promise<void>((resolve) => taken.close(() => resolve()))
  rmSync(data, { recursive: true, force: true })
})

describe('switchyard serve on a port already taken', () => {
  it('exits 1, saying which setting to change, although a handle keeps the event loop alive', () => {
    const started = Date.now()
    const r = spawnSync(
      process.execPath,
      ['--import', 'data:text/javascript,setInterval(() => {}, 1000)', path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'serve'],
      {
        // BASE_URL: vitest puts its own ("/") in process.env.
        env: { ...process.env, BASE_URL: '', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: data, STORE_URL: 'memory://', PIPELINE_THREADS: '0', INGEST_THREADS: '0', LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 15_000,
      },
    )
    expect(r.signal, `still running when the timeout killed it: ${r.stderr}`).toBeNull()
    expect(r.status).toBe(1)
    expect(r.stderr).toContain(`cannot listen on HOST=127.0.0.1 PORT=${port}`)
    expect(r.stderr).toMatch(/set PORT to a free port/)
    expect(Date.now() - started).toBeLessThan(15_000)
  })
})
