// `switchyard config --check` checks the directories the configuration names, on disk: a
// PIPELINES_DIR or PLUGINS_DIR that is not there, or a DATA_DIR that cannot be written, was called
// valid, and `serve` then failed at its start (or, for DATA_DIR/incoming, at the first large body).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli/main.js'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-config-check-'))
const aFile = path.join(dir, 'a-file')
writeFileSync(aFile, 'not a directory\n')
mkdirSync(path.join(dir, 'plugins'))
// A directory with files, none of them a pipeline (a README, a pipeline renamed .yaml.off).
mkdirSync(path.join(dir, 'no-pipelines-inside'))
writeFileSync(path.join(dir, 'no-pipelines-inside', 'README.md'), '# pipelines\n')
writeFileSync(path.join(dir, 'no-pipelines-inside', 'qa-gate.yaml.off'), 'key: qa-gate\n')
mkdirSync(path.join(dir, 'empty'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function check(env: Record<string, string>): Promise<{ status: number; out: string; err: string }> {
  // Only what the case sets: the rest of the configuration is on its defaults (vitest puts vite's
  // BASE_URL=/ in the environment, which the worker refuses).
  for (const name of ['PIPELINES_DIR', 'PLUGINS_DIR', 'DATA_DIR', 'STORE_URL', 'QUEUE', 'BASE_URL']) vi.stubEnv(name, env[name] ?? '')
  const out: string[] = []
  const err: string[] = []
  vi.spyOn(console, 'log').mockImplementation((s: unknown) => void out.push(String(s)))
  vi.spyOn(console, 'error').mockImplementation((s: unknown) => void err.push(String(s)))
  const status = await main(['config', '--check'])
  return { status, out: out.join('\n'), err: err.join('\n') }
}

afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllEnvs()
})

describe('switchyard config --check: the directories', () => {
  it('accepts directories that are there, and a DATA_DIR the worker will create', async () => {
    const r = await check({ PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines'), PLUGINS_DIR: path.join(dir, 'plugins'), DATA_DIR: path.join(dir, 'data', 'not-yet') })
    expect(r.err).toBe('')
    expect(r.status).toBe(0)
    expect(r.out).toMatch(/^configuration is valid; missing for a real organization/)
  })

  it('refuses a PIPELINES_DIR, a PLUGINS_DIR and a DATA_DIR that cannot be used, every one at once, naming each variable (exit 2)', async () => {
    const r = await check({ PIPELINES_DIR: path.join(dir, 'no-pipelines'), PLUGINS_DIR: path.join(dir, 'no-plugins'), DATA_DIR: aFile })
    expect(r.status).toBe(2)
    expect(r.out).toBe('')
    expect(r.err).toMatch(/^Invalid configuration:/)
    expect(r.err).toContain(`PIPELINES_DIR: "${path.join(dir, 'no-pipelines')}" does not exist`)
    expect(r.err).toContain(`PLUGINS_DIR: "${path.join(dir, 'no-plugins')}" does not exist`)
    expect(r.err).toContain(`DATA_DIR: "${aFile}" is a file, not a directory`)
  })

  it('with the environment\'s own errors in the same list', async () => {
    const r = await check({ PIPELINES_DIR: path.join(dir, 'no-pipelines'), QUEUE: 'bullmq' })
    expect(r.status).toBe(2)
    expect(r.err).toMatch(/QUEUE=bullmq needs Redis/)
    expect(r.err).toMatch(/PIPELINES_DIR: ".*no-pipelines" does not exist/)
  })

  it('checks each file of a PIPELINES_DIR list', async () => {
    const qa = path.join(PACKAGE_ROOT, 'pipelines', 'qa-gate.yaml')
    const gone = path.join(dir, 'gone.yaml')
    const r = await check({ PIPELINES_DIR: `${qa},${gone}`, DATA_DIR: path.join(dir, 'data') })
    expect(r.status).toBe(2)
    expect(r.err).toContain(`PIPELINES_DIR: the pipeline file "${gone}" does not exist`)
    expect(r.err).not.toContain('qa-gate.yaml')
  })

  it('refuses a PIPELINES_DIR or PLUGINS_DIR that is a file', async () => {
    const r = await check({ PIPELINES_DIR: aFile, PLUGINS_DIR: aFile, DATA_DIR: path.join(dir, 'data') })
    expect(r.status).toBe(2)
    expect(r.err).toContain(`PIPELINES_DIR: "${aFile}" is a file, not a directory`)
    expect(r.err).toContain(`PLUGINS_DIR: "${aFile}" is a file, not a directory`)
  })

  it('refuses a DATA_DIR that cannot be created (a file where a parent directory should be)', async () => {
    const r = await check({ DATA_DIR: path.join(aFile, 'data') })
    expect(r.status).toBe(2)
    expect(r.err).toContain(`DATA_DIR: "${path.join(aFile, 'data')}" does not exist and cannot be created: "${aFile}" is a file, not a directory`)
  })

  // A worker started on such a directory served no step: its manifest declared none.
  it('refuses a PIPELINES_DIR that holds no pipeline files', async () => {
    for (const pipelines of [path.join(dir, 'empty'), path.join(dir, 'no-pipelines-inside')]) {
      const r = await check({ PIPELINES_DIR: pipelines, DATA_DIR: path.join(dir, 'data') })
      expect(r.status, pipelines).toBe(2)
      expect(r.err).toContain(`PIPELINES_DIR: "${pipelines}" holds no pipeline files (*.yaml, *.yml): the worker would serve no step`)
    }
  })

  it('checks the directory of a sqlite:// STORE_URL outside DATA_DIR', async () => {
    const store = path.join(aFile, 'store', 'switchyard.sqlite')
    const r = await check({ PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines'), DATA_DIR: path.join(dir, 'data'), STORE_URL: `sqlite://${store}` })
    expect(r.status).toBe(2)
    expect(r.err).toContain(`STORE_URL: the SQLite store's directory "${path.dirname(store)}" does not exist and cannot be created: "${aFile}" is a file, not a directory`)
    expect(r.err).not.toContain('DATA_DIR')
    // A store that is a directory (STORE_URL naming DATA_DIR itself, say).
    const folder = await check({ PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines'), DATA_DIR: path.join(dir, 'data'), STORE_URL: `sqlite://${path.join(dir, 'plugins')}` })
    expect(folder.status).toBe(2)
    expect(folder.err).toContain(`STORE_URL: the SQLite store "${path.join(dir, 'plugins')}" is a directory, not a file`)
    // One the worker can create is fine.
    const fine = await check({ PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines'), DATA_DIR: path.join(dir, 'data'), STORE_URL: `sqlite://${path.join(dir, 'elsewhere', 'not-yet', 'x.sqlite')}` })
    expect(fine.err).toBe('')
    expect(fine.status).toBe(0)
  })

  it('names a DATA_DIR that holds the default SQLite store once, under DATA_DIR', async () => {
    const r = await check({ PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines'), DATA_DIR: aFile })
    expect(r.status).toBe(2)
    expect(r.err).toBe(`Invalid configuration:\n  DATA_DIR: "${aFile}" is a file, not a directory`)
  })
})
