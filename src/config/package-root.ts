// Root of the installed package (where pipelines/ and manifest.template.json live).
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)))

// Runs from src/config (vitest) or dist/src/config (built): walk up to our package.json.
function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'manifest.template.json'))) return dir
    if (path.dirname(dir) === dir) return path.resolve(from, '../..')
  }
}
