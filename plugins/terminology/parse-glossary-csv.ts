// CSV glossaries. Two layouts, told apart by the header row:
//  - long: columns `source`, `target` (and optional `language`, `source language`, `forbidden`,
//    `case sensitive`); several accepted or forbidden terms in one cell are separated by `|`;
//  - wide: no `target` column; the header names a language per column (`en,de,fr`), the first
//    column holds the source terms.
// Commas, semicolons or tabs as the delimiter (whichever the header uses); RFC 4180 quoting.
import type { GlossaryEntry } from './glossary-entry.js'

export function parseCsv(text: string, delimiter?: string): string[][] {
  const body = text.replace(/^\uFEFF/, '')
  const firstLine = body.split(/\r?\n/, 1)[0] ?? ''
  const sep = delimiter ?? ([',', ';', '\t'].map((d) => [d, firstLine.split(d).length] as const).sort((a, b) => b[1] - a[1])[0]![0])
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!
    if (quoted) {
      if (ch === '"' && body[i + 1] === '"') { field += '"'; i++ }
      else if (ch === '"') quoted = false
      else field += ch
    } else if (ch === '"' && field === '') quoted = true
    else if (ch === sep) { row.push(field); field = '' }
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && body[i + 1] === '\n') i++
      row.push(field); field = ''
      if (row.some((f) => f !== '')) rows.push(row)
      row = []
    } else field += ch
  }
  row.push(field)
  if (row.some((f) => f !== '')) rows.push(row)
  return rows
}

const COLUMNS: Record<string, keyof typeof want> = {
  source: 'source', term: 'source', 'source term': 'source', src: 'source',
  target: 'target', translation: 'target', 'target term': 'target', tgt: 'target',
  language: 'language', lang: 'language', locale: 'language', 'target language': 'language',
  'source language': 'sourceLanguage', forbidden: 'forbidden', 'forbidden terms': 'forbidden', deprecated: 'forbidden',
  'case sensitive': 'caseSensitive', casesensitive: 'caseSensitive', case_sensitive: 'caseSensitive',
}
const want = { source: -1, target: -1, language: -1, sourceLanguage: -1, forbidden: -1, caseSensitive: -1 }

const list = (cell: string | undefined) => (cell ?? '').split('|').map((s) => s.trim()).filter(Boolean)

export function parseGlossaryCsv(text: string, delimiter?: string): GlossaryEntry[] {
  const [header, ...rows] = parseCsv(text, delimiter)
  if (!header) return []
  const col = { ...want }
  header.forEach((name, i) => {
    const key = COLUMNS[name.trim().toLowerCase()]
    if (key && col[key] < 0) col[key] = i
  })
  const entries: GlossaryEntry[] = []
  if (col.target >= 0) {
    if (col.source < 0) throw new Error('glossary CSV: a "target" column needs a "source" column')
    for (const r of rows) {
      const source = r[col.source]?.trim()
      const targets = list(r[col.target])
      const forbidden = col.forbidden >= 0 ? list(r[col.forbidden]) : []
      if (!source && !forbidden.length) continue
      entries.push({
        source: source || undefined,
        targets,
        forbidden,
        language: (col.language >= 0 && r[col.language]?.trim()) || undefined,
        sourceLanguage: (col.sourceLanguage >= 0 && r[col.sourceLanguage]?.trim()) || undefined,
        ...(col.caseSensitive >= 0 ? { caseSensitive: /^(1|true|yes|y)$/i.test(r[col.caseSensitive]?.trim() ?? '') } : {}),
      })
    }
    return entries
  }
  // Wide layout: one column per language.
  const languages = header.map((h) => h.trim())
  if (COLUMNS[languages[0]!.toLowerCase()]) languages[0] = '' // "source" or "term": no language named
  for (const r of rows) {
    const source = r[0]?.trim()
    if (!source) continue
    for (let i = 1; i < languages.length; i++) {
      const targets = list(r[i])
      if (targets.length && languages[i]) entries.push({ source, sourceLanguage: languages[0] || undefined, language: languages[i], targets, forbidden: [] })
    }
  }
  return entries
}
