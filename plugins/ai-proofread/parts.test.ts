// The small parts of ai-proofread on their own: Retry-After, back-off, the budget, CSV glossaries.
import { describe, expect, it } from 'vitest'
import { languageFromCode } from '../../src/engine/languages.js'
import { backoffMs, retryAfterMs, sleep } from './backoff.js'
import { createGlossary, glossaryFromCsv, loadGlossary } from './glossary.js'
import { parseAnswer } from './model-client.js'
import { BudgetExhaustedError, TokenBudget } from './token-budget.js'
import { locateSpan, severityFor, verdictToFindings } from './to-findings.js'
import { estimateTokens, promptItem, promptLanguage, userMessage, type MqmCategory } from './prompt.js'

const headers = (h: Record<string, string>) => new Headers(h)

describe('ai-proofread parts', () => {
  it('reads Retry-After as seconds or an HTTP date, and retry-after-ms first', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(retryAfterMs(headers({ 'retry-after': '2' }), now)).toBe(2000)
    expect(retryAfterMs(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000)
    expect(retryAfterMs(headers({ 'retry-after': '3', 'retry-after-ms': '120' }), now)).toBe(120)
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), now)).toBeUndefined()
    expect(retryAfterMs(headers({}), now)).toBeUndefined()
  })

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffMs(0, 100, 30_000, () => 0)).toBe(50)
    expect(backoffMs(3, 100, 30_000, () => 1)).toBe(800)
    expect(backoffMs(20, 100, 30_000, () => 1)).toBe(30_000)
  })

  it('refuses a request the rolling hour cannot afford, counting requests in flight', () => {
    let now = 0
    const budget = new TokenBudget(1000, () => now)
    const settle = budget.reserve(600)
    expect(() => budget.reserve(600)).toThrow(BudgetExhaustedError)
    settle(300)
    budget.reserve(600)(700)
    expect(() => budget.reserve(1)).toThrow(/1000 of 1000/)
    now += 3_600_001
    expect(() => budget.reserve(900)).not.toThrow()
    expect(() => new TokenBudget(0).reserve(1e9)).not.toThrow()
  })

  it('parses CSV glossaries and picks whole-word terms for the target language', () => {
    const entries = glossaryFromCsv('\uFEFFSource,Target,Notes,Language\r\n"file, the noun",fichier,,fr\nfile,Datei,,de\n"say ""hi""",salut,casual,\n')
    expect(entries).toEqual([
      { term: 'file, the noun', translation: 'fichier', language: 'fr' },
      { term: 'file', translation: 'Datei', language: 'de' },
      { term: 'say "hi"', translation: 'salut', note: 'casual' },
    ])
    expect(glossaryFromCsv('cat,chat\ndog,chien')).toEqual([{ term: 'cat', translation: 'chat' }, { term: 'dog', translation: 'chien' }])
    const glossary = createGlossary([{ term: 'file', translation: 'Datei', language: 'de' }, { term: 'Save', translation: 'Speichern' }])
    expect(glossary.termsFor('Save the FILE', languageFromCode('de-DE'))).toEqual([{ term: 'file', translation: 'Datei' }, { term: 'Save', translation: 'Speichern' }])
    expect(glossary.termsFor('Your profile', languageFromCode('de'))).toEqual([])
    expect(glossary.termsFor('file', languageFromCode('fr'))).toEqual([])
  })

  it('maps severities by threshold and finds spans', () => {
    expect(['minor', 'major', 'critical'].map((s) => severityFor(s as 'minor', 'major'))).toEqual(['warning', 'error', 'error'])
    expect(locateSpan('Enregistrer le Fichier', 'fichier')).toEqual({ start: 15, end: 22, in: 'translation' })
    expect(locateSpan('abc', 'zzz')).toBeUndefined()
    expect(locateSpan('abc', '')).toBeUndefined()
  })

  it('rejects answers that are not JSON or not the schema, and clamps scores', () => {
    expect(parseAnswer('nope')).toBe('answer is not JSON')
    expect(parseAnswer('{"verdicts":[{"id":"1","score":"high","errors":[]}]}')).toMatch(/schema/)
    expect(parseAnswer(null)).toBe('empty answer')
    const ok = parseAnswer('{"verdicts":[{"id":"1","score":140,"errors":[]}]}')
    expect(ok instanceof Map && ok.get('1')).toEqual({ score: 100, errors: [] })
  })

  it('gives each MQM category its code, with the severity errorAt says', () => {
    const categories: [MqmCategory, string][] = [ // [category, its code]
      ['accuracy', 'accuracy'], ['fluency', 'fluency'], ['terminology', 'terminology'], ['style', 'style'],
      ['locale-conventions', 'locale-conventions'], ['design-markup', 'design-markup'],
    ]
    const verdict = { score: 40, errors: categories.map(([category]) => ({ category, severity: 'minor' as const, span: '', explanation: 'x', suggestion: '' })) }
    const findings = verdictToFindings(verdict, 'Bonjour', { errorAt: 'major', minScore: 50 })
    expect(findings.map((f) => ({ code: f.code, severity: f.severity }))).toEqual([
      { code: 'accuracy', severity: 'warning' },
      { code: 'fluency', severity: 'warning' },
      { code: 'terminology', severity: 'warning' },
      { code: 'style', severity: 'warning' },
      { code: 'locale-conventions', severity: 'warning' },
      { code: 'design-markup', severity: 'warning' },
      { code: 'below-min-score', severity: 'error' },
    ])
  })
})

