// docs/settings.md: "A step with nothing saved runs with the pipeline's defaults", and
// docs/pipelines.md: "A setting the step has not set and that has no default has no value".
// A required setting without a default made every unsaved step run with none of the defaults.
import { describe, expect, it } from 'vitest'
import { runTry } from '../../src/cli/try.js'
import { loadOne, writePipelines } from './helpers.js'
import { captureIo } from '../cli/io.js'

const YAML = `
key: req
name: Req
input: [translated]
outputs:
  passed: { port: approved }
  failed: { port: translated }
settings:
  required: [code]
  properties:
    code: { type: string }
    maxLen: { type: integer, minimum: 1, default: 3 }
checks:
  - uses: length
    with: { maxLength: '\${settings.maxLen}' }
route:
  - if: errors > 0
    to: failed
  - to: passed
`

describe('a required setting without a default', () => {
  it('does not take the other settings\' defaults away from a step with nothing saved', async () => {
    const { set } = await loadOne(YAML)
    try {
      const r = set.get('req')!.resolveSettings(undefined)
      expect(r).toEqual({ ok: true, settings: { maxLen: 3 } })
    } finally {
      await set.close(0)
    }
  })

  it('switchyard try runs a string without settings with the defaults, as the worker does', async () => {
    const { paths, dir } = writePipelines({ 'req.yaml': YAML, 's.json': '[{"source":"Save","translation":"Enregistrer","sourceLanguage":"en","targetLanguage":"fr"}]' })
    const io = captureIo()
    expect(await runTry([paths[0]!, `${dir}/s.json`], io)).toBe(0)
    expect(JSON.parse(io.out())[0].output).toBe('translated')
  })
})
