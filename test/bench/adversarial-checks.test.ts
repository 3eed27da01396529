// Timing of every check on texts built to be slow, at the sizes the hostile-input report measured
// (30,000 `(` then 30,000 `)`, `<b>` 20,000 times, `word ` 40,000 times, ...). Not a pass/fail
// test (timings depend on the machine; test/plugins/linear-work.test.ts counts work instead):
// it runs only with ADVERSARIAL_BENCH=1 and prints a table.
//   ADVERSARIAL_BENCH=1 npx vitest run test/bench/adversarial-checks.test.ts
import { it } from 'vitest'
import { instantiatePlugin } from '../../src/engine/instantiate-plugin.js'
import { testContext, testItem } from '../../src/engine/plugin-tester.js'
import type { PluginDefinition } from '../../src/engine/types.js'
import accelerators from '../../plugins/accelerators/index.js'
import brackets from '../../plugins/brackets/index.js'
import charset from '../../plugins/charset/index.js'
import doubleWords from '../../plugins/double-words/index.js'
import escapes from '../../plugins/escapes/index.js'
import numbers from '../../plugins/numbers/index.js'
import placeholders from '../../plugins/placeholders/index.js'
import punctuation from '../../plugins/punctuation/index.js'
import tags from '../../plugins/tags/index.js'
import terminology from '../../plugins/terminology/index.js'
import unchanged from '../../plugins/unchanged/index.js'
import urls from '../../plugins/urls/index.js'
import whitespace from '../../plugins/whitespace/index.js'

interface Case { plugin: PluginDefinition<never>; options?: Record<string, unknown>; name: string; source?: string; translation: string; target?: string }

const R = (token: string, n: number) => token.repeat(n)
const CASES: Case[] = [
  { plugin: brackets, name: '( x30000 then ) x30000', translation: R('(', 30_000) + R(')', 30_000) },
  { plugin: brackets, name: 'http://a.b/ then ) x20000', translation: `http://a.b/${R(')', 20_000)}` },
  { plugin: tags, name: '<b> x20000', source: R('<b>', 20_000), translation: R('<b>', 20_000) },
  { plugin: tags, name: '<b> x10000 then </b> x10000', translation: R('<b>', 10_000) + R('</b>', 10_000) },
  { plugin: tags, name: '<!-- x12000', translation: R('<!--', 12_000) },
  { plugin: doubleWords, name: 'word x40000 (fr)', translation: R('word ', 40_000) },
  { plugin: doubleWords, name: 'die x20000 (de)', translation: R('die ', 20_000), target: 'de' },
  { plugin: doubleWords, name: 'a x25000 then a...ab', translation: `${R('a', 25_000)} ${R('a', 25_000)}b` },
  { plugin: whitespace, name: '"a  " x16000', translation: R('a  ', 16_000) },
  { plugin: whitespace, name: '"ab\\u00a0" x16000', translation: R('ab\u00a0', 16_000) },
  { plugin: placeholders, name: '% then 0 x50000', translation: `%${R('0', 50_000)}` },
  { plugin: placeholders, name: '#a# x12000 (custom)', options: { custom: ['#\\w+#'] }, translation: R('#a# ', 12_000) },
  { plugin: punctuation, name: 'http://a.b/ then ) x20000', translation: `http://a.b/${R(')', 20_000)}` },
  { plugin: urls, name: 'http://a.b/ then . x50000', translation: `http://a.b/${R('.', 50_000)}x` },
  { plugin: urls, name: 'a@b.cd x7000 (all changed)', source: R('a@b.cd ', 7_000), translation: R('b@c.de ', 7_000) },
  { plugin: numbers, name: '"1 " x25000', source: R('1 ', 25_000), translation: R('2 ', 25_000) },
  { plugin: escapes, name: '\\u0041 x8000', source: R('\\u0041', 8_000), translation: 'x' },
  { plugin: charset, name: '\\u0001 x50000', translation: R('\u0001', 50_000) },
  { plugin: charset, name: 'aα x25000', translation: R('aα', 25_000) },
  { plugin: accelerators, name: '"a_" x25000', options: { markers: ['_'] }, source: '_File', translation: R('a_', 25_000) },
  { plugin: accelerators, name: '"a" x50000', source: '&File', translation: R('a', 50_000) },
  { plugin: unchanged, name: 'a x50000 (same)', source: R('a', 50_000), translation: R('a', 50_000) },
  { plugin: unchanged, name: '[ x50000 (same)', source: R('[', 50_000), translation: R('[', 50_000) },
  { plugin: terminology, name: 'a- x25000', options: { terms: [{ source: 'file', target: 'fichier' }] }, source: 'file', translation: R('a-', 25_000) },
]

it.runIf(process.env.ADVERSARIAL_BENCH === '1')('adversarial texts: time per check', { timeout: 3_600_000 }, async () => {
  const rows: string[] = []
  for (const c of CASES) {
    const instance = await instantiatePlugin(c.plugin, c.options ?? {}, testContext(c.plugin))
    const item = testItem({ source: c.source ?? 'Hello (world)', translation: c.translation, targetLanguage: c.target ?? 'fr' })
    const t0 = performance.now()
    await instance.check!(item)
    const ms = performance.now() - t0
    rows.push(`| ${c.plugin.name} | ${c.name} | ${(((c.source?.length ?? 0) + c.translation.length) / 1000).toFixed(0)} KB | ${ms.toFixed(0)} ms |`)
    console.log(rows[rows.length - 1])
  }
  console.log(['| check | text | size | time |', '|---|---|---|---|', ...rows].join('\n'))
})
