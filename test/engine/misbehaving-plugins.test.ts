// Plugins that break the plugin API (test/fixtures/misbehaving-plugins): a checkBatch() that
// throws, rejects, hangs or answers with a list of the wrong length; a check() that returns no
// list; a plugin that cannot start with the step's settings; one with nothing to run. Each failure
// is an `engine` finding with its code on the strings the check ran on, the string's later checks
// are skipped, and `on-error` decides where the string goes. Other strings go on as usual.
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadPipelines, type PipelineSet } from '../../src/engine/load-pipelines.js'
import { settleWithin, type RunResult } from '../../src/engine/run-pipeline.js'
import { createLogger } from '../../src/util/logger.js'
import { FIXTURES, items, loadOne, pipelineYaml, testDeps, writePipelines } from './helpers.js'

const PLUGINS = path.join(FIXTURES, 'misbehaving-plugins')

const open: PipelineSet[] = []
afterEach(async () => { await Promise.all(open.splice(0).map((s) => s.close(0))) })

async function load(body: string, deps = testDeps({ pluginsDir: PLUGINS })) {
  const r = await loadOne(pipelineYaml(body), deps)
  open.push(r.set)
  return { pipeline: r.set.get('t')!, counts: r.deps.counts }
}

/** What a user sees of a string: where it went, and its findings as `check/code: message`. */
const seen = (r: RunResult) => ({
  output: r.output, port: r.port, retry: r.retry,
  findings: r.findings.map((f) => `${f.check}/${f.code ?? '-'}/${f.severity}: ${f.message}`),
})

// A later check: it runs only on the strings that did not fail before it.
const LATER = `  - uses: regex
    id: later
    severity: warning
    with: { target: { forbid: LOUD } }
`
const LATER_FINDING = 'later/forbidden-pattern/warning: The translation must not match /LOUD/: found "LOUD"'

const ROUTES = `route:
  - if: errors > 0
    to: failed
  - to: passed
`

/** A pipeline whose first check is bad-batch in `mode`, then the later check. */
const batchPipeline = (mode: string, onError = 'failed') => `checks:
  - uses: bad-batch
    with: { mode: ${mode} }
    if: not (key == "skip")
${LATER}${ROUTES}on-error: ${onError}
`

const engine = (code: string, why: string, plugin = 'bad-batch') => `engine/${code}/error: plugin "${plugin}" (check "${plugin}") failed: ${why}`

describe('a checkBatch() that misbehaves fails every string of the batch', () => {
  // Strings 1 and 2 are in the batch; string 3 is not (its key is "skip") and goes on to the later check.
  const strings = [{ source: 'a', translation: 'LOUD' }, { source: 'b', translation: 'quiet' }, { source: 'c', translation: 'LOUD', key: 'skip' }]
  const untouched = { output: 'passed', port: 'approved', retry: undefined, findings: [LATER_FINDING] }

  it.each([
    ['throw', 'plugin-threw', 'batch exploded'],
    ['throw-string', 'plugin-threw', 'a bare string'],
    ['reject', 'plugin-threw', 'batch rejected'],
    ['object', 'plugin-bad-result', 'checkBatch() returned no array'],
    ['short', 'plugin-bad-result', 'checkBatch() returned 1 results for 2 strings'],
    ['long', 'plugin-bad-result', 'checkBatch() returned 3 results for 2 strings'],
    ['hang', 'plugin-timed-out', 'timed out after 50 ms'],
    ['trap', 'plugin-bad-result', 'checkBatch() returned a list that could not be read: unreadable batch'],
  ])('%s: %s, sent to the on-error output, later checks skipped', async (mode, code, why) => {
    const { pipeline, counts } = await load(batchPipeline(mode))
    const r = await pipeline.run(items(strings))
    const failed = { output: 'failed', port: 'translated', retry: undefined, findings: [engine(code, why)] }
    expect(r.map(seen)).toEqual([failed, failed, untouched])
    expect(counts.get('bad-batch.calls')).toBe(1)
    expect(counts.get('bad-batch.items')).toBe(2)
  })

  it('park and retry: the strings of the batch are parked, and marked for retry with retry', async () => {
    const parked = await (await load(batchPipeline('throw', 'park'))).pipeline.run(items(strings))
    expect(parked.map((r) => [r.output, r.port, r.retry])).toEqual([[null, '', undefined], [null, '', undefined], ['passed', 'approved', undefined]])
    const retried = await (await load(batchPipeline('reject', 'retry'))).pipeline.run(items(strings))
    expect(retried.map((r) => [r.output, r.port, r.retry])).toEqual([[null, '', true], [null, '', true], ['passed', 'approved', undefined]])
    expect(retried[0]!.findings).toEqual([{ check: 'engine', code: 'plugin-threw', severity: 'error', message: 'plugin "bad-batch" (check "bad-batch") failed: batch rejected' }])
  })

  it('a batch that answers well: each string gets its own findings', async () => {
    const { pipeline } = await load(batchPipeline('ok'))
    const r = await pipeline.run(items([{ source: 'bad one', translation: 'x' }, { source: 'good', translation: 'x' }]))
    expect(r.map(seen)).toEqual([
      { output: 'failed', port: 'translated', retry: undefined, findings: ['bad-batch/-/error: bad: bad one'] },
      { output: 'passed', port: 'approved', retry: undefined, findings: [] },
    ])
  })

  it('is not called when its `if` selects no string', async () => {
    const { pipeline, counts } = await load(batchPipeline('throw'))
    const r = await pipeline.run(items([{ source: 'a', translation: 'LOUD', key: 'skip' }]))
    expect(r.map(seen)).toEqual([untouched])
    expect(counts.get('bad-batch.calls')).toBeUndefined()
  })
})

