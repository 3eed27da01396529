// The "Passes" and "Fails" tables of every plugin's README run as tests: a row of Passes raises no
// finding; a row of Fails raises exactly the codes of its `codes` column (each a code span, in any
// order, a code listed once per finding), and each `;`-separated part of its finding column (up to
// a `…`, without a closing note in parentheses) is found in some finding's message; a note that
// starts with `error` or `warning` is that finding's severity.
// The languages cell is `en → fr`, optionally followed by a code span holding the JSON of what else
// the case needs: `{"options": {...}}`, `{"maxLength": 8}`, `{"plurals": [...]}`.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { runPluginCase, type PluginTestCase } from '../../src/engine/plugin-tester.js'
import { pluginFolders, loadPlugin } from './plugin-folders.js'

export interface ExampleRow { case: PluginTestCase; codes?: string[]; finding?: string; line: string }

/** In a cell, `\uXXXX` is the character it names and `\\` a backslash (`\\u2026` is that escape as written). */
const unescape = (s: string) => s.replace(/\\\\|\\u([0-9a-fA-F]{4})/g, (_, h?: string) => (h ? String.fromCharCode(parseInt(h, 16)) : '\\'))

/** A cell that is one code span (``` `` a `b` `` ``` when it holds backticks), with `\|` for a pipe inside the table. */
function code(cell: string): string | undefined {
  const m = /^`` (.*) ``$/.exec(cell.trim()) ?? /^`([^`]*)`$/.exec(cell.trim())
  return m ? unescape(m[1]!.replace(/\\\|/g, '|')) : undefined
}

/** The rows of a README's Passes or Fails table; a row it cannot read is an error, not skipped. */
export function exampleRows(readme: string, section: 'Passes' | 'Fails'): ExampleRow[] {
  const start = readme.indexOf(`\n## ${section}\n`)
  if (start === -1) return []
  const rest = readme.slice(start + section.length + 5)
  const end = rest.search(/\n## /)
  const out: ExampleRow[] = []
  let header = true
  for (const line of (end === -1 ? rest : rest.slice(0, end)).split('\n')) {
    if (!line.startsWith('|')) continue
    if (/^\|[-| ]+\|$/.test(line)) { header = false; continue }
    if (header) continue
    const cells = line.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim())
    const langs = /^(\S+) → (\S+)(?:\s+`(\{.*\})`)?$/.exec(cells[0]!)
    const source = code(cells[1] ?? '')
    const translation = code(cells[2] ?? '')
    if (!langs || source === undefined || translation === undefined) throw new Error(`unreadable ${section} row: ${line}`)
    const extra = langs[3] ? (JSON.parse(langs[3].replace(/\\\|/g, '|')) as Partial<PluginTestCase>) : {}
    const codes = section === 'Fails' ? [...(cells[3] ?? '').matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!) : undefined
    out.push({ case: { ...extra, source, translation, sourceLanguage: langs[1]!, targetLanguage: langs[2]! }, codes, finding: cells[4], line })
  }
  return out
}

/** Plugins whose findings come from a model: no runnable rows (proofread.test.ts runs them against the fake server). */
export const MODEL_BASED = new Set(['ai-proofread'])

for (const name of pluginFolders().filter((n) => !MODEL_BASED.has(n))) {
  describe(`plugins/${name}/README.md examples`, async () => {
    const definition = await loadPlugin(name)
    const readme = readFileSync(path.join(PACKAGE_ROOT, 'plugins', name, 'README.md'), 'utf8')
    const passes = exampleRows(readme, 'Passes')
    const fails = exampleRows(readme, 'Fails')
    it('has runnable examples that pass and that fail', () => {
      expect(passes.length).toBeGreaterThan(0)
      expect(fails.length).toBeGreaterThan(0)
    })
    for (const r of passes) {
      it(`passes: ${r.line}`, async () => expect((await runPluginCase(definition, r.case)).map((f) => `${f.code}: ${f.message}`)).toEqual([]))
    }
    for (const r of fails) {
      it(`fails: ${r.line}`, async () => {
        const findings = await runPluginCase(definition, r.case)
        expect(r.codes!.length, 'the row lists no code').toBeGreaterThan(0)
        expect(findings.map((f) => f.code).sort(), findings.map((f) => `${f.code}: ${f.message}`).join(' | ')).toEqual([...r.codes!].sort())
        for (const part of (r.finding ?? '').split(';')) {
          const note = /\(([^()]*)\)\s*$/.exec(part)?.[1] ?? ''
          const want = part.split('…')[0]!.replace(/\s*\([^()]*\)\s*$/, '').trim()
          if (!want) continue
          const found = findings.find((f) => f.message.includes(want))
          expect(found, `no finding contains ${JSON.stringify(want)}: ${findings.map((f) => f.message).join(' | ')}`).toBeDefined()
          const severity = /^(error|warning)\b/.exec(note)?.[1]
          if (severity) expect(found!.severity).toBe(severity)
        }
      })
    }
  })
}
