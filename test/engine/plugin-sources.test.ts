// Where plugins come from (src/engine/plugin-registry.ts) and how one starts with a pipeline's
// options (src/engine/instantiate-plugin.ts): what an operator sees when a PLUGINS_DIR file, a
// package or a plugin's options are wrong.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatAjvErrors, instantiatePlugin, isPluginDefinition, PluginOptionsError, resolvePluginOptions } from '../../src/engine/instantiate-plugin.js'
import { PluginRegistry } from '../../src/engine/plugin-registry.js'
import { testContext } from '../../src/engine/plugin-tester.js'
import type { PluginDefinition } from '../../src/engine/types.js'

const plugin = (name: string, body = 'create() { return { check: () => [] } }') =>
  `{ name: '${name}', description: 'd', options: { type: 'object', properties: {} }, ${body} }`

function pluginsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-plugin-sources-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text)
  return dir
}

describe('PluginRegistry', () => {
  it('PLUGINS_DIR: *.js and *.mjs files, a default export or a `plugin` export; other files are not read', async () => {
    const dir = pluginsDir({
      'a.mjs': `export default ${plugin('from-default')}`,
      'b.js': `export const plugin = ${plugin('from-named')}\nexport default 5`,
      'c.cjs': 'module.exports = {}',
      'notes.txt': 'not a plugin',
      'd.mjsx': 'nope',
    })
    const { registry, problems } = await PluginRegistry.create(dir)
    expect(problems).toEqual([])
    expect(registry.names()).toEqual(expect.arrayContaining(['from-default', 'from-named', 'regex']))
    expect(registry.names()).toEqual([...registry.names()].sort())
    expect(await registry.resolve('from-default')).toMatchObject({ definition: { name: 'from-default' }, origin: path.join(dir, 'a.mjs') })
    expect(await registry.resolve('from-named')).toMatchObject({ definition: { name: 'from-named' }, origin: path.join(dir, 'b.js') })
  })

  it('an operator plugin named like a built-in replaces it; the name is listed once', async () => {
    const dir = pluginsDir({ 'regex.mjs': `export default ${plugin('regex')}` })
    const { registry } = await PluginRegistry.create(dir)
    expect(await registry.resolve('regex')).toMatchObject({ origin: path.join(dir, 'regex.mjs') })
    expect(registry.names().filter((n) => n === 'regex')).toHaveLength(1)
  })

  it('problems: a file that is not a plugin, one that does not load, a name defined twice, a folder that cannot be read', async () => {
    const dir = pluginsDir({
      'a-first.mjs': `export default ${plugin('twice')}`,
      'b-again.mjs': `export default ${plugin('twice')}`,
      'c-broken.mjs': 'export default {',
      'd-empty.mjs': 'export default { name: "x", create() {} }',
    })
    const { registry, problems } = await PluginRegistry.create(dir)
    expect(problems.map((p) => `${path.basename(p.file)}: ${p.message}`)).toEqual([
      `b-again.mjs: plugin "twice" is also defined in ${path.join(dir, 'a-first.mjs')}`,
      expect.stringMatching(/^c-broken\.mjs: cannot load plugin: /),
      'd-empty.mjs: the default export is not a plugin definition (definePlugin({ name, description, options, create }))',
    ])
    expect(await registry.resolve('twice')).toMatchObject({ origin: path.join(dir, 'a-first.mjs') })
    const missing = await PluginRegistry.create(path.join(dir, 'nope'))
    expect(missing.problems).toEqual([{ file: path.join(dir, 'nope'), message: expect.stringMatching(/^PLUGINS_DIR cannot be read: ENOENT/) }])
    expect(missing.registry.names()).toContain('regex')
  })

  // Rule: a module may throw anything (null, undefined, a string): a problem naming the file and
  // quoting what was thrown, never a TypeError that rejects the whole load.
  it('problems: a file whose import throws something that is not an Error', async () => {
    const dir = pluginsDir({
      'a-null.mjs': 'throw null\n',
      'b-undefined.mjs': 'throw undefined\n',
      'c-text.mjs': 'throw "config missing"\n',
      'd-bare.mjs': 'throw Object.create(null)\n',
      'e-ok.mjs': `export default ${plugin('ok')}`,
    })
    const { registry, problems } = await PluginRegistry.create(dir)
    expect(problems.map((p) => `${path.basename(p.file)}: ${p.message}`)).toEqual([
      'a-null.mjs: cannot load plugin: null',
      'b-undefined.mjs: cannot load plugin: undefined',
      'c-text.mjs: cannot load plugin: config missing',
      'd-bare.mjs: cannot load plugin: [object Object]',
    ])
    expect(registry.names()).toContain('ok')
  })

  // Rule: a definition whose \`needs\` is not a list of strings is refused with the reason, at its
  // file (PLUGINS_DIR) or at the check that uses it (built-in, npm:), not crashed on at compile.
  it('problems: a definition whose `needs` is not a list of strings', async () => {
    const dir = pluginsDir({
      'a.mjs': `export default ${plugin('five', 'needs: 5, create() { return { check: () => [] } }')}`,
      'b.mjs': `export default ${plugin('mixed', "needs: ['translation', 1], create() { return { check: () => [] } }")}`,
      'c.mjs': `export default ${plugin('fine', "needs: ['translation'], create() { return { check: () => [] } }")}`,
      // A typo: it would be granted nothing, and see no translation.
      'd.mjs': `export default ${plugin('typo', "needs: ['translation', 'translations'], create() { return { check: () => [] } }")}`,
    })
    const { registry, problems } = await PluginRegistry.create(dir)
    expect(problems.map((p) => `${path.basename(p.file)}: ${p.message}`)).toEqual([
      "a.mjs: plugin \"five\": `needs` must be a list of strings (such as ['translation']), not 5",
      "b.mjs: plugin \"mixed\": `needs` must be a list of strings (such as ['translation']), not [\"translation\",1]",
      "d.mjs: plugin \"typo\": `needs` names \"translations\", which the engine does not provide (it knows: 'translation')",
    ])
    expect(registry.names()).toContain('fine')
    expect(registry.names()).not.toContain('five')
    expect(registry.names()).not.toContain('typo')
  })

  it('has(): built-ins, operator plugins and any npm: name; resolve() of an unknown name is undefined', async () => {
    const { registry } = await PluginRegistry.create()
    expect([registry.has('regex'), registry.has('npm:anything'), registry.has('nope'), registry.has('presets')]).toEqual([true, true, false, false])
    expect(await registry.resolve('nope')).toBeUndefined()
    expect(registry.names()).not.toContain('presets')
    expect(registry.names()).not.toContain('_shared')
    // Built-ins are loaded once.
    const first = await registry.resolve('regex')
    expect(await registry.resolve('regex')).toBe(first)
    expect(first).toMatchObject({ definition: { name: 'regex' }, origin: 'built-in' })
  })

  it('npm: a name that is not one is refused before anything is imported; an import error is reported', async () => {
    const { registry } = await PluginRegistry.create()
    expect(await registry.resolve(`npm:../${'x'.repeat(200)}`)).toEqual({ error: expect.stringMatching(/^"npm:\.\.\/x{93}" is not a valid npm package name \(.+\); npm: takes a package installed beside the worker, never a URL or a path$/) })
    expect(await registry.resolve('npm:yaml')).toEqual({ error: 'npm package "yaml" does not export a plugin definition as default' })
    expect(await registry.resolve('npm:switchyard-nope')).toEqual({ error: 'npm package "switchyard-nope" is not installed; run `npm install switchyard-nope` where the worker is installed' })
    expect(await registry.resolve('npm:yaml/no-such-entry')).toEqual({ error: expect.stringMatching(/^cannot load plugin "npm:yaml\/no-such-entry": /) })
  })
})