describe('ai-proofread parts, edges', () => {
  it('takes retry-after-ms of 0, and skips a blank or negative one for Retry-After', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(retryAfterMs(headers({ 'retry-after-ms': '0', 'retry-after': '7' }), now)).toBe(0)
    expect(retryAfterMs(headers({ 'retry-after-ms': ' ', 'retry-after': '2' }), now)).toBe(2000)
    expect(retryAfterMs(headers({ 'retry-after-ms': '-5', 'retry-after': '2' }), now)).toBe(2000)
    expect(retryAfterMs(headers({ 'retry-after-ms': 'soon', 'retry-after': '2' }), now)).toBe(2000)
    expect(retryAfterMs(undefined, now)).toBeUndefined()
  })

  it('sleeps, and an abort cuts the sleep short with the signal\'s reason', async () => {
    await expect(sleep(1)).resolves.toBeUndefined()
    const before = new AbortController()
    before.abort(new Error('stopped before'))
    await expect(sleep(60_000, before.signal)).rejects.toThrow('stopped before')
    const during = new AbortController()
    const slept = sleep(60_000, during.signal)
    during.abort(new Error('stopped during'))
    await expect(slept).rejects.toThrow('stopped during')
    const after = new AbortController()
    await expect(sleep(1, after.signal)).resolves.toBeUndefined()
    after.abort(new Error('too late'))
  })

  it('finds a span ignoring case only when the exact text is not there, and leaves out one that would not fit', () => {
    expect(locateSpan('Fichier ouvert', 'FICHIER')).toEqual({ start: 0, end: 7, in: 'translation' })
    expect(locateSpan('Fichier et fichier', 'fichier')).toEqual({ start: 11, end: 18, in: 'translation' })
    // İ lower-cases to i + U+0307, yet ignoring case does not equate them: no span.
    expect(locateSpan('Xİ', 'i\u0307')).toBeUndefined()
  })

  // Rule: offsets found ignoring case refer to the translation itself, not to a lower-cased copy
  // whose length differs after İ (lower case i + U+0307, two code units for one).
  it('finds a span ignoring case at its offset in the translation, after letters whose lower case is longer', () => {
    expect(locateSpan('İstanbul ABC defgh', 'abc')).toEqual({ start: 9, end: 12, in: 'translation' })
    expect(locateSpan('İİ Fichier (1) [x]', 'fichier (1) [X')).toEqual({ start: 3, end: 17, in: 'translation' })
    expect(locateSpan('straße', 'STRASSE')).toBeUndefined()
  })

  // Rule: a span covers whole characters: one starting or ending inside a surrogate pair is widened to it.
  it('widens a span that would cut a surrogate pair in two', () => {
    expect(locateSpan('Salut 😀 toi', '\ud83d')).toEqual({ start: 6, end: 8, in: 'translation' })
    expect(locateSpan('Salut 😀 toi', '\ude00 toi')).toEqual({ start: 6, end: 12, in: 'translation' })
    expect(locateSpan('A😀b', 'B')).toEqual({ start: 3, end: 4, in: 'translation' })
    expect(locateSpan('😀😀', '\ude00\ud83d')).toEqual({ start: 0, end: 4, in: 'translation' })
  })

  it('words each category in its message, suggests only a change, and scores against minScore', () => {
    const error = (category: MqmCategory, span: string, suggestion: string) => ({ category, severity: 'major' as const, span, explanation: 'why', suggestion })
    const findings = verdictToFindings({ score: 90, errors: [error('locale-conventions', 'fichier', 'document'), error('design-markup', 'Bonjour', 'Bonjour')] }, 'Bonjour le fichier', { errorAt: 'major', minScore: 0 })
    expect(findings.map((f) => ({ code: f.code, message: f.message, span: f.span, suggestion: f.suggestion }))).toEqual([
      { code: 'locale-conventions', message: 'locale conventions (major): why', span: { start: 11, end: 18, in: 'translation' }, suggestion: 'document' },
      { code: 'design-markup', message: 'design/markup (major): why', span: { start: 0, end: 7, in: 'translation' }, suggestion: undefined },
    ])
    expect(verdictToFindings({ score: 0, errors: [] }, 'x', { errorAt: 'major', minScore: 0 })).toEqual([])
    expect(verdictToFindings({ score: 50, errors: [] }, 'x', { errorAt: 'major', minScore: 50 })).toEqual([])
    expect(verdictToFindings({ score: 49, errors: [] }, 'x', { errorAt: 'major', minScore: 50 }).map((f) => [f.code, f.message])).toEqual([['below-min-score', 'score 49 is below the minimum of 50']])
  })

  it('names languages by locale, editor code or id, and writes the user message', () => {
    expect(promptLanguage({ ...languageFromCode('pt-BR'), name: 'Portuguese, Brazilian' })).toEqual({ name: 'Portuguese, Brazilian', code: 'pt-BR' })
    expect(promptLanguage({ ...languageFromCode('de'), locale: '', name: '' })).toEqual({ name: 'de', code: 'de' })
    expect(promptLanguage({ ...languageFromCode('de'), locale: '', editorCode: '', id: 'de-x', name: '' })).toEqual({ name: 'de-x', code: 'de-x' })
    const item = promptItem('1', { key: 'k', context: '', maxLength: 0, source: 'Save', translation: 'Speichern', plurals: [], glossary: [] })
    expect(item).toEqual({ id: '1', key: 'k', context: '', maxLength: 0, source: 'Save', translation: 'Speichern' })
    expect(JSON.stringify(item)).not.toMatch(/plurals|glossary/) // empty fields cost tokens
    const withAll = promptItem('2', { key: 'k', context: '', maxLength: 0, source: 'Save', translation: 'Speichern', plurals: [{ plural: 'one', text: 'x' }], glossary: [{ term: 'Save', translation: 'Speichern' }] })
    expect(withAll.plurals).toEqual([{ plural: 'one', text: 'x' }])
    expect(withAll.glossary).toEqual([{ term: 'Save', translation: 'Speichern' }])
    const en = { name: 'English', code: 'en' }
    const de = { name: 'German', code: 'de' }
    const without = userMessage({ sourceLanguage: en, targetLanguage: de, instructions: '', items: [item] })
    expect(without).toBe('Review these translations from English (en) into German (de). maxLength 0 means no limit.\n\n```json\n' + JSON.stringify({ sourceLanguage: en, targetLanguage: de, items: [item] }) + '\n```')
    expect(userMessage({ sourceLanguage: en, targetLanguage: de, instructions: 'Use Sie.', items: [item] })).toBe('Instructions for this project:\nUse Sie.\n\n' + without)
    expect(estimateTokens('abcdefg')).toBe(3)
  })
})

