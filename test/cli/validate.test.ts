import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { runValidate } from '../../src/cli/validate.js'
import { FIXTURE_PLUGINS, FIXTURES } from '../engine/helpers.js'
import { captureIo } from './io.js'

describe('switchyard validate', () => {
  it('prints every error as file:line:col message with the offending line; exit 1', async () => {
    const io = captureIo({})
    const file = path.join(FIXTURES, 'pipelines', 'broken.yaml')
    expect(await runValidate([file], io)).toBe(1)
    const lines = io.out().split('\n')
    const rel = path.relative(process.cwd(), file)
    expect(lines.slice(0, 3)).toEqual([
      expect.stringMatching(new RegExp(`^${rel.replace(/\./g, '\\.')}:4:1 unknown key "colour"`)),
      '    colour: red',
      '    ^',
    ])
    expect(lines.filter((l) => l.startsWith(rel))).toHaveLength(9)
    expect(io.out()).toMatch(/\n9 errors in 1 file\n$/)
  })

  it('defaults to PIPELINES_DIR; the shipped pipelines are valid (exit 0)', async () => {
    const io = captureIo({ PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines') })
    expect(await runValidate([], io)).toBe(0)
    expect(io.out()).toMatch(/valid: .*qa-gate/)
  })

  it('uses PLUGINS_DIR plugins', async () => {
    const io = captureIo({ PLUGINS_DIR: FIXTURE_PLUGINS })
    expect(await runValidate([path.join(FIXTURES, 'pipelines', 'try-gate.yaml')], io)).toBe(0)
    const without = captureIo({})
    expect(await runValidate([path.join(FIXTURES, 'pipelines', 'try-gate.yaml')], without)).toBe(1)
    expect(without.out()).toMatch(/unknown plugin or preset "shout"/)
  })
})
