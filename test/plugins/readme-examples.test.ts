// The "Passes" and "Fails" tables of the plugins' READMEs run as tests: a row of Passes raises no
// finding, a row of Fails raises at least one, and each `;`-separated part of its finding column
// (up to a `…`, without a closing note in parentheses) is found in some finding's message; a note
// that starts with `error` or `warning` is that finding's severity. Rows whose languages cell carries a note
// ("en → de (limit 8)") need a setting the table cannot hold, and are covered by index.test.ts.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { runPluginCase } from '../../src/engine/plugin-tester.js'
import type { PluginDefinition } from '../../src/engine/types.js'

import placeholders from '../../plugins/placeholders/index.js'
import icu from '../../plugins/icu/index.js'
import tags from '../../plugins/tags/index.js'
import brackets from '../../plugins/brackets/index.js'
import numbers from '../../plugins/numbers/index.js'
import punctuation from '../../plugins/punctuation/index.js'
import urls from '../../plugins/urls/index.js'
import doubleWords from '../../plugins/double-words/index.js'
import whitespace from '../../plugins/whitespace/index.js'
import markdown from '../../plugins/markdown/index.js'

/** The plugins whose README tables are kept runnable. */
const PLUGINS = [placeholders, icu, tags, brackets, doubleWords, numbers, punctuation, urls, whitespace, markdown] as PluginDefinition<never>[]

interface Row { from: string; to: string; source: string; translation: string; finding?: string; line: string }

const unescape = (s: string) => s.replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))

/** A cell that is one code span (``` `` a `b` `` ``` when it holds backticks), with `\|` for a pipe inside the table. */
function code(cell: string): string | undefined {
  const m = /^`` (.*) ``$/.exec(cell.trim()) ?? /^`([^`]*)`$/.exec(cell.trim())
  return m ? unescape(m[1]!.replace(/\\\|/g, '|')) : undefined
}

function rows(readme: string, section: 'Passes' | 'Fails'): Row[] {
  const start = readme.indexOf(`\n## ${section}\n`)
  if (start === -1) return []
  const rest = readme.slice(start + section.length + 5)
  const end = rest.search(/\n## /)
  const out: Row[] = []
  for (const line of (end === -1 ? rest : rest.slice(0, end)).split('\n')) {
    if (!line.startsWith('|') || /^\|[-| ]+\|$/.test(line)) continue
    const cells = line.slice(1, -1).split(/(?<!\\)\|/)
    const langs = /^\s*(\S+) → (\S+)\s*$/.exec(cells[0]!)
    const source = code(cells[1] ?? '')
    const translation = code(cells[2] ?? '')
    if (!langs || source === undefined || translation === undefined) continue
    out.push({ from: langs[1]!, to: langs[2]!, source, translation, finding: cells[3]?.trim(), line })
  }
  return out
}

for (const definition of PLUGINS) {
  describe(`plugins/${definition.name}/README.md`, () => {
    const readme = readFileSync(path.join(PACKAGE_ROOT, 'plugins', definition.name, 'README.md'), 'utf8')
    const run = (r: Row) => runPluginCase(definition, { source: r.source, translation: r.translation, sourceLanguage: r.from, targetLanguage: r.to })
    const passes = rows(readme, 'Passes')
    const fails = rows(readme, 'Fails')
    it('has runnable examples', () => expect(passes.length + fails.length).toBeGreaterThan(0))
    for (const r of passes) {
      it(`passes: ${r.line}`, async () => expect((await run(r)).map((f) => f.message)).toEqual([]))
    }
    for (const r of fails) {
      it(`fails: ${r.line}`, async () => {
        const findings = await run(r)
        expect(findings.length).toBeGreaterThan(0)
        for (const part of (r.finding ?? '').split(';')) {
          const note = /\(([^()]*)\)\s*$/.exec(part)?.[1] ?? ''
          const want = part.split('…')[0]!.replace(/\s*\([^()]*\)\s*$/, '').trim()
          if (!want || /^(two|three|\d+) /.test(want)) continue
          const found = findings.find((f) => f.message.includes(want))
          expect(found, `no finding contains ${JSON.stringify(want)}: ${findings.map((f) => f.message).join(' | ')}`).toBeDefined()
          const severity = /^(error|warning)\b/.exec(note)?.[1]
          if (severity) expect(found!.severity).toBe(severity)
        }
      })
    }
  })
}
