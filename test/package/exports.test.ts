// Plugin authors import the API by the package's name; this resolves it the way Node does for
// them (through package.json "exports", to the built files) and uses it.
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

describe("import from 'switchyard'", () => {
  it('gives plugin authors definePlugin, PluginTester and the helpers', () => {
    const script = `
      import { definePlugin, PluginTester, runPluginCase, languageFromCode, SEVERITIES } from 'switchyard'
      const plugin = definePlugin({
        name: 'shouty', description: 'No shouting.', needs: ['translation'],
        options: { type: 'object', additionalProperties: false, properties: { min: { type: 'integer', default: 4 } } },
        create: (o) => ({ check: (item) => /[A-Z]{4,}/.test(item.translation) ? [{ message: 'shouting' }] : [] }),
      })
      const findings = await runPluginCase(plugin, { source: 'Hello', translation: 'BONJOUR' })
      console.log(JSON.stringify({ tester: typeof PluginTester, lang: languageFromCode('he').textDirection, severities: SEVERITIES, findings }))
    `
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: PACKAGE_ROOT, encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual({ tester: 'function', lang: 'rtl', severities: ['error', 'warning', 'info'], findings: [{ check: 'shouty', severity: 'error', message: 'shouting' }] })
  })
})
