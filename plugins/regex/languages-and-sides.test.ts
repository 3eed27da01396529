// The regex check's `languages` (codes in any case, `_` or `-`, a base language covering its
// regions, never a region covering another), which text each rule reads, its flags, and a bad
// pattern named at load time by its side and kind.
import { describe, expect, it } from 'vitest'
import { PluginTester, runPluginCase } from '../../src/engine/plugin-tester.js'
import regex from './index.js'

const requireX = (languages: string[]) => ({ target: { require: 'x' }, languages })
const missing = [{ code: 'required-pattern-missing', message: 'The translation must match /x/' }]

new PluginTester().run(regex, {
  valid: [
    { name: 'a region does not cover another', source: 'a', translation: 'b', targetLanguage: 'pt-PT', options: requireX(['pt-BR']) },
    { name: 'a region alone is no language', source: 'a', translation: 'b', targetLanguage: 'pt-BR', options: requireX(['BR']) },
    { name: 'the source rule reads the source', source: 'Q1', translation: 'X1', targetLanguage: 'de', options: { source: { require: '^Q' } } },
    { name: 'flags apply', source: 'a', translation: 'A', targetLanguage: 'de', options: { target: { require: '^a', flags: 'i' } } },
  ],
  invalid: [
    { name: 'one of several codes, in capitals', source: 'a', translation: 'b', targetLanguage: 'fr', options: requireX(['de', 'FR']), findings: missing },
    { name: 'a code written with _', source: 'a', translation: 'b', targetLanguage: 'pt-BR', options: requireX(['pt_BR']), findings: missing },
    { name: 'a base language covers its regions', source: 'a', translation: 'b', targetLanguage: 'pt-BR', options: requireX(['pt']), findings: missing },
    { name: 'a base language covers a numeric region', source: 'a', translation: 'b', targetLanguage: 'es-419', options: requireX(['es']), findings: missing },
    { name: 'the exact region', source: 'a', translation: 'b', targetLanguage: 'zh-CN', options: requireX(['zh-CN']), findings: missing },
    { name: 'the source rule fails on the source, whatever the translation', source: 'x', translation: 'Q1', targetLanguage: 'de', options: { source: { require: '^Q' } }, findings: [{ code: 'required-pattern-missing', message: 'The source must match /^Q/' }] },
    { name: 'without the flag, case counts', source: 'a', translation: 'A', targetLanguage: 'de', options: { target: { require: '^a' } }, findings: [{ code: 'required-pattern-missing', message: 'The translation must match /^a/' }] },
  ],
})

describe('regex patterns', () => {
  it('names a bad pattern by its side and kind when the pipeline loads', async () => {
    await expect(runPluginCase(regex as never, { source: 'a', translation: 'b', options: { source: { require: '(' } } })).rejects.toThrow(/^regex: source\.require is not a valid regular expression: .*\/\(\/u/)
    await expect(runPluginCase(regex as never, { source: 'a', translation: 'b', options: { target: { forbid: '[' } } })).rejects.toThrow(/^regex: target\.forbid is not a valid regular expression: .*\/\[\/gu/)
  })
})
