// docs/plugins.md: an item has `translation` "when the plugin declares needs: ['translation']";
// the worker fetches translations only when some check of the pipeline needs them
// (src/queue/process-jobs.ts). `switchyard try` and PluginTester gave the translation to a plugin
// that does not declare it, so a plugin that forgot `needs` passed both and failed every string
// of the worker.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runTry } from '../../src/cli/try.js'
import { runPluginCase } from '../../src/engine/plugin-tester.js'
import type { PluginDefinition } from '../../src/engine/types.js'
import { captureIo } from '../cli/io.js'

const PLUGIN = `export default {
  name: 'sees-translation',
  description: 'Reports whether it was given the translation.',
  options: { type: 'object' },
  create() {
    return { check: (item) => [{ message: item.translation === undefined ? 'no translation' : 'translation: ' + item.translation }] }
  },
}
`
const PIPELINE = `key: p
name: P
input: [translated]
outputs:
  passed: { port: approved }
checks:
  - uses: sees-translation
route:
  - to: passed
`

describe('a plugin that does not declare needs: [translation]', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-needs-'))
  writeFileSync(path.join(dir, 'sees-translation.mjs'), PLUGIN)
  writeFileSync(path.join(dir, 'p.yaml'), PIPELINE)
  writeFileSync(path.join(dir, 's.json'), '[{ "source": "Save", "translation": "Enregistrer", "sourceLanguage": "en", "targetLanguage": "fr" }]')

  it('switchyard try gives it no translation, as the worker does', async () => {
    const io = captureIo({ PLUGINS_DIR: dir })
    expect(await runTry([path.join(dir, 'p.yaml'), path.join(dir, 's.json')], io)).toBe(0)
    expect(JSON.parse(io.out())[0].findings[0].message).toBe('no translation')
  })

  it('PluginTester (runPluginCase) gives it no translation either', async () => {
    const definition = (await import(path.join(dir, 'sees-translation.mjs'))).default as PluginDefinition<never>
    const findings = await runPluginCase(definition, { source: 'Save', translation: 'Enregistrer' })
    expect(findings[0]!.message).toBe('no translation')
  })
})
