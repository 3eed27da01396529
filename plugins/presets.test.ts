import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { PRESETS } from './presets.js'

const here = path.dirname(fileURLToPath(import.meta.url))
/** Checks written on the other half of the catalog (branch checks-a), referenced by name. */
const OTHER_HALF = ['placeholders', 'icu', 'tags', 'length', 'whitespace', 'punctuation', 'numbers', 'urls', 'brackets']
const uses = (name: string) => (PRESETS[name] ?? []).map((c) => c.uses)

describe('presets', () => {
  it('has minimal, standard and strict', () => {
    expect(Object.keys(PRESETS).sort()).toEqual(['minimal', 'standard', 'strict'])
  })

  for (const [name, checks] of Object.entries(PRESETS)) {
    it(`${name}: every check names a plugin`, () => {
      for (const check of checks) {
        const folder = existsSync(path.join(here, check.uses, 'index.ts'))
        expect(folder || OTHER_HALF.includes(check.uses), `${name} uses unknown plugin "${check.uses}"`).toBe(true)
      }
    })
    it(`${name}: no check twice`, () => {
      const ids = checks.map((c) => c.id ?? c.uses)
      expect(new Set(ids).size).toBe(ids.length)
    })
  }

  it('each preset contains the one before it', () => {
    expect(uses('standard')).toEqual(expect.arrayContaining(uses('minimal')))
    expect(uses('strict')).toEqual(expect.arrayContaining(uses('standard')))
    expect(uses('minimal')).toEqual(['empty', 'placeholders', 'tags'])
  })

  it('standard keeps style as warnings; strict has none', () => {
    const severity = (preset: string, check: string) => PRESETS[preset]!.find((c) => c.uses === check)?.severity
    for (const check of ['punctuation', 'unchanged']) {
      expect(severity('standard', check)).toBe('warning')
      expect(severity('strict', check)).toBe('error')
    }
    // double-words grades its findings (errors where unambiguous) in standard; strict raises all.
    expect(severity('standard', 'double-words')).toBeUndefined()
    expect(severity('strict', 'double-words')).toBe('error')
    expect(PRESETS.strict!.some((c) => c.severity === 'warning')).toBe(false)
    expect(uses('strict')).toEqual(expect.arrayContaining(['charset', 'terminology']))
  })
})
