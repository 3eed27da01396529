// What `uses: npm:<specifier>` may name: an npm package name (scoped or not) with an optional
// subpath, imported as a bare specifier, so Node resolves it from the app's own node_modules. No
// URL of any scheme (data:, file:, http:, node:), no relative or absolute path, no Node built-in:
// a pipeline file must not be a way to run code that is not installed beside the worker.
// Written by hand: the rules are the npm registry's for new package names (lower case, URL-safe,
// at most 214 characters, no leading dot or underscore); validate-npm-package-name would be a
// dependency for one regular expression.
import { isBuiltin } from 'node:module'

const PART = '[a-z0-9~-][a-z0-9._~-]*'
const NAME = new RegExp(`^(?:@${PART}/)?${PART}$`)
const SUBPATH_SEGMENT = /^[A-Za-z0-9_~@-][A-Za-z0-9._~@-]*$/

export type NpmSpecifier = { ok: true; name: string; subpath: string | undefined } | { ok: false; reason: string }

export function parseNpmSpecifier(spec: string): NpmSpecifier {
  const parts = spec.split('/')
  const scoped = spec.startsWith('@')
  const nameParts = scoped ? 2 : 1
  if (parts.length < nameParts) return { ok: false, reason: 'a scoped name needs @scope/name' }
  const name = parts.slice(0, nameParts).join('/')
  const rest = parts.slice(nameParts)
  if (name.length > 214 || !NAME.test(name)) return { ok: false, reason: 'expected a package name like my-plugin or @scope/my-plugin' }
  if (isBuiltin(name)) return { ok: false, reason: `"${name}" is a Node.js built-in module` }
  for (const segment of rest) {
    if (!SUBPATH_SEGMENT.test(segment) || segment === '..' || segment === '.') return { ok: false, reason: 'a subpath may hold only letters, digits and . _ ~ @ -, with no . or .. segments' }
  }
  return { ok: true, name, subpath: rest.length ? `/${rest.join('/')}` : undefined }
}
