// `uses: npm:<package>` names a package of the app's own node_modules, never a URL (issue 17):
// `npm:data:text/javascript,...` ran its code during `switchyard validate`.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runValidate } from '../../src/cli/validate.js'
import { parseNpmSpecifier } from '../../src/engine/npm-specifier.js'
import { captureIo } from '../cli/io.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-npm-uses-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const pipeline = (uses: string) => `key: npm-check
name: npm check
input: [translated]
outputs:
  passed: { port: approved, title: Passed }
checks:
  - uses: ${JSON.stringify(uses)}
route:
  - to: passed
`

describe('npm: in uses', () => {
  it('switchyard validate does not run a data: URL (no marker is written)', async () => {
    const marker = path.join(dir, 'MARKER')
    const code = `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'ran'); export default {}`
    const cases = [
      `npm:data:text/javascript,${encodeURIComponent(code)}`,
      `npm:data:text/javascript;base64,${Buffer.from(code).toString('base64')}`,
      `npm:file://${path.join(dir, 'evil.mjs')}`,
    ]
    writeFileSync(path.join(dir, 'evil.mjs'), code)
    for (const [i, uses] of cases.entries()) {
      const file = path.join(dir, `p${i}.yaml`)
      writeFileSync(file, pipeline(uses))
      const io = captureIo({})
      expect(await runValidate([file], io)).toBe(1)
      expect(io.out()).toMatch(/not a valid npm package name/)
      expect(existsSync(marker)).toBe(false)
    }
  })

  const valid: Array<[string, string, string | undefined]> = [
    ['left-pad', 'left-pad', undefined],
    ['@scope/plugin', '@scope/plugin', undefined],
    ['@scope/plugin/sub/path.js', '@scope/plugin', '/sub/path.js'],
    ['switchyard-plugin-x/check', 'switchyard-plugin-x', '/check'],
    ['a.b_c~d', 'a.b_c~d', undefined],
  ]
  for (const [spec, name, subpath] of valid) {
    it(`accepts ${spec}`, () => {
      expect(parseNpmSpecifier(spec)).toEqual({ ok: true, name, subpath })
    })
  }

  const invalid = [
    'data:text/javascript,export default 1', 'file:///etc/passwd', 'http://evil.example/x.js', 'https://evil.example/x.js', 'node:fs', 'fs', 'child_process',
    '../outside', './relative', '/absolute', 'pkg/../../etc', 'pkg/./x', '@scope', '@scope/', 'UpperCase', '.hidden', '_under', '', 'a b', 'pkg\\x', 'pkg?x', 'pkg#x', '@/x', 'x'.repeat(215),
  ]
  for (const spec of invalid) {
    it(`refuses ${JSON.stringify(spec.slice(0, 40))}`, () => {
      expect(parseNpmSpecifier(spec).ok).toBe(false)
    })
  }
})
