// Every check does work linear (or n log n) in the length of its texts: on each adversarial family
// (test/support/adversarial-families.ts), the work counted at 2n is at most RATIO times the work at
// n. Work is counted, not timed (test/support/count-work.ts), so the test means the same on a
// loaded machine. A quadratic check makes the ratio about 4.
import { describe, expect, it } from 'vitest'
import { instantiatePlugin } from '../../src/engine/instantiate-plugin.js'
import { testContext, testItem, type PluginTestCase } from '../../src/engine/plugin-tester.js'
import type { Item, PluginDefinition, PluginInstance } from '../../src/engine/types.js'
import { countWork, type Work } from '../support/count-work.js'
import { FAMILIES } from '../support/adversarial-families.js'
import accelerators from '../../plugins/accelerators/index.js'
import brackets from '../../plugins/brackets/index.js'
import charset from '../../plugins/charset/index.js'
import doubleWords from '../../plugins/double-words/index.js'
import empty from '../../plugins/empty/index.js'
import escapes from '../../plugins/escapes/index.js'
import icu from '../../plugins/icu/index.js'
import length from '../../plugins/length/index.js'
import markdown from '../../plugins/markdown/index.js'
import numbers from '../../plugins/numbers/index.js'
import placeholders from '../../plugins/placeholders/index.js'
import plurals from '../../plugins/plurals/index.js'
import punctuation from '../../plugins/punctuation/index.js'
import regex from '../../plugins/regex/index.js'
import tags from '../../plugins/tags/index.js'
import terminology from '../../plugins/terminology/index.js'
import unchanged from '../../plugins/unchanged/index.js'
import urls from '../../plugins/urls/index.js'
import whitespace from '../../plugins/whitespace/index.js'

/** n log n at these sizes stays near 2.2; a quadratic term of any weight pushes towards 4. */
const RATIO = 2.6
/** Tokens per text at the smaller size (texts of 0.3-15 KB; WORK_N to try others). */
const N = Number(process.env.WORK_N ?? 300)

interface Setup {
  plugin: PluginDefinition<never>
  options?: Record<string, unknown>
  /** Target languages to try (their rules differ: German relative pronouns, French spacing...). */
  languages?: string[]
}

const SETUPS: Setup[] = [
  { plugin: accelerators, options: { markers: ['&', '_'] } },
  { plugin: brackets },
  { plugin: charset, languages: ['fr', 'ru'] },
  { plugin: doubleWords, languages: ['fr', 'de'] },
  { plugin: empty },
  { plugin: escapes },
  { plugin: icu },
  { plugin: length, options: { maxLength: 10 } },
  { plugin: markdown },
  { plugin: numbers },
  { plugin: placeholders, options: { custom: ['#\\w+#'] } },
  { plugin: plurals },
  { plugin: punctuation, languages: ['fr', 'de', 'es'] },
  { plugin: regex, options: { source: { require: 'a' }, target: { forbid: '  ', require: 'a' }, maxFindings: 1_000_000 } },
  { plugin: tags },
  { plugin: terminology, options: { terms: [{ source: 'word', target: 'mot', forbidden: ['word', 'a'] }, { source: 'a', target: ['a', 'un'], forbidden: ['a'] }] } },
  { plugin: unchanged, languages: ['fr', 'de'] },
  { plugin: urls, options: { allowLocalizedUrls: true } },
  { plugin: whitespace, languages: ['fr', 'ja', 'ar'] },
]

/** The pairs of texts a family gives: both sides adversarial, or one side plain. */
function pairs(text: string): Array<[string, string]> {
  return [[text, text], ['Hello (world) <b>{0}</b> 1 http://a.b/ &Save', text], [text, 'Bonjour']]
}

function item(c: PluginTestCase): Item {
  const i = testItem(c)
  i.plurals = [{ plural: 'one', text: c.translation }, { plural: 'other', text: c.translation }]
  i.isPlural = true
  return i
}

function workOf(instance: PluginInstance, c: PluginTestCase): Work {
  const it = item(c)
  // Once first, so that a cache of the last texts seen (placeholders) is in the same state at n
  // and at 2n.
  instance.check!(it)
  return countWork(() => {
    const r = instance.check!(it)
    if (r instanceof Promise) throw new Error('work is counted for synchronous checks')
  })
}

/** Where the work grew most: the method to look at first. */
function worst(a: Work, b: Work): string {
  let top = ''
  let growth = 0
  for (const [op, w] of b.byOp) {
    const g = w - 2 * (a.byOp.get(op) ?? 0)
    if (g > growth) [top, growth] = [op, g]
  }
  return top
}

describe('every check does linear work on adversarial texts', () => {
  for (const setup of SETUPS) {
    it(setup.plugin.name, async () => {
      const instance = await instantiatePlugin(setup.plugin, setup.options ?? {}, testContext(setup.plugin))
      const failures: string[] = []
      for (const targetLanguage of setup.languages ?? ['fr']) {
        for (const family of FAMILIES) {
          const small = pairs(family.text(N))
          const large = pairs(family.text(2 * N))
          for (let k = 0; k < small.length; k++) {
            const base = { sourceLanguage: 'en', targetLanguage }
            const a = workOf(instance, { ...base, source: small[k]![0], translation: small[k]![1] })
            const b = workOf(instance, { ...base, source: large[k]![0], translation: large[k]![1] })
            if (b.work > RATIO * Math.max(a.work, 1000)) failures.push(`${targetLanguage} ${family.name} #${k}: ${a.work} -> ${b.work} (x${(b.work / a.work).toFixed(1)}, most in ${worst(a, b)})`)
          }
        }
      }
      expect(failures).toEqual([])
    })
  }
})
