import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runTry } from '../../src/cli/try.js'
import { FIXTURE_PLUGINS, FIXTURES, testDeps } from '../engine/helpers.js'
import { captureIo } from './io.js'

const PIPELINE = path.join(FIXTURES, 'pipelines', 'try-gate.yaml')
const env = { PLUGINS_DIR: FIXTURE_PLUGINS }
const EN_FR = { sourceLanguage: 'en', targetLanguage: 'fr' }

describe('switchyard try', () => {
  it('prints one { id, output (the port), findings } per string, in input order', async () => {
    const io = captureIo(env)
    expect(await runTry([PIPELINE, path.join(FIXTURES, 'strings', 'try.json')], io)).toBe(0)
    expect(JSON.parse(io.out())).toEqual([
      { id: 11, output: 'translated', findings: [{ check: 'no-double-space', code: 'forbidden-pattern', severity: 'error', message: 'Double space.' }] },
      { id: 12, output: '', findings: [{ check: 'shout', code: null, severity: 'warning', message: 'The translation shouts.' }] },
      { id: 13, output: 'approved', findings: [] },
      // Its own settings: minLetters 10, so OUVRIR is not shouting.
      { id: 4, output: 'approved', findings: [] },
    ])
    expect(io.err()).toBe('')
  })

  it('takes a webhook batch body: strings without translations get the source-only checks', async () => {
    const io = captureIo(env)
    expect(await runTry([PIPELINE, path.join(FIXTURES, 'strings', 'batch.json')], io)).toBe(0)
    expect(JSON.parse(io.out())).toEqual([{ id: 2814, output: 'translated', findings: [{ check: 'batcher', code: null, severity: 'error', message: 'bad word' }] }])
    expect(io.err()).toMatch(/no translation; checks that need one are skipped/)
  })

  it('--pretty prints a table, counts per output and plugin metrics', async () => {
    const io = captureIo(env)
    expect(await runTry([PIPELINE, path.join(FIXTURES, 'strings', 'try.json'), '--pretty'], io)).toBe(0)
    const out = io.out()
    expect(out).toMatch(/^Try gate \(try-gate\): 4 strings/)
    expect(out).toMatch(/11\s+translated \(failed\)\s+1\s+Save file/)
    expect(out).toMatch(/error\s+no-double-space \[forbidden-pattern\]: Double space\./)
    expect(out).toMatch(/Passed -> approved\s+2/)
    expect(out).toMatch(/parked \(""\)\s+1/)
    expect(out).toMatch(/batcher\.calls\s+2/) // one run per distinct settings
  })

  it('echoes the caller\'s ids unchanged, strings or numbers', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-try-'))
    try {
      const file = path.join(dir, 'ids.json')
      const ids = ['welcome.title', 'A-00017', '0042', 42, 123456789012, 1.5]
      writeFileSync(file, JSON.stringify([...ids.map((id) => ({ id, source: 'Close', translation: 'Fermer', ...EN_FR })), { source: 'Close', translation: 'Fermer', ...EN_FR }]))
      const io = captureIo(env)
      expect(await runTry([PIPELINE, file], io)).toBe(0)
      // The last has no id: its position.
      expect((JSON.parse(io.out()) as Array<{ id: unknown }>).map((r) => r.id)).toEqual([...ids, 7])
      const pretty = captureIo(env)
      expect(await runTry([PIPELINE, file, '--pretty'], pretty)).toBe(0)
      expect(pretty.out()).toMatch(/^welcome\.title\s+approved/m)
      const bad = captureIo(env)
      writeFileSync(file, JSON.stringify([{ id: { n: 1 }, source: 'x' }]))
      expect(await runTry([PIPELINE, file], bad)).toBe(2)
      // Entries are counted from 1, as an id left out is.
      expect(bad.err()).toMatch(/entry 1: "id" must be a string or a number/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  // Both languages are required (the input format names them): a string without one was checked as
  // en -> fr without a word, so a German translation was judged by French rules.
  it('refuses a string without its languages, or with one that is not a code (exit 2, naming the entry)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-try-'))
    try {
      const file = path.join(dir, 'languages.json')
      const refused: Array<[object, RegExp]> = [
        [{ sourceLanguage: 'en' }, /\/languages\.json: entry 2: "targetLanguage" is missing: give a language code such as "fr" \(or a language record with its "id"\)\n$/],
        [{ targetLanguage: 'de' }, /\/languages\.json: entry 2: "sourceLanguage" is missing: give a language code such as "en"/],
        [{ sourceLanguage: 'en', targetLanguage: '' }, /entry 2: "targetLanguage" must be a language code such as "fr" \(or a language record with its "id"\), not ""\n$/],
        [{ sourceLanguage: 'en', targetLanguage: 49 }, /entry 2: "targetLanguage" must be a language code .*, not 49\n$/],
        [{ sourceLanguage: { name: 'English' }, targetLanguage: 'de' }, /entry 2: "sourceLanguage" must be a language code .*, not \{"name":"English"\}\n$/],
        // Not BCP 47: a language's name (a subtag of 5 to 8 letters is well-formed, and no language's),
        // a code with a space, a private-use tag.
        [{ sourceLanguage: 'en', targetLanguage: 'french' }, /\/languages\.json: entry 2: "targetLanguage" "french" is not a BCP 47 language code such as "fr" or "pt-BR"\n$/],
        [{ sourceLanguage: 'English', targetLanguage: 'de' }, /entry 2: "sourceLanguage" "English" is not a BCP 47 language code such as "en" or "pt-BR"\n$/],
        [{ sourceLanguage: 'en', targetLanguage: 'pt BR' }, /entry 2: "targetLanguage" "pt BR" is not a BCP 47 language code/],
        [{ sourceLanguage: 'en', targetLanguage: 'x-klingon' }, /entry 2: "targetLanguage" "x-klingon" is not a BCP 47 language code/],
      ]
      for (const [languages, message] of refused) {
        writeFileSync(file, JSON.stringify([{ id: 1, source: 'Close', translation: 'Fermer', ...EN_FR }, { id: 2, source: 'Close', translation: 'Schließen', ...languages }]))
        const io = captureIo(env)
        expect(await runTry([PIPELINE, file], io), JSON.stringify(languages)).toBe(2)
        expect(io.err()).toMatch(message)
        expect(io.out()).toBe('')
      }
      // A code, or a record with its id, as the service sends one.
      writeFileSync(file, JSON.stringify([{ id: 1, source: 'Close', translation: 'Schließen', sourceLanguage: 'en', targetLanguage: { id: 'de', name: 'German' } }]))
      const io = captureIo(env)
      expect(await runTry([PIPELINE, file], io)).toBe(0)
      expect(JSON.parse(io.out())).toEqual([{ id: 1, output: 'approved', findings: [] }])
      // Codes with a region or script, in any case, `_` for `-` as the engine reads them.
      writeFileSync(file, JSON.stringify(['pt-BR', 'sr_Latn', 'zh-Hant-TW', 'EN-us', 'fil'].map((targetLanguage, i) => ({ id: i + 1, source: 'Close', translation: 'Fechar', sourceLanguage: 'en', targetLanguage }))))
      const codes = captureIo(env)
      expect(await runTry([PIPELINE, file], codes), codes.err()).toBe(0)
      expect((JSON.parse(codes.out()) as unknown[]).length).toBe(5)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('exits 1 with located errors for a broken pipeline, 2 for bad usage or input', async () => {
    const broken = captureIo(env)
    expect(await runTry([path.join(FIXTURES, 'pipelines', 'broken.yaml'), path.join(FIXTURES, 'strings', 'try.json')], broken)).toBe(1)
    expect(broken.err()).toMatch(/broken\.yaml:4:1 unknown key "colour"/)
    const usage = captureIo(env)
    expect(await runTry([PIPELINE], usage)).toBe(2)
    expect(usage.err()).toMatch(/^usage: switchyard try/)
    const input = captureIo(env)
    expect(await runTry([PIPELINE, PIPELINE], input)).toBe(2)
    expect(input.err()).toMatch(/try-gate\.yaml: /)
  })

  it('prints the code of the engine\'s own findings: a text too long to check, a plugin that failed', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-try-'))
    try {
      const pipeline = path.join(dir, 'engine.yaml')
      writeFileSync(pipeline, [
        'key: engine', 'name: Engine', 'input: [translated]', 'maxTextLength: 30',
        'outputs:', '  passed: { port: approved }', '  failed: { port: translated }',
        'checks:', '  - uses: numbers', '  - uses: flaky',
        'route:', '  - if: errors > 0', '    to: failed', '  - to: passed', '',
      ].join('\n'))
      const strings = path.join(dir, 'strings.json')
      writeFileSync(strings, JSON.stringify([
        { id: 1, source: 'Save', translation: 'Enregistrer '.repeat(3), ...EN_FR },
        { id: 2, source: 'boom', translation: 'boum', ...EN_FR },
      ]))
      const io = captureIo(env)
      expect(await runTry([pipeline, strings], io)).toBe(0)
      const out = JSON.parse(io.out()) as Array<{ id: number; output: string; findings: Array<{ check: string; code: string }> }>
      expect(out.map((r) => [r.id, r.output, r.findings.map((f) => `${f.check}/${f.code}`)])).toEqual([
        [1, 'translated', ['numbers/text-too-long', 'flaky/text-too-long']],
        [2, '', ['engine/plugin-threw']],
      ])
      const pretty = captureIo(env)
      expect(await runTry([pipeline, strings, '--pretty'], pretty)).toBe(0)
      expect(pretty.out()).toMatch(/error\s+engine \[plugin-threw\]: plugin "flaky" \(check "flaky"\) failed: kaboom/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  // The worker runs a step with nothing saved without a default its own field refuses (a warning
  // at load; docs/settings.md), and with the other defaults: try said only "settings of string 1:
  // ..." and exited 2, then ran without any default while the worker applied the valid ones.
  it('runs strings without settings as the worker does when one of the pipeline\'s own defaults is invalid; settings given that fail are an error', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-try-'))
    try {
      const pipeline = path.join(dir, 'defaults.yaml')
      writeFileSync(pipeline, [
        'key: defaults', 'name: Defaults', 'input: [translated]',
        'outputs:', '  passed: { port: approved }', '  failed: { port: translated }',
        'settings:', '  properties:', '    limit: { type: integer, minimum: 1, default: 0 }', '    longest: { type: integer, default: 5 }',
        'checks:', '  - uses: length', '    with: { maxLength: \'${settings.limit}\' }', '  - uses: length', '    id: longest', '    with: { maxLength: \'${settings.longest}\' }',
        'route:', '  - if: errors > 0', '    to: failed', '  - to: passed', '',
      ].join('\n'))
      const strings = path.join(dir, 'strings.json')
      writeFileSync(strings, JSON.stringify([{ id: 1, source: 'Save', translation: 'Enregistrer', ...EN_FR }]))
      const io = captureIo(env)
      expect(await runTry([pipeline, strings], io)).toBe(0)
      // `limit` has no value (its default is refused), `longest` its default, 5: as the worker runs it.
      expect(JSON.parse(io.out())).toEqual([{ id: 1, output: 'translated', findings: [expect.objectContaining({ check: 'longest', severity: 'error' })] }])
      expect(io.err()).not.toMatch(/defaults are invalid/)
      const { loadPipelines } = await import('../../src/engine/load-pipelines.js')
      const loaded = await loadPipelines([pipeline], testDeps())
      if (!loaded.ok) throw new Error('the pipeline does not load')
      expect(loaded.set.get('defaults')!.resolveSettings(undefined, { run: true })).toEqual({ ok: true, settings: { longest: 5 } })
      await loaded.set.close(0)
      writeFileSync(strings, JSON.stringify([{ id: 1, source: 'Save', translation: 'Enregistrer', ...EN_FR, settings: { limit: -3 } }]))
      const given = captureIo(env)
      expect(await runTry([pipeline, strings], given)).toBe(2)
      expect(given.err()).toMatch(/^settings of string 1: .*limit/m)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('prints the code of each finding of the built-in checks, in JSON and --pretty', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-try-'))
    try {
      const pipeline = path.join(dir, 'codes.yaml')
      writeFileSync(pipeline, [
        'key: codes', 'name: Codes', 'input: [translated]',
        'outputs:', '  passed: { port: approved }', '  failed: { port: translated }',
        'checks:', '  - uses: placeholders', '  - uses: numbers',
        'route:', '  - if: errors > 0', '    to: failed', '  - to: passed', '',
      ].join('\n'))
      const strings = path.join(dir, 'strings.json')
      writeFileSync(strings, JSON.stringify([
        { id: 1, source: 'Delete %s?', translation: 'Supprimer ?', ...EN_FR },
        { id: 2, source: 'Page 3 of {total}', translation: 'Seite 4 von {total}', sourceLanguage: 'en', targetLanguage: 'de' },
      ]))
      const io = captureIo(env)
      expect(await runTry([pipeline, strings], io)).toBe(0)
      const out = JSON.parse(io.out()) as Array<{ id: number; findings: Array<{ check: string; code: string }> }>
      expect(out.map((r) => [r.id, r.findings.map((f) => `${f.check}/${f.code}`)])).toEqual([
        [1, ['placeholders/missing-placeholder']],
        [2, ['numbers/missing-number', 'numbers/extra-number']],
      ])
      const pretty = captureIo(env)
      expect(await runTry([pipeline, strings, '--pretty'], pretty)).toBe(0)
      expect(pretty.out()).toMatch(/error\s+placeholders \[missing-placeholder\]: Missing placeholder %s/)
      expect(pretty.out()).toMatch(/error\s+numbers \[extra-number\]: Number 4 is not in the source/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
