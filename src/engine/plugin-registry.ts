// Where plugins come from: the built-in plugins of this package (plugins/<name>/index.{js,ts} or
// plugins/<name>.{js,ts}), the operator's PLUGINS_DIR (*.js, *.mjs with a default export), and npm
// packages a pipeline names as `uses: npm:<package>`. A PLUGINS_DIR plugin with a built-in's name
// replaces the built-in (the operator's choice wins).
import { existsSync } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { looksLikePluginDefinition, pluginDefinitionProblem, thrownText } from './instantiate-plugin.js'
import { parseNpmSpecifier } from './npm-specifier.js'
import type { PluginDefinition } from './types.js'

// Resolved from this module, so it works from src/engine (vitest) and dist/src/engine (built):
// both sit two levels below the folder holding plugins/ (the repo root or dist/).
const BUILTIN_DIR = fileURLToPath(new URL('../../plugins/', import.meta.url))

export interface LoadedPlugin { definition: PluginDefinition; origin: string }

export interface PluginLoadProblem { file: string; message: string }

/** The module's plugin definition; `{ problem }` when it has one that cannot be used (`needs: 5`). */
function definitionOf(mod: unknown): PluginDefinition | { problem: string } | undefined {
  const m = mod as { default?: unknown; plugin?: unknown } | null
  // A CommonJS package imported from ESM: the definition is module.exports, under default.
  const inner = (m?.default as { default?: unknown } | null | undefined)?.default
  const candidates = [m?.default, inner, m?.plugin].filter(looksLikePluginDefinition)
  const usable = candidates.find((d) => pluginDefinitionProblem(d) === undefined)
  if (usable) return usable
  return candidates.length ? { problem: pluginDefinitionProblem(candidates[0]!)! } : undefined
}

async function builtinFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  let entries: import('node:fs').Dirent[]
  try { entries = await readdir(BUILTIN_DIR, { withFileTypes: true }) } catch { return files }
  for (const e of entries) {
    if (e.isDirectory()) {
      for (const ext of ['js', 'ts']) {
        const f = path.join(BUILTIN_DIR, e.name, `index.${ext}`)
        if (existsSync(f)) { files.set(e.name, f); break }
      }
    } else if (e.isFile()) {
      const m = /^([a-z0-9][\w-]*)\.(js|ts)$/.exec(e.name)
      if (!m || m[1] === 'presets' || e.name.includes('.test.') || e.name.endsWith('.d.ts')) continue
      if (!files.has(m[1]!) || m[2] === 'js') files.set(m[1]!, path.join(BUILTIN_DIR, e.name))
    }
  }
  return files
}

export class PluginRegistry {
  private readonly loaded = new Map<string, Promise<LoadedPlugin | { error: string }>>()

  private constructor(private readonly builtins: Map<string, string>, private readonly operator: Map<string, LoadedPlugin>) {}

  /** Scan the built-ins and load every plugin of PLUGINS_DIR (a broken file is a problem to report). */
  static async create(pluginsDir?: string): Promise<{ registry: PluginRegistry; problems: PluginLoadProblem[] }> {
    const problems: PluginLoadProblem[] = []
    const operator = new Map<string, LoadedPlugin>()
    if (pluginsDir) {
      let names: string[] = []
      try {
        names = (await readdir(pluginsDir)).filter((n) => /\.(m?js)$/.test(n)).sort()
      } catch (e) {
        problems.push({ file: pluginsDir, message: `PLUGINS_DIR cannot be read: ${(e as Error).message}` })
      }
      for (const name of names) {
        const file = path.resolve(pluginsDir, name)
        try {
          // The modification time in the URL makes a reload pick up an edited file (ESM caches by URL).
          const { mtimeMs } = await stat(file)
          const mod: unknown = await import(`${pathToFileURL(file).href}?v=${mtimeMs}`)
          const definition = definitionOf(mod)
          if (!definition || 'problem' in definition) {
            problems.push({ file, message: definition?.problem ?? 'the default export is not a plugin definition (definePlugin({ name, description, options, create }))' })
            continue
          }
          const seen = operator.get(definition.name)
          if (seen) problems.push({ file, message: `plugin "${definition.name}" is also defined in ${seen.origin}` })
          else operator.set(definition.name, { definition, origin: file })
        } catch (e) {
          problems.push({ file, message: `cannot load plugin: ${thrownText(e)}` })
        }
      }
    }
    return { registry: new PluginRegistry(await builtinFiles(), operator), problems }
  }

  /** Names a pipeline may `use` without a prefix. */
  names(): string[] {
    return [...new Set([...this.builtins.keys(), ...this.operator.keys()])].sort()
  }

  has(name: string): boolean {
    return name.startsWith('npm:') || this.operator.has(name) || this.builtins.has(name)
  }

  /** The plugin called `name`, or undefined when there is none; `{ error }` when it fails to load. */
  async resolve(name: string): Promise<LoadedPlugin | { error: string } | undefined> {
    const own = this.operator.get(name)
    if (own) return own
    if (!name.startsWith('npm:') && !this.builtins.has(name)) return undefined
    let p = this.loaded.get(name)
    if (!p) {
      p = this.load(name)
      this.loaded.set(name, p)
    }
    return p
  }

  private async load(name: string): Promise<LoadedPlugin | { error: string }> {
    const npm = name.startsWith('npm:') ? name.slice(4) : undefined
    if (npm !== undefined) {
      // Checked before anything is imported: import() would run a data: or file: URL as code.
      const parsed = parseNpmSpecifier(npm)
      if (!parsed.ok) return { error: `"${name.slice(0, 100)}" is not a valid npm package name (${parsed.reason}); npm: takes a package installed beside the worker, never a URL or a path` }
    }
    const target = npm ?? pathToFileURL(this.builtins.get(name)!).href
    try {
      const definition = definitionOf(await import(target))
      if (!definition) return { error: `${npm ? `npm package "${npm}"` : `built-in plugin "${name}"`} does not export a plugin definition as default` }
      if ('problem' in definition) return { error: `${npm ? `npm package "${npm}"` : `built-in plugin "${name}"`}: ${definition.problem}` }
      return { definition, origin: npm ? name : 'built-in' }
    } catch (e) {
      // A module may throw anything, null and undefined included.
      const code = typeof e === 'object' && e !== null ? (e as NodeJS.ErrnoException).code : undefined
      if (npm && (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')) {
        return { error: `npm package "${npm}" is not installed; run \`npm install ${npm}\` where the worker is installed` }
      }
      return { error: `cannot load plugin "${name}": ${thrownText(e)}` }
    }
  }
}
