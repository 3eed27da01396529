// What compile-checks.ts does with presets (overrides, fallbacks, disabled checks), duplicate ids
// and event handlers, as a pipeline author sees it: the checks that run and the errors at load.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PRESETS } from '../../plugins/presets.js'
import { formatLocatedError, loadPipelines } from '../../src/engine/load-pipelines.js'
import { items, pipelineYaml, testDeps, writePipelines } from './helpers.js'

async function load(yaml: string) {
  const r = await loadPipelines(writePipelines({ 'p.yaml': yaml }).paths, testDeps())
  return r
}
const errorsOf = async (yaml: string) => { const r = await load(yaml); if (r.ok) await r.set.close(0); return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.col} ${e.message}`) }

beforeEach(() => {
  PRESETS['t-preset'] = [
    { uses: 'regex', id: 'edge', with: { target: { forbid: '^\\s' } } },
    { uses: 'flaky', severity: 'warning' },
  ]
})
afterEach(() => { delete PRESETS['t-preset'] })

describe('presets', () => {
  it('an override (by check id or plugin name) replaces if, timeout, severity and options; the entry\'s apply to the rest', async () => {
    const r = await load(pipelineYaml(`checks:
  - uses: t-preset
    severity: info
    overrides:
      edge: { with: { target: { forbid: X } }, if: 'key != "skip"', maxTextLength: 3 }
      flaky: { timeout: 5, severity: error }
route:
  - to: passed
on-error: failed
`))
    if (!r.ok) throw new Error(r.errors.map(formatLocatedError).join('\n'))
    const p = r.set.get('t')!
    const out = await p.run(items([{ source: 'a', translation: 'X' }, { source: 'a', translation: 'X', key: 'skip' }, { source: 'slow', translation: 'abcd' }]))
    expect(out.map((x) => x.findings.map((f) => `${f.check}:${f.code ?? ''}:${f.severity}`))).toEqual([
      ['edge:forbidden-pattern:info'],
      [],
      ['edge:text-too-long:info', 'engine:plugin-timed-out:error'],
    ])
    await r.set.close(0)
  })

  it('an override naming no check of the preset is an error at its key, listing the checks', async () => {
    expect(await errorsOf(pipelineYaml('checks:\n  - uses: t-preset\n    overrides:\n      nope: { enabled: false }\nroute:\n  - to: passed\n'))).toEqual(['10:7 preset "t-preset" has no check "nope"; its checks: edge, flaky'])
  })

  it('bad options in an override point into the override', async () => {
    expect(await errorsOf(pipelineYaml('checks:\n  - uses: t-preset\n    overrides:\n      edge: { with: { target: { forbidd: x } } }\nroute:\n  - to: passed\n'))).toEqual([expect.stringMatching(/^10:31 check "edge": option target: unknown option "forbidd"/)])
  })

  it('a check with enabled: false is left out; a missing preset without fallback is an error naming plugins and presets', async () => {
    const r = await load(pipelineYaml('checks:\n  - uses: flaky\n    enabled: false\nroute:\n  - to: passed\n'))
    expect(r.ok && (await r.set.get('t')!.run(items([{ source: 'boom' }])))[0]!.findings).toEqual([])
    if (r.ok) await r.set.close(0)
    expect(await errorsOf(pipelineYaml('checks:\n  - uses: nope\nroute:\n  - to: passed\n'))).toEqual([expect.stringMatching(/^8:11 unknown plugin or preset "nope"; plugins: .*regex.*; presets: .*t-preset; or npm:<package>$/)])
  })

  it('a missing preset with a fallback warns at its uses', async () => {
    const r = await load(pipelineYaml('checks:\n  - uses: not-yet\n    fallback:\n      - uses: shout\nroute:\n  - to: passed\n'))
    expect(r.ok && r.warnings.map((w) => `${w.line}:${w.col} ${w.message}`)).toEqual(['8:11 preset "not-yet" is not defined; using the fallback checks'])
    if (r.ok) await r.set.close(0)
  })
})

describe('check ids', () => {
  it('two checks with the same id are an error at the second (its id, or its uses)', async () => {
    expect(await errorsOf(pipelineYaml('checks:\n  - uses: shout\n  - uses: shout\nroute:\n  - to: passed\n'))).toEqual(['9:11 two checks are called "shout"; give one an `id`'])
    expect(await errorsOf(pipelineYaml('checks:\n  - uses: shout\n    id: a\n  - uses: flaky\n    id: a\nroute:\n  - to: passed\n'))).toEqual(['11:9 two checks are called "a"; give one an `id`'])
  })
})

describe('event handlers', () => {
  it('an unknown plugin, and ${settings.x} in an event\'s options, are errors', async () => {
    expect(await errorsOf(pipelineYaml('checks: []\nroute:\n  - to: passed\nevents:\n  - on: project.translated\n    uses: nope\n'))).toEqual([expect.stringMatching(/^12:11 unknown plugin "nope"; plugins: /)])
    expect(await errorsOf(pipelineYaml('settings:\n  properties:\n    t: { default: x }\nchecks: []\nroute:\n  - to: passed\nevents:\n  - on: project.translated\n    uses: listener\n    with: { tag: \'${settings.t}\' }\n'))).toEqual([expect.stringMatching(/^\d+:\d+ events have no step, hence no step settings: \$\{settings\.…\} cannot be used here$/)])
  })
})
