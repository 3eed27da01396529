// `switchyard serve` reloads its pipelines on SIGHUP: a new file appears in the manifest, a broken
// one is refused with every error logged and the pipelines that were loaded stay in service.
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-reload-'))
let child: ChildProcess | undefined
afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

let log = ''
const until = async (what: () => Promise<boolean> | boolean, ms = 15_000) => {
  const end = Date.now() + ms
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`timed out; the worker logged:\n${log.slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('switchyard serve', () => {
  it('reloads pipelines on SIGHUP and keeps the old ones when the new ones are broken', async () => {
    const pipelines = path.join(dir, 'pipelines')
    mkdirSync(pipelines, { recursive: true })
    for (const f of ['qa-gate.yaml', 'qa-gate.png', 'pipeline.schema.json']) copyFileSync(path.join(PACKAGE_ROOT, 'pipelines', f), path.join(pipelines, f))
    child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'serve'], {
      env: { ...process.env, BASE_URL: '', PORT: '0', HOST: '127.0.0.1', PIPELINES_DIR: pipelines, STORE_URL: 'memory://', DATA_DIR: dir, LOG_LEVEL: 'info', APP_SECRET: 's' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout!.on('data', (c: Buffer) => { log += c.toString() })
    child.stderr!.on('data', (c: Buffer) => { log += c.toString() })
    await until(() => /worker listening/.test(log))
    const url = /"url":"(http:[^"]+)"/.exec(log)![1]!
    const keys = async () => ((await (await fetch(`${url}/manifest.json`)).json()) as { modules: { 'workflow-step-type': Array<{ key: string }> } }).modules['workflow-step-type'].map((m) => m.key).sort()
    expect(await keys()).toEqual(['qa-gate'])

    writeFileSync(path.join(pipelines, 'strict-gate.yaml'), readFileSync(path.join(pipelines, 'qa-gate.yaml'), 'utf8').replace('key: qa-gate', 'key: strict-gate').replace('logo: qa-gate.png\n', ''))
    child.kill('SIGHUP')
    await until(async () => (await keys()).length === 2)
    expect(await keys()).toEqual(['qa-gate', 'strict-gate'])

    writeFileSync(path.join(pipelines, 'broken.yaml'), 'key: broken\nname: Broken\nunknownKey: 1\ninput: [nowhere]\n')
    child.kill('SIGHUP')
    await until(() => /reload failed/.test(log))
    expect(log).toMatch(/broken\.yaml:3:1 /)
    expect(await keys()).toEqual(['qa-gate', 'strict-gate'])
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
  }, 60_000)
})