describe('a check() that returns something other than a list of findings', () => {
  const body = `checks:
  - uses: bad-result
${LATER}${ROUTES}on-error: failed
`
  it('plugin-bad-result, naming what came back; the string goes to the on-error output', async () => {
    const { pipeline } = await load(body)
    const sources = ['text', 'number', 'object', 'null', 'later text', 'hole', 'fine']
    const r = await pipeline.run(items(sources.map((source) => ({ source, translation: 'LOUD' }))))
    const bad = (why: string) => [engine('plugin-bad-result', why, 'bad-result')]
    expect(r.map((x) => [x.output, x.port, x.findings.map((f) => `${f.check}/${f.code ?? '-'}/${f.severity}: ${f.message}`)])).toEqual([
      ['failed', 'translated', bad('returned string instead of an array of findings')],
      ['failed', 'translated', bad('returned number instead of an array of findings')],
      ['failed', 'translated', bad('returned object instead of an array of findings')],
      ['failed', 'translated', bad('returned object instead of an array of findings')],
      ['failed', 'translated', bad('returned string instead of an array of findings')],
      // The findings before the broken one are kept; the later check does not run after the failure.
      ['failed', 'translated', ['bad-result/-/error: first', ...bad('returned a finding without a message')]],
      ['passed', 'approved', [LATER_FINDING]],
    ])
  })

  it('a list or a finding that cannot be read fails only its own string, not the run', async () => {
    // A finding's getter that throws, or a revoked proxy for a list, threw out of the engine: every
    // string of the run failed (`switchyard try` printed only "unreadable message" and exited).
    const { pipeline } = await load(body)
    const r = await pipeline.run(items(['getter', 'trap', 'fine'].map((source) => ({ source, translation: 'LOUD' }))))
    expect(r.map(seen)).toEqual([
      { output: 'failed', port: 'translated', retry: undefined, findings: [engine('plugin-bad-result', 'returned findings that could not be read: unreadable message', 'bad-result')] },
      { output: 'failed', port: 'translated', retry: undefined, findings: [engine('plugin-threw', "Cannot perform 'get' on a proxy that has been revoked", 'bad-result')] },
      { output: 'passed', port: 'approved', retry: undefined, findings: [LATER_FINDING] },
    ])
  })

  it('is logged as a warning with the string, the code and the error; a stopped check is not', async () => {
    const lines: Array<Record<string, unknown>> = []
    const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
    const { pipeline } = await load(body, testDeps({ pluginsDir: PLUGINS, log }))
    await pipeline.run(items([{ source: 'fine' }, { source: 'number' }]))
    expect(lines.map(({ level, msg, pipeline: p, check, stringId, findingCode, err }) => ({ level, msg, p, check, stringId, findingCode, err }))).toEqual([
      { level: 40, msg: 'plugin failed', p: 't', check: 'bad-result', stringId: 2, findingCode: 'plugin-bad-result', err: 'returned number instead of an array of findings' },
    ])
    pipeline.timedOut(3, 0, 1000)
    expect(lines).toHaveLength(1)
  })
})

