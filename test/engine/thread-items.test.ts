// A run's items and results as they cross between the main thread and a pipeline thread
// (src/engine/thread-items.ts): through a structured clone, as piscina sends them, every field of
// every item comes back as it was, in buildItem's shape; objects the run's strings share still are
// one object; results keep their findings, null outputs and retries in place.
import v8 from 'node:v8'
import { describe, expect, it } from 'vitest'
import { buildItem } from '../../src/engine/build-item.js'
import { languageFromCode } from '../../src/engine/languages.js'
import type { RunResult } from '../../src/engine/run-pipeline.js'
import { decodeItems, decodeResults, encodeItems, encodeResults, type ThreadItem } from '../../src/engine/thread-items.js'
import type { Item } from '../../src/engine/types.js'
import { silentLogger } from '../../src/util/logger.js'

const log = silentLogger()
const signal = new AbortController().signal
const en = languageFromCode('en')
const de = languageFromCode('de')
const settings = { maxLength: 40 }

function job(stringId: number, text: string, more: { fileType?: string; labelIds?: number[]; isPlural?: boolean } = {}) {
  return {
    stringId, projectId: 70, stepId: 30, organizationId: `org-${stringId % 2}`,
    string: { key: `key.${stringId}`, context: `context ${stringId}`, maxLength: 100 + stringId * 7, isPlural: more.isPlural ?? false, fileType: more.fileType ?? 'json', filePath: `/f/${stringId}.json`, labelIds: more.labelIds ?? [], text },
    sourceLanguage: en, targetLanguage: de,
  }
}

function runItems(): Item[] {
  return [
    buildItem(job(1, 'Hello {name}', { labelIds: [4, 5] }), { translation: { text: 'Hallo {name}' }, settings, log, signal }),
    // No translation fetched (no check needs one): the field is there, undefined.
    buildItem(job(2, 'No translation'), { settings, log, signal }),
    buildItem(job(3, '{n, plural, one {# file} other {# files}}', { isPlural: true, fileType: 'android' }), {
      translation: { plurals: [{ plural: 'one', text: '# Datei' }, { plural: 'other', text: '# Dateien' }] }, settings, log, signal,
    }),
    buildItem(job(4, 'Ünïcödé ✓ 🎉'), { translation: { text: '' }, settings, log, signal }),
  ]
}

/** An item without its logger and signal (what crosses). */
const plain = ({ log: _l, signal: _s, ...rest }: Item): ThreadItem => rest

describe('items crossing to a pipeline thread', () => {
  it('come back field for field after a structured clone, with the run logger and signal', () => {
    const items = runItems()
    const runLog = silentLogger()
    const runSignal = new AbortController().signal
    const back = decodeItems(structuredClone(encodeItems(items)), runLog, runSignal)
    expect(back.map(plain)).toEqual(items.map(plain))
    for (const item of back) {
      expect(item.log).toBe(runLog)
      expect(item.signal).toBe(runSignal)
    }
    expect(back[1]!.translation).toBeUndefined()
    expect(back[2]!.plurals).toEqual([{ plural: 'one', text: '# Datei' }, { plural: 'other', text: '# Dateien' }])
  })

  it('have the fields of buildItem, in its order, and nothing else', () => {
    const built = runItems()[0]!
    const back = decodeItems(encodeItems([built]), log, signal)[0]!
    expect(Object.keys(back)).toEqual(Object.keys(built))
    // A column for every field but the logger and signal, each as long as the run.
    const columns = encodeItems(runItems())
    expect(Object.keys(columns).sort()).toEqual(Object.keys(built).filter((k) => k !== 'log' && k !== 'signal').sort())
    for (const column of Object.values(columns)) expect(column).toHaveLength(4)
  })

  it('cross in V8’s dense array format (a holey array is cloned with an index key before every value)', () => {
    // The tag V8's serializer writes for an array, after its 2-byte header: 'A' dense, 'a' sparse.
    const tag = (a: unknown[]) => String.fromCharCode(v8.serialize(a)[2]!)
    const columns = encodeItems(runItems())
    expect(Object.fromEntries(Object.entries(columns).map(([field, column]) => [field, tag(column)]))).toEqual(Object.fromEntries(Object.keys(columns).map((field) => [field, 'A'])))
    const results = encodeResults([{ id: 1, output: 'o', port: 'p', findings: [] }, { id: 2, output: null, port: '', findings: [{ check: 'c', severity: 'error', message: 'm' }] }])
    expect([results.ids, results.outputs, results.ports, results.findings].map(tag)).toEqual(['A', 'A', 'A', 'A'])
  })

  it('share the objects the run shares (languages, settings) after a clone, as before it', () => {
    const back = decodeItems(structuredClone(encodeItems(runItems())), log, signal)
    expect(back[0]!.targetLanguage).toBe(back[3]!.targetLanguage)
    expect(back[0]!.sourceLanguage).toBe(back[2]!.sourceLanguage)
    expect(back[0]!.settings).toBe(back[1]!.settings)
  })

  it('an empty run stays empty', () => {
    const columns = structuredClone(encodeItems([]))
    expect(columns.id).toEqual([])
    expect(decodeItems(columns, log, signal)).toEqual([])
  })
})

describe('results coming back from a pipeline thread', () => {
  it('keep each string’s output, port, findings and retry in place', () => {
    const results: RunResult[] = [
      { id: 1, output: 'pass', port: 'approved', findings: [] },
      { id: 2, output: 'fail', port: 'sent-back', findings: [{ check: 'placeholders', severity: 'error', message: 'missing {name}', code: 'missing-placeholder', span: { start: 0, end: 6 } }] },
      { id: 3, output: null, port: '', findings: [{ check: 'engine', severity: 'error', message: 'plugin threw' }], retry: true },
      { id: 4, output: null, port: '', findings: [] },
      { id: 5, output: 'pass', port: 'approved', findings: [{ check: 'length', severity: 'warning', message: 'long' }, { check: 'length', severity: 'info', message: 'longer' }] },
    ]
    const back = decodeResults(structuredClone(encodeResults(results)))
    expect(back).toEqual(results)
    // Only a string to retry says so.
    expect(back.map((r) => 'retry' in r)).toEqual([false, false, true, false, false])
  })

  it('an empty run has no results', () => {
    expect(decodeResults(structuredClone(encodeResults([])))).toEqual([])
  })
})
