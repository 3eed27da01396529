import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { applyDefect, createSampleProject, DEFECT_CHECK, DEFECT_KINDS, type SampleString, type SampleTranslation } from '../../src/emulator/sample-project.js'
import { loadPipelines } from '../../src/engine/load-pipelines.js'
import { languageFromCode } from '../../src/engine/languages.js'
import type { Item, PluralForm } from '../../src/engine/types.js'
import { memoryCacheFor } from '../../src/cli/cli-io.js'
import { silentLogger } from '../../src/util/logger.js'
import { PRESETS } from '../../plugins/presets.js'
import { PHRASES, PLURAL_CATEGORIES, PUNCTUATION_EQUIVALENTS, type TargetCode } from '../../src/emulator/phrases.js'

// A strict QA gate in miniature: what "genuinely correct" means for the sample translations.
const PLACEHOLDERS = /\{\{\w+\}\}|%\d+\$[sd]|%[sd]|\{\w+(?=[,}])/g
const TAGS = /<\/?\w+[^>]*>/g
const sorted = (text: string, re: RegExp): string[] => [...text.matchAll(re)].map((m) => m[0]).sort()
const numbers = (text: string): string[] => sorted(text.replace(PLACEHOLDERS, ''), /\d+/g)
function ending(text: string): string {
  const last = text.at(-1) ?? ''
  for (const [canonical, forms] of Object.entries(PUNCTUATION_EQUIVALENTS)) if (forms.includes(last)) return canonical
  return 'none'
}

function problems(source: string, translation: string, maxLength: number): string[] {
  const out: string[] = []
  if (translation === '') out.push('empty')
  if (translation === source) out.push('identical to source')
  if (JSON.stringify(sorted(source, PLACEHOLDERS)) !== JSON.stringify(sorted(translation, PLACEHOLDERS))) out.push('placeholders')
  if (JSON.stringify(sorted(source, TAGS)) !== JSON.stringify(sorted(translation, TAGS))) out.push('tags')
  if (JSON.stringify(numbers(source)) !== JSON.stringify(numbers(translation))) out.push('numbers')
  if (ending(source) !== ending(translation)) out.push('ending punctuation')
  if (/\s{2,}/.test(translation)) out.push('doubled space')
  if (maxLength > 0 && translation.length > maxLength) out.push('maxLength')
  return out
}

function problemsOf(str: SampleString, t: SampleTranslation): string[] {
  if (t.plurals) return t.plurals.flatMap((form) => problems(str.text, form.text, str.maxLength).map((p) => `${form.plural}: ${p}`))
  return problems(str.text, t.text, str.maxLength)
}

const ALL = ['de', 'fr', 'ja', 'ar', 'ru']