describe('a plugin that cannot start with the step\'s settings', () => {
  const body = `settings:
  properties:
    mood: { type: string, default: fine }
checks:
  - uses: moody
    with: { mood: '\${settings.mood}' }
${LATER}${ROUTES}on-error: failed
`
  it('plugin-not-started on every string of the run, with create()\'s error; other settings still run', async () => {
    const { pipeline, counts } = await load(body)
    expect(counts.get('moody.created')).toBe(1) // at load, with the default
    const strings = [{ source: 'a', translation: 'LOUD' }, { source: 'b', translation: 'x' }]
    const notStarted = (why: string) => ({ output: 'failed', port: 'translated', retry: undefined, findings: [engine('plugin-not-started', `could not start with these settings: ${why}`, 'moody')] })
    expect((await pipeline.run(items(strings, { mood: 'grumpy' }))).map(seen)).toEqual([0, 1].map(() => notStarted('will not work when grumpy')))
    expect((await pipeline.run(items(strings, { mood: 'sulky' }))).map(seen)).toEqual([0, 1].map(() => notStarted('sulking')))
    expect((await pipeline.run(items(strings, { mood: 'calm' }))).map(seen)).toEqual([
      { output: 'passed', port: 'approved', retry: undefined, findings: ['moody/-/info: calm: a', LATER_FINDING] },
      { output: 'passed', port: 'approved', retry: undefined, findings: ['moody/-/info: calm: b'] },
    ])
  })

  it('a create() that never ends fails its strings after the check\'s timeout, every run; one that failed is tried again', async () => {
    const { pipeline } = await load(body.replace("with: { mood: '${settings.mood}' }", "with: { mood: '${settings.mood}' }\n    timeout: 200"))
    const strings = [{ source: 'a', translation: 'x' }]
    for (let run = 0; run < 2; run++) {
      const started = Date.now()
      const r = await pipeline.run(items(strings, { mood: 'stuck' }))
      expect(r.map(seen)).toEqual([{ output: 'failed', port: 'translated', retry: undefined, findings: [engine('plugin-not-started', 'could not start with these settings: create() did not finish within 200 ms', 'moody')] }])
      // The first run waits the timeout; the next fail at once for a while (then one tries again).
      expect(Date.now() - started).toBeLessThan(run === 0 ? 2000 : 150)
    }
    // One that ends late is used once it has.
    expect((await pipeline.run(items(strings, { mood: 'slow' }))).map((r) => r.findings[0]?.code)).toEqual(['plugin-not-started'])
    await new Promise((r) => setTimeout(r, 400))
    expect((await pipeline.run(items(strings, { mood: 'slow' }))).map((r) => r.findings[0]?.message)).toEqual(['slow: a'])
    // The settings callback is answered too: refused, within the timeout.
    expect(await pipeline.checkSettings({ mood: 'stuck' })).toEqual(['check "moody": plugin "moody" did not start within 200 ms with these options'])
    // A failed start is not kept: the next run starts it again.
    expect((await pipeline.run(items(strings, { mood: 'flaky' }))).map((r) => r.findings[0]?.code)).toEqual(['plugin-not-started'])
    expect((await pipeline.run(items(strings, { mood: 'flaky' }))).map((r) => r.findings[0]?.message)).toEqual(['flaky: a'])
  })

  it('is not started at all when its `if` selects no string of the run', async () => {
    const { pipeline, counts } = await load(body.replace("with: { mood: '${settings.mood}' }", "with: { mood: '${settings.mood}' }\n    if: key == \"never\""))
    const r = await pipeline.run(items([{ source: 'a', translation: 'x' }], { mood: 'grumpy' }))
    expect(r.map(seen)).toEqual([{ output: 'passed', port: 'approved', retry: undefined, findings: [] }])
    expect(counts.get('moody.created')).toBe(1)
  })
})

// Rule: a create() run at load (options known without a step) is waited for at most the check's
// `timeout`, as at run time: one that never ends fails the load, located at the check, and does not
// hold validate, the start or a reload; an instance that arrives late is closed.
describe('a create() that does not end at load', () => {
  const loadWithin = async (body: string, deps = testDeps({ pluginsDir: PLUGINS })) => {
    const { paths } = writePipelines({ 'p.yaml': pipelineYaml(body) })
    const started = Date.now()
    const r = await loadPipelines(paths, deps)
    if (r.ok) await r.set.close(0)
    return { errors: r.ok ? [] : r.errors.map((e) => `${e.line} ${e.message}`), ms: Date.now() - started }
  }

  it('a check: the load fails after its timeout, at the check', async () => {
    const { errors, ms } = await loadWithin("checks:\n  - uses: moody\n    with: { mood: stuck }\n    timeout: 100\nroute:\n  - to: passed\n")
    expect(errors).toEqual(['9 check "moody": plugin "moody" did not start within 100 ms (its create() has not ended; `timeout` sets the limit)'])
    expect(ms).toBeLessThan(3000)
  })

  it('an event handler: the same', async () => {
    const { errors, ms } = await loadWithin("checks: []\nroute:\n  - to: passed\nevents:\n  - on: project.translated\n    uses: moody\n    with: { mood: stuck }\n    timeout: 100\n")
    expect(errors).toEqual([expect.stringMatching(/^13 check "moody": plugin "moody" did not start within 100 ms/)])
    expect(ms).toBeLessThan(3000)
  })

  it('an instance that arrives after the timeout is closed', async () => {
    const deps = testDeps({ pluginsDir: PLUGINS })
    const { errors } = await loadWithin("checks:\n  - uses: moody\n    with: { mood: slow }\n    timeout: 100\nroute:\n  - to: passed\n", deps)
    expect(errors).toEqual([expect.stringContaining('did not start within 100 ms')])
    expect(deps.counts.get('moody.closed')).toBeUndefined()
    await new Promise((r) => setTimeout(r, 500))
    expect(deps.counts.get('moody.closed')).toBe(1)
  })
})