describe('isPluginDefinition', () => {
  it('needs a name, a create function and options', () => {
    const ok = { name: 'n', create() {}, options: {} }
    expect(isPluginDefinition(ok)).toBe(true)
    expect(isPluginDefinition({ ...ok, needs: ['translation'] })).toBe(true)
    // Rule: `needs`, when given, is a list of strings (compileChecks reads needs.includes()).
    for (const bad of [null, undefined, 'n', { ...ok, name: 1 }, { ...ok, create: 'f' }, { ...ok, options: undefined }, { name: 'n', create() {} }, { ...ok, needs: 5 }, { ...ok, needs: {} }, { ...ok, needs: 'translation' }, { ...ok, needs: [1] }]) {
      expect(isPluginDefinition(bad), JSON.stringify(bad)).toBe(false)
    }
  })
})

describe('plugin options', () => {
  const definition = {
    name: 'opts', description: 'd',
    options: {
      type: 'object', additionalProperties: false,
      properties: { mode: { enum: ['a', 'b'], default: 'a' }, deep: { type: 'object', properties: { n: { type: 'integer' } } }, list: { type: 'array', default: [] } },
    },
    create: () => ({ check: () => [] }),
  } as unknown as PluginDefinition

  it('defaults are filled in on a copy; no options at all means {}', () => {
    const given = { deep: { n: 1 } }
    expect(resolvePluginOptions(definition, given)).toEqual({ mode: 'a', deep: { n: 1 }, list: [] })
    expect(given).toEqual({ deep: { n: 1 } })
    expect(resolvePluginOptions(definition, undefined)).toEqual({ mode: 'a', list: [] })
  })

  it('every error, named by its path: unknown options, allowed values, types', () => {
    let error: unknown
    try { resolvePluginOptions(definition, { mode: 'c', deep: { n: 'one' }, extra: 1 }) } catch (e) { error = e }
    expect(error).toBeInstanceOf(PluginOptionsError)
    expect((error as PluginOptionsError).errors).toEqual(['(options): unknown option "extra"', 'mode: must be one of "a", "b"', 'deep.n: must be integer'])
    expect((error as Error).message).toBe('options of "opts": (options): unknown option "extra"; mode: must be one of "a", "b"; deep.n: must be integer')
    expect((error as Error).name).toBe('PluginOptionsError')
  })

  // Rule: options that cannot be copied (a function, through the API) are a PluginOptionsError
  // naming the option, never a DataCloneError with no place.
  it('an option that cannot be copied is an error naming it', () => {
    let error: unknown
    try { resolvePluginOptions(definition, { deep: { n: 1, f: () => 1 } }) } catch (e) { error = e }
    expect(error).toBeInstanceOf(PluginOptionsError)
    expect((error as PluginOptionsError).errors).toEqual([expect.stringMatching(/^deep\.f: cannot be copied \(.*could not be cloned\.?\)$/)])
    const cyclic: Record<string, unknown> = { list: [Symbol('s')] }
    cyclic.self = cyclic
    expect(() => resolvePluginOptions(definition, cyclic)).toThrow(/: list\.0: cannot be copied/)
  })

  it('formatAjvErrors: a root before each path; an error without a message is invalid', () => {
    expect(formatAjvErrors(null)).toEqual([])
    expect(formatAjvErrors([{ instancePath: '/a/0/b', keyword: 'x', params: {}, schemaPath: '' }], 'settings.')).toEqual(['settings.a.0.b: is invalid'])
  })

  it('instantiatePlugin refuses an instance with nothing to run, and takes an async create()', async () => {
    const make = (instance: unknown) => ({ ...definition, create: async () => instance }) as unknown as PluginDefinition
    for (const bad of [undefined, {}, { check: 'no' }]) {
      await expect(instantiatePlugin(make(bad), {}, testContext(definition as never))).rejects.toThrow('plugin "opts": create() must return an object with check(), checkBatch() or onEvent()')
    }
    for (const good of [{ check() {} }, { checkBatch() {} }, { onEvent() {} }]) {
      await expect(instantiatePlugin(make(good), {}, testContext(definition as never))).resolves.toBe(good)
    }
  })
})
