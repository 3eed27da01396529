// `switchyard try` runs the pipeline as the worker does, on a pipeline thread under the time budget
// per check (CHECK_TIME_BUDGET_MS): a plugin whose check spins forever on one string made `try`
// hang (it ran on the main thread). Now that string gets the worker's "check timed out" finding,
// routed by on-error, the other strings their own results, and the command ends at once.
// Run as a child process (bin/switchyard.js, dist/): a check that spins on the test's own thread
// would stop the test's timers too, so the old behaviour could only hang the run, not fail it.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runTry } from '../../src/cli/try.js'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { captureIo } from './io.js'

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-try-budget-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const plugins = path.join(dir, 'plugins')
mkdirSync(plugins)
// A PLUGINS_DIR plugin (docs/plugins.md): runs away on the source "spin", counts the others.
writeFileSync(path.join(plugins, 'spin.mjs'), `export default {
  name: 'spin',
  description: 'Never ends on the source "spin"; an error on "bad".',
  options: { type: 'object', additionalProperties: false, properties: {} },
  create(options, context) {
    return {
      check(item) {
        if (item.source === 'spin') for (;;) {}
        context.metrics.add('spin.checked')
        return item.source === 'bad' ? [{ message: 'Bad source.', code: 'bad-source' }] : []
      },
    }
  },
}
`)
const pipeline = path.join(dir, 'spinner.yaml')
writeFileSync(pipeline, [
  'key: spinner', 'name: Spinner', 'input: [translated]',
  'outputs:', '  passed: { port: approved }', '  failed: { port: translated }', '  broken: { port: untranslated, title: Broken }',
  'checks:', '  - uses: spin',
  'route:', '  - if: errors > 0', '    to: failed', '  - to: passed',
  'on-error: broken', '',
].join('\n'))
const strings = path.join(dir, 'strings.json')
writeFileSync(strings, JSON.stringify([
  { id: 'a', source: 'Save', translation: 'Enregistrer', sourceLanguage: 'en', targetLanguage: 'fr' },
  { id: 'b', source: 'spin', translation: 'tourne', sourceLanguage: 'en', targetLanguage: 'fr' },
  { id: 'c', source: 'bad', translation: 'mauvais', sourceLanguage: 'en', targetLanguage: 'fr' },
]))

/** `switchyard try` as a command; killed if it has not ended within `limitMs`. */
function tryCommand(args: string[], env: Record<string, string>, limitMs = 20_000): Promise<{ status: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now()
  const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin/switchyard.js'), 'try', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const kill = setTimeout(() => child.kill('SIGKILL'), limitMs)
  return new Promise((resolve) => child.on('close', (status) => {
    clearTimeout(kill)
    resolve({ status, stdout, stderr, ms: Date.now() - started })
  }))
}

// What the worker's pool gives the string (PipelinePool.run -> Pipeline.timedOut), on-error routing it.
const TIMED_OUT = {
  check: 'engine',
  code: 'time-budget-exceeded',
  severity: 'error',
  message: 'plugin "spin" (check "spin") failed: check timed out: still running after 300 ms (CHECK_TIME_BUDGET_MS); the thread running it was stopped',
}

describe('switchyard try and a check that never ends', () => {
  it('stops it under CHECK_TIME_BUDGET_MS as the worker does, and ends promptly with the other strings intact', async () => {
    const env = { PLUGINS_DIR: plugins, CHECK_TIME_BUDGET_MS: '300' }
    const json = await tryCommand([pipeline, strings], env)
    expect(json.stderr).toBe('')
    expect(json.status).toBe(0)
    expect(json.ms).toBeLessThan(10_000)
    expect(JSON.parse(json.stdout)).toEqual([
      { id: 'a', output: 'approved', findings: [] },
      { id: 'b', output: 'untranslated', findings: [TIMED_OUT] },
      { id: 'c', output: 'translated', findings: [{ check: 'spin', code: 'bad-source', severity: 'error', message: 'Bad source.' }] },
    ])

    // --pretty: the same outcome, and the metrics the plugin counted on the thread.
    const pretty = await tryCommand([pipeline, strings, '--pretty'], env)
    expect(pretty.status).toBe(0)
    expect(pretty.ms).toBeLessThan(10_000)
    expect(pretty.stdout).toMatch(/^b\s+untranslated \(broken\)\s+1\s+spin$/m)
    expect(pretty.stdout).toContain(`error  engine [time-budget-exceeded]: ${TIMED_OUT.message}`)
    expect(pretty.stdout).toMatch(/Broken -> untranslated\s+1/)
    expect(pretty.stdout).toMatch(/^ {2}spin\.checked\s+2$/m)
  }, 40_000)

  it('refuses a CHECK_TIME_BUDGET_MS the worker would refuse, with its message and status 2', async () => {
    for (const value of ['abc', '50', '1.5']) {
      const io = captureIo({ PLUGINS_DIR: plugins, CHECK_TIME_BUDGET_MS: value })
      expect(await runTry([pipeline, strings], io)).toBe(2)
      expect(io.err()).toBe(`CHECK_TIME_BUDGET_MS: "${value}" is not a whole number in 100..2147483647\n`)
      expect(io.out()).toBe('')
    }
  })

  it('takes the budget from the environment given (an empty value: the default)', async () => {
    const ok = path.join(dir, 'ok.json')
    writeFileSync(ok, JSON.stringify([{ id: 1, source: 'Save', translation: 'Enregistrer', sourceLanguage: 'en', targetLanguage: 'fr' }]))
    for (const value of ['', '5000']) {
      const io = captureIo({ PLUGINS_DIR: plugins, CHECK_TIME_BUDGET_MS: value })
      expect(await runTry([pipeline, ok], io)).toBe(0)
      expect(JSON.parse(io.out())).toEqual([{ id: 1, output: 'approved', findings: [] }])
      expect(io.err()).toBe('')
    }
  })
})
