#!/usr/bin/env node
// Writes the generated parts of every plugin README (plugins/*/README.md): the Options table from
// the plugin's options schema and the Codes table from its messages, between their markers; and
// the table of the engine's own finding codes in docs/pipelines.md.
// Run after a build: `npm run docs:plugins`. test/plugins/catalog.test.ts fails when a README's
// copy is stale.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { updatePluginReadme } = await import(path.join(root, 'dist/src/engine/plugin-readme.js'))
for (const name of readdirSync(path.join(root, 'plugins')).sort()) {
  const module = path.join(root, 'dist/plugins', name, 'index.js')
  const readme = path.join(root, 'plugins', name, 'README.md')
  if (name.startsWith('_') || !existsSync(module) || !existsSync(readme)) continue
  const definition = (await import(module)).default
  const before = readFileSync(readme, 'utf8')
  const after = updatePluginReadme(before, definition)
  if (after !== before) {
    writeFileSync(readme, after)
    console.log(`updated plugins/${name}/README.md`)
  }
}

const { updateEngineCodes } = await import(path.join(root, 'dist/src/engine/engine-findings.js'))
const doc = path.join(root, 'docs', 'pipelines.md')
const before = readFileSync(doc, 'utf8')
const after = updateEngineCodes(before)
if (after !== before) {
  writeFileSync(doc, after)
  console.log('updated docs/pipelines.md (engine codes)')
}