describe('sample project', () => {
  it('is deterministic from the seed', () => {
    const a = createSampleProject({ seed: 7, strings: 120, languages: ALL })
    const b = createSampleProject({ seed: 7, strings: 120, languages: ALL })
    const c = createSampleProject({ seed: 8, strings: 120, languages: ALL })
    const flat = (p: typeof a) => p.strings.map((s) => [s.id, s.key, s.text, [...s.translations.values()].map((t) => [t.text, t.defect])])
    expect(flat(a)).toEqual(flat(b))
    expect(flat(a)).not.toEqual(flat(c))
  })

  it('uses every phrase once per cycle and keeps keys unique', () => {
    const p = createSampleProject({ strings: PHRASES.length * 2 })
    expect(new Set(p.strings.slice(0, PHRASES.length).map((s) => s.template.key)).size).toBe(PHRASES.length)
    expect(new Set(p.strings.map((s) => s.key)).size).toBe(p.strings.length)
    expect(new Set(p.strings.map((s) => s.id)).size).toBe(p.strings.length)
  })

  it('has files of several types and strings with placeholders, tags, plurals, maxLength', () => {
    const p = createSampleProject({ strings: PHRASES.length })
    expect(new Set([...p.files.values()].map((f) => f.type))).toEqual(new Set(['json', 'android', 'macosx', 'xliff']))
    expect(p.strings.some((s) => s.hasPlurals)).toBe(true)
    expect(p.strings.some((s) => s.type === 'icu')).toBe(true)
    expect(p.strings.some((s) => s.maxLength > 0)).toBe(true)
    expect(p.strings.some((s) => /<b>/.test(s.text))).toBe(true)
    for (const style of [/\{count/, /%s/, /\{\{\w+\}\}/]) expect(p.strings.some((s) => style.test(s.text))).toBe(true)
    expect(p.step).toMatchObject({ type: 'Application', languages: ['de', 'fr'], applicationModule: { moduleKey: 'qa-gate' } })
  })

  it('every correct translation passes a strict QA gate, in every language', () => {
    const p = createSampleProject({ strings: PHRASES.length, languages: ALL, defectRate: 0 })
    const failures: string[] = []
    for (const str of p.strings) {
      for (const [lang, t] of str.translations) {
        expect(t.defect).toBeNull()
        expect(t.expected).toBe('approved')
        const found = problemsOf(str, t)
        if (found.length) failures.push(`${str.key} ${lang}: ${found.join(', ')} (${JSON.stringify(t.text)})`)
      }
    }
    expect(failures).toEqual([])
  })

  it('keeps plain translations within 1.5x the source length (a length check must not fire)', () => {
    const p = createSampleProject({ strings: PHRASES.length, languages: ALL, defectRate: 0 })
    const long: string[] = []
    for (const str of p.strings) {
      if (str.type !== 'text') continue
      for (const [lang, t] of str.translations) if (t.text.length > str.text.length * 1.5) long.push(`${str.key} ${lang}`)
    }
    expect(long).toEqual([])
  })

  it('gives plural strings the plural forms of each language', () => {
    const p = createSampleProject({ strings: PHRASES.length, languages: ALL })
    const plural = p.strings.find((s) => s.hasPlurals)!
    expect(plural.sourcePlurals?.map((f) => f.plural)).toEqual(['one', 'other'])
    for (const lang of ALL) {
      expect(plural.translations.get(lang)!.plurals!.map((f) => f.plural)).toEqual(PLURAL_CATEGORIES[lang as TargetCode])
    }
  })

  it('puts exactly one obvious defect on about the configured fraction', () => {
    const p = createSampleProject({ strings: 3000, languages: ['de', 'fr', 'ru'], defectRate: 0.2 })
    let defective = 0
    let total = 0
    const kinds = new Set<string>()
    for (const str of p.strings) {
      for (const t of str.translations.values()) {
        total++
        if (!t.defect) continue
        defective++
        kinds.add(t.defect)
        expect(t.expected).toBe('translated')
        // The miniature gate above knows the first defects only; the others are checked against
        // the real qa-gate below.
        if (['dropped-placeholder', 'broken-tag', 'empty', 'double-space'].includes(t.defect)) expect(problemsOf(str, t).length).toBeGreaterThan(0)
      }
    }
    expect(defective / total).toBeGreaterThan(0.17)
    expect(defective / total).toBeLessThan(0.23)
    expect(kinds).toEqual(new Set(DEFECT_KINDS))
  })

  it('applies each defect as one visible change', () => {
    expect(applyDefect('Datei %s wurde nicht gefunden.', 'dropped-placeholder')).toBe('Datei wurde nicht gefunden.')
    expect(applyDefect('Ihre Testphase endet am <b>{date}</b>.', 'broken-tag')).toBe('Ihre Testphase endet am <b>{date}.')
    expect(applyDefect('Abbrechen', 'double-space')).toMatch(/^\S+ {2}\S+$/)
    expect(applyDefect('Schritt {current} von {total}', 'double-space')).toBe('Schritt {current} von  {total}')
    expect(applyDefect('Abbrechen', 'empty')).toBe('')
  })

  it('honours outputs and rejects bad options', () => {
    const p = createSampleProject({ outputs: ['passed', 'failed', 'skipped'], languages: ['ja'] })
    expect(p.passOutput).toBe('passed')
    expect(p.failOutput).toBe('failed')
    expect(() => createSampleProject({ languages: ['xx'] })).toThrow(/no sample translations/)
    expect(() => createSampleProject({ languages: ['en'] })).toThrow(/source language/)
    expect(() => createSampleProject({ outputs: ['a'], failOutput: 'b' })).toThrow(/not among/)
  })

  // Its speed is the benchmark's business; here, only that a large project is whole.
  it('builds 50,000 strings', () => {
    const p = createSampleProject({ strings: 50_000, languages: ['de', 'fr'] })
    expect(p.strings).toHaveLength(50_000)
  })
})

// The planted defects against the real qa-gate pipeline, run in-process: each defect is an error of
// exactly the check DEFECT_CHECK names (and routes the string to the failing output), and every check
// of qa-gate that can report an error has a defect in every language. A check added to qa-gate
// without a planted defect fails here.
describe('planted defects against the shipped qa-gate', () => {
  const QA_GATE = fileURLToPath(new URL('../../pipelines/qa-gate.yaml', import.meta.url))

  /** Checks of qa-gate that can route a string to the failing output (not pinned to warning/info). */
  function errorChecksOfQaGate(): Set<string> {
    const doc = parseYaml(readFileSync(QA_GATE, 'utf8')) as { checks: Array<{ uses: string; id?: string; severity?: string; enabled?: boolean; overrides?: Record<string, { severity?: string; enabled?: boolean }> }> }
    const out = new Set<string>()
    for (const c of doc.checks) {
      const expanded = PRESETS[c.uses]
        ? PRESETS[c.uses]!.map((p) => ({ ...p, ...(c.overrides?.[p.id ?? p.uses] ?? {}) }) as { uses: string; id?: string; severity?: string; enabled?: boolean })
        : [c]
      for (const check of expanded) if (check.enabled !== false && check.severity !== 'warning' && check.severity !== 'info') out.add(check.id ?? check.uses)
    }
    return out
  }

  it('every defect fails exactly its check, and every error check of qa-gate has a defect in every language', async () => {
    const loaded = await loadPipelines([QA_GATE], { log: silentLogger(), cacheFor: memoryCacheFor(), env: {}, metrics: { add() {} } })
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors))
    try {
      const pipeline = loaded.set.all()[0]!
      const resolved = pipeline.resolveSettings({})
      if (!resolved.ok) throw new Error(resolved.errors.join('; '))
      // The first cycle (which plants every kind), and a project where every pair carries a defect
      // picked by the seed (to see the kinds on many phrases, not only the first that can carry them).
      const p = createSampleProject({ strings: PHRASES.length, languages: ALL })
      const all = createSampleProject({ strings: PHRASES.length * 3, languages: ALL, defectRate: 1, seed: 5 })
      const signal = new AbortController().signal
      const cases: Array<{ item: Item; str: SampleString; t: SampleTranslation; covers: boolean }> = []
      for (const str of [...p.strings, ...all.strings]) {
        for (const [lang, t] of str.translations) {
          const item: Item = {
            id: t.translationId, key: str.key, context: str.context, maxLength: str.maxLength, source: str.text, translation: t.text,
            isPlural: str.hasPlurals, fileType: p.files.get(str.fileId)!.type, filePath: p.files.get(str.fileId)!.path, labelIds: str.labelIds,
            sourceLanguage: languageFromCode('en'), targetLanguage: languageFromCode(lang), settings: resolved.settings,
            projectId: p.project.id, stepId: p.step.id, organizationId: p.organization.id, log: silentLogger(), signal,
            ...(t.plurals ? { plurals: t.plurals as PluralForm[] } : {}),
          }
          cases.push({ item, str, t, covers: cases.length < PHRASES.length * ALL.length })
        }
      }
      const results = await pipeline.run(cases.map((c) => c.item))
      const wrong: string[] = []
      const caught = new Map<string, Set<string>>(ALL.map((l) => [l, new Set()]))
      results.forEach((r, i) => {
        const { str, t, covers } = cases[i]!
        const errors = [...new Set(r.findings.filter((f) => f.severity === 'error').map((f) => f.check))]
        const want = t.defect ? [DEFECT_CHECK[t.defect]] : []
        if (JSON.stringify(errors) !== JSON.stringify(want) || r.port !== t.expected) {
          wrong.push(`${str.key} ${t.languageId} ${t.defect ?? 'correct'}: ${r.port} [${r.findings.map((f) => `${f.severity} ${f.check}: ${f.message}`).join('; ')}] ${JSON.stringify(t.text)}`)
        }
        if (covers && t.defect && errors.length === 1) caught.get(t.languageId)!.add(errors[0]!)
      })
      expect(wrong).toEqual([])
      const checks = errorChecksOfQaGate()
      expect(checks.size).toBeGreaterThan(10)
      expect(new Set(Object.values(DEFECT_CHECK))).toEqual(checks)
      for (const lang of ALL) {
        // Japanese has only the `other` plural form, which is the translation itself: no defect
        // there is the plural check's alone (an emptied `other` is also `empty`).
        const expected = new Set([...checks].filter((c) => !(lang === 'ja' && c === 'plurals')))
        expect({ lang, checks: caught.get(lang) }).toEqual({ lang, checks: expected })
      }
    } finally {
      await loaded.set.close(0)
    }
  }, 30_000)
})

describe('extra strings (the bench\'s adversarial texts)', () => {
  it('each text is the source and every translation, or only the translations beside extraSource', () => {
    const both = createSampleProject({ strings: 2, languages: ['de', 'fr'], extraTexts: ['((((', '<b><b>'] })
    const extras = both.strings.slice(2)
    expect(extras.map((s) => [s.key, s.text, s.translations.get('de')!.text, s.translations.get('fr')!.text])).toEqual([['extra_0', '((((', '((((', '(((('], ['extra_1', '<b><b>', '<b><b>', '<b><b>']])
    const translator = createSampleProject({ strings: 2, languages: ['de'], extraTexts: ['(((('], extraSource: 'Save the file' })
    const [extra] = translator.strings.slice(2)
    expect([extra!.text, extra!.translations.get('de')!.text]).toEqual(['Save the file', '(((('])
    // Routed to the failing port either way.
    expect(extra!.translations.get('de')!.expected).toBe(extras[0]!.translations.get('de')!.expected)
  })
})