describe('a plugin with neither check() nor checkBatch() for the step\'s settings', () => {
  it('plugin-bad-result on each string; with retry, each is marked for retry', async () => {
    const { pipeline } = await load(`settings:
  properties:
    hollow: { type: boolean, default: false }
checks:
  - uses: hollow
    with: { hollow: '\${settings.hollow}' }
${ROUTES}on-error: retry
`)
    const r = await pipeline.run(items([{ source: 'a' }, { source: 'b' }], { hollow: true }))
    expect(r.map(seen)).toEqual([0, 1].map(() => ({ output: null, port: '', retry: true, findings: [engine('plugin-bad-result', 'has neither check() nor checkBatch()', 'hollow')] })))
    const [fine] = await pipeline.run(items([{ source: 'a' }], { hollow: false }))
    expect(seen(fine!)).toEqual({ output: 'passed', port: 'approved', retry: undefined, findings: [] })
  })
})

describe('the fields of a finding', () => {
  const body = (severity = '') => `checks:
  - uses: rich
${severity}route:
  - if: errors == 3 and warnings == 1 and infos == 1 and errors.rich == 3 and warnings.rich == 1
    to: failed
  - to: passed
`
  it('keep their check, code, span and suggestion; a severity that is not one becomes error', async () => {
    const { pipeline } = await load(body())
    const [r] = await pipeline.run(items([{ source: 'a' }]))
    expect(r!.findings).toEqual([
      { check: 'rich', severity: 'error', message: 'plain' },
      { check: 'rich', severity: 'warning', message: 'warned', code: 'w-1', span: { start: 0, end: 1 }, suggestion: '' },
      { check: 'rich/sub', severity: 'info', message: 'noted', suggestion: 'x' },
      { check: 'rich', severity: 'error', message: 'odd severity' },
      { check: 'rich', severity: 'error', message: 'source a' },
    ])
    // Counted by severity and under the check that made them, whatever check id they carry.
    expect(r!.output).toBe('failed')
  })

  it('the check\'s severity replaces each finding\'s', async () => {
    const { pipeline } = await load(body('    severity: info\n'))
    const [r] = await pipeline.run(items([{ source: 'a' }]))
    expect(r!.findings.map((f) => f.severity)).toEqual(['info', 'info', 'info', 'info', 'info'])
    expect(r!.output).toBe('passed')
  })
})

describe('a check() that writes into what the run\'s strings share', () => {
  // Settings and languages are one object for the run's strings: the write fails on its own string
  // (plugin-threw), and the strings after it still see the step's settings and their language.
  it('fails its own string; the others keep their settings and language', async () => {
    const { pipeline } = await load(`settings:
  properties:
    strict: { type: boolean, default: false }
checks:
  - uses: meddler
route:
  - if: settings.strict or target.language != "fr"
    to: failed
  - to: passed
on-error: park
`)
    const batch = items([{ source: 'MEDDLE' }, { source: 'after' }], { strict: false })
    batch[1]!.targetLanguage = batch[0]!.targetLanguage // as a run's strings of one language may share it
    const r = await pipeline.run(batch)
    expect(r.map(seen)).toEqual([
      { output: null, port: '', retry: undefined, findings: [expect.stringMatching(/^engine\/plugin-threw\/error: plugin "meddler" \(check "meddler"\) failed: Cannot (add|assign)/)] },
      { output: 'passed', port: 'approved', retry: undefined, findings: [] },
    ])
  })
})

describe('whatever a plugin throws', () => {
  // Rule: a plugin may throw anything (null, a string, an object with no usable toString): it is a
  // plugin-threw finding with some text, never an error of the engine itself.
  it('becomes a plugin-threw result with text', async () => {
    const thrown = [null, undefined, 'no config', Object.create(null), new Error('boom')]
    const results = await settleWithin(thrown.map((t) => Promise.reject(t)), 1000)
    expect(results).toEqual([
      { code: 'plugin-threw', error: 'null' },
      { code: 'plugin-threw', error: 'undefined' },
      { code: 'plugin-threw', error: 'no config' },
      { code: 'plugin-threw', error: '[object Object]' },
      { code: 'plugin-threw', error: 'boom' },
    ])
  })
})
