// The plugin catalog: every folder of plugins/ (but `_shared`) is a plugin whose name is the
// folder's, whose kinds of finding are declared (kebab-case codes, each tested in its
// index.test.ts), whose README has the agreed sections with the generated Options and Codes tables
// current (`npm run docs:plugins` rewrites them), and which has a row in plugins/README.md. Its
// README's Passes and Fails rows are run by readme-examples.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { ENGINE_MESSAGES } from '../../src/engine/engine-findings.js'
import { GENERATED, generatedPart } from '../../src/engine/plugin-readme.js'
import { loadPlugin, pluginFolders } from './plugin-folders.js'
import { MODEL_BASED } from './readme-examples.test.js'

const folders = pluginFolders()
const file = (...parts: string[]) => path.join(PACKAGE_ROOT, 'plugins', ...parts)
const sections = (readme: string) => [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]!.trim())

it('finds the plugins', () => expect(folders.length).toBeGreaterThanOrEqual(20))

for (const name of folders) {
  describe(`plugins/${name}`, async () => {
    const definition = await loadPlugin(name)
    const readme = existsSync(file(name, 'README.md')) ? readFileSync(file(name, 'README.md'), 'utf8') : ''

    it('is named after its folder and has its code, README and table test', () => {
      expect(definition.name).toBe(name)
      for (const f of ['index.ts', 'README.md', 'index.test.ts']) expect(existsSync(file(name, f)), f).toBe(true)
    })

    it('declares its codes, kebab-case, each asserted by its table test', () => {
      const codes = Object.keys(definition.messages ?? {})
      expect(codes.length).toBeGreaterThan(0)
      for (const code of codes) expect(code).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/)
      // A code names one kind of finding: none is also one of the engine's own (a check that failed...).
      expect(codes.filter((code) => code in ENGINE_MESSAGES), 'codes the engine uses').toEqual([])
      const tests = readdirSync(file(name)).filter((f) => f.endsWith('.test.ts')).map((f) => readFileSync(file(name, f), 'utf8')).join('\n')
      expect(codes.filter((code) => !tests.includes(`code: '${code}'`)), 'codes no test asserts').toEqual([])
    })

    it('has a README with the title, what it checks, Options, Codes and examples', () => {
      const [title = '', ...rest] = readme.split('\n')
      expect(title).toMatch(new RegExp(`^# \`${name}\`(: .+)?$`))
      const intro = rest.join('\n').split(/^## /m)[0]!.trim()
      expect(intro.length, 'a paragraph on what it checks, before the first section').toBeGreaterThan(40)
      const have = sections(readme)
      const want = ['Options', 'Codes', ...(MODEL_BASED.has(name) ? [] : ['Passes', 'Fails'])]
      expect(want.filter((s) => !have.includes(s)), 'missing sections').toEqual([])
    })

    it('has its Options table generated from its schema and its Codes table from its messages', () => {
      for (const part of ['options', 'codes'] as const) {
        expect(generatedPart(readme, part), `${part} table (regenerate: npm run docs:plugins)`).toBe(GENERATED[part].table(definition))
      }
    })

    it('has a row in plugins/README.md', () => {
      expect(readFileSync(file('README.md'), 'utf8')).toContain(`| [\`${name}\`](./${name}/README.md) |`)
    })
  })
}
