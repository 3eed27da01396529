// `switchyard try ... | head`: the reader closes the pipe before the output is written. The
// command stops quietly with SIGPIPE's status, not with Node's unhandled EPIPE stack trace.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-closed-pipe-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('a CLI command whose reader stops early', () => {
  it('exits with 141 and writes nothing to stderr', async () => {
    const strings = Array.from({ length: 50 }, (_, i) => ({ source: `Hello {name}, number ${i}`, translation: `Bonjour {name}, numéro ${i}`, sourceLanguage: 'en', targetLanguage: 'fr' }))
    const file = path.join(dir, 'strings.json')
    writeFileSync(file, JSON.stringify(strings))
    const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'try', path.join(PACKAGE_ROOT, 'pipelines/qa-gate.yaml'), file], {
      env: { ...process.env, PLUGINS_DIR: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    // The pipe closed before the output is written, as `| head -0` or a reader gone early does.
    child.stdout.destroy()
    const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    expect(stderr).toBe('')
    expect(status).toBe(141)
  }, 30_000)
})
