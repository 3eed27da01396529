// The pipeline's glossary, as the model sees it: inline terms or a CSV file. Only the terms that
// occur in a string's source are sent with it (fewer tokens, and a cache key that does not change
// when an unrelated term is added). TBX is parsed by the `terminology` plugin; this one stays small.
import { readFile } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import type { Language } from '../../src/engine/types.js'

export interface GlossaryTerm {
  term: string
  translation: string
  note?: string
}

export interface GlossaryEntry extends GlossaryTerm {
  /** Target language code the entry is for (`fr`, `pt-BR`); every language when absent. */
  language?: string
}

export interface Glossary {
  /** The entries relevant to a source text, for one target language. */
  termsFor(source: string, target: Language): GlossaryTerm[]
  size: number
}

/** RFC 4180 CSV: quoted fields, doubled quotes, separators and newlines inside quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  const src = text.replace(/^\uFEFF/, '')
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!
    if (quoted) {
      if (c === '"' && src[i + 1] === '"') { field += '"'; i++ } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') { row.push(field); field = '' } else if (c === '\n' || c === '\r') {
      if (c === '\r' && src[i + 1] === '\n') i++
      row.push(field); field = ''
      if (row.some((f) => f !== '')) rows.push(row)
      row = []
    } else field += c
  }
  row.push(field)
  if (row.some((f) => f !== '')) rows.push(row)
  return rows
}

const COLUMNS: Record<keyof GlossaryEntry, string[]> = {
  term: ['term', 'source', 'source term'],
  translation: ['translation', 'target', 'target term'],
  note: ['note', 'notes', 'description', 'comment'],
  language: ['language', 'lang', 'target language', 'locale'],
}

/** Entries from CSV text: a header naming the columns, or else columns term, translation, note. */
export function glossaryFromCsv(text: string): GlossaryEntry[] {
  const rows = parseCsv(text)
  const header = rows[0]?.map((h) => h.trim().toLowerCase()) ?? []
  const index = (k: keyof GlossaryEntry) => header.findIndex((h) => COLUMNS[k].includes(h))
  const hasHeader = index('term') >= 0 && index('translation') >= 0
  const at = hasHeader
    ? { term: index('term'), translation: index('translation'), note: index('note'), language: index('language') }
    : { term: 0, translation: 1, note: 2, language: -1 }
  const entries: GlossaryEntry[] = []
  for (const row of hasHeader ? rows.slice(1) : rows) {
    const get = (i: number) => (i >= 0 ? row[i]?.trim() ?? '' : '')
    const entry: GlossaryEntry = { term: get(at.term), translation: get(at.translation) }
    if (!entry.term) continue
    if (get(at.note)) entry.note = get(at.note)
    if (get(at.language)) entry.language = get(at.language)
    entries.push(entry)
  }
  return entries
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

function languageMatches(wanted: string, target: Language): boolean {
  const w = wanted.toLowerCase().replace('_', '-')
  const codes = [target.id, target.locale, target.editorCode, target.twoLettersCode, target.threeLettersCode]
    .filter((c): c is string => !!c).map((c) => c.toLowerCase().replace('_', '-'))
  return codes.includes(w)
}

export function createGlossary(entries: GlossaryEntry[]): Glossary {
  // Whole-word, case-insensitive: "file" should not match "profile".
  const compiled = entries.map((e) => ({ entry: e, pattern: new RegExp(`(?<![\\p{L}\\p{N}])${escape(e.term)}(?![\\p{L}\\p{N}])`, 'iu') }))
  return {
    size: entries.length,
    termsFor(source, target) {
      const terms: GlossaryTerm[] = []
      for (const { entry, pattern } of compiled) {
        if (entry.language && !languageMatches(entry.language, target)) continue
        if (!pattern.test(source)) continue
        const term: GlossaryTerm = { term: entry.term, translation: entry.translation }
        if (entry.note) term.note = entry.note
        terms.push(term)
      }
      return terms
    },
  }
}

/** The glossary option: inline entries, or the path of a CSV file relative to the pipeline. */
export async function loadGlossary(option: string | GlossaryEntry[] | undefined, pipelineDir: string): Promise<Glossary> {
  if (option === undefined) return createGlossary([])
  if (Array.isArray(option)) return createGlossary(option)
  const path = isAbsolute(option) ? option : resolve(pipelineDir, option)
  if (!/\.csv$/i.test(path)) throw new Error(`glossary "${option}": only CSV files (or inline terms) are read; export TBX to CSV with columns term,translation,note,language`)
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    throw new Error(`glossary "${option}": cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
  }
  return createGlossary(glossaryFromCsv(text))
}
