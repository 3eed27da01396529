// The built-in plugins as the catalog sees them: every folder of plugins/ but `_shared`.
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import type { PluginDefinition } from '../../src/engine/types.js'

export function pluginFolders(): string[] {
  return readdirSync(path.join(PACKAGE_ROOT, 'plugins'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('_'))
    .map((d) => d.name)
    .sort()
}

export async function loadPlugin(name: string): Promise<PluginDefinition<never>> {
  return ((await import(`../../plugins/${name}/index.ts`)) as { default: PluginDefinition<never> }).default
}