describe('ai-proofread token budget, edges', () => {
  it('allows the whole budget, settles a request once, and forgets spending an hour old to the millisecond', () => {
    let now = 0
    const budget = new TokenBudget(1000, () => now)
    const first = budget.reserve(1000)
    first(400)
    first(400)
    budget.reserve(600)
    let refused: unknown
    try { budget.reserve(1) } catch (error) { refused = error }
    expect(refused).toMatchObject({ name: 'BudgetExhaustedError', limit: 1000, used: 1000, wanted: 1 })
    now = 3_600_000
    expect(() => budget.reserve(400)).not.toThrow()
  })
})

describe('ai-proofread glossaries, edges', () => {
  it('reads CSV with CR line ends, a newline inside quotes, blank rows and a header with only one known column', () => {
    expect(glossaryFromCsv('term,translation,note,language\r"two\nlines",zwei Zeilen,,de\r\r,,,\r  file  ,  Datei  ,  the noun  ,  de  ')).toEqual([
      { term: 'two\nlines', translation: 'zwei Zeilen', language: 'de' },
      { term: 'file', translation: 'Datei', note: 'the noun', language: 'de' },
    ])
    // "term" alone is not a header: the row is an entry, and the columns are term, translation, note.
    expect(glossaryFromCsv('term,Begriff\nsave,speichern,a verb')).toEqual([{ term: 'term', translation: 'Begriff' }, { term: 'save', translation: 'speichern', note: 'a verb' }])
    expect(glossaryFromCsv('Translation,Term\nDatei,file')).toEqual([{ term: 'file', translation: 'Datei' }])
  })

  it('matches terms with regex characters, notes, and languages named with an underscore', () => {
    const glossary = createGlossary([{ term: 'C++', translation: 'C++', note: 'the language', language: 'pt_BR' }])
    expect(glossary.termsFor('Learn C++ now', languageFromCode('pt-BR'))).toEqual([{ term: 'C++', translation: 'C++', note: 'the language' }])
    expect(glossary.termsFor('Learn C now', languageFromCode('pt-BR'))).toEqual([])
    expect(glossary.termsFor('Learn C++ now', languageFromCode('pt-PT'))).toEqual([])
  })

  it('loads inline terms, refuses files other than CSV and says why a file cannot be read', async () => {
    expect((await loadGlossary([{ term: 'file', translation: 'Datei' }], '/')).size).toBe(1)
    expect((await loadGlossary(undefined, '/')).size).toBe(0)
    await expect(loadGlossary('terms.tbx', '/')).rejects.toThrow('glossary "terms.tbx": only CSV files (or inline terms) are read')
    await expect(loadGlossary('missing.csv', '/nonexistent-dir')).rejects.toThrow('glossary "missing.csv": cannot read /nonexistent-dir/missing.csv: ENOENT')
  })
})
