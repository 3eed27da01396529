// Shared set-up of the engine tests: dependencies that record metrics, pipelines written to a
// temporary folder, items built from short descriptions.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { memoryCacheFor } from '../../src/cli/cli-io.js'
import { loadPipelines, type EngineDeps, type PipelineSet } from '../../src/engine/load-pipelines.js'
import { languageFromCode } from '../../src/engine/languages.js'
import type { PluginTestCase } from '../../src/engine/plugin-tester.js'
import type { Item } from '../../src/engine/types.js'
import { silentLogger } from '../../src/util/logger.js'

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))
export const FIXTURE_PLUGINS = path.join(FIXTURES, 'plugins')

export function testDeps(overrides: Partial<EngineDeps> = {}): EngineDeps & { counts: Map<string, number> } {
  const counts = new Map<string, number>()
  return {
    pluginsDir: FIXTURE_PLUGINS,
    log: silentLogger(),
    cacheFor: memoryCacheFor(),
    env: {},
    metrics: { add(name, value = 1) { counts.set(name, (counts.get(name) ?? 0) + value) } },
    counts,
    ...overrides,
  }
}

/** Write YAML files (text, or bytes as they are) into a fresh folder; returns their paths. */
export function writePipelines(files: Record<string, string | Uint8Array>): { dir: string; paths: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-pipelines-'))
  const paths = Object.entries(files).map(([name, text]) => {
    const p = path.join(dir, name)
    writeFileSync(p, text)
    return p
  })
  return { dir, paths }
}

/** Load one pipeline from YAML text; fails the test with the errors when it does not load. */
export async function loadOne(yaml: string, deps = testDeps()): Promise<{ set: PipelineSet; deps: typeof deps }> {
  const { paths } = writePipelines({ 'p.yaml': yaml })
  const r = await loadPipelines(paths, deps)
  if (!r.ok) throw new Error(r.errors.map((e) => `${e.line}:${e.col} ${e.message}`).join('\n'))
  return { set: r.set, deps }
}

const sharedLog = silentLogger()
const sharedSignal = new AbortController().signal

/** Items as the engine gets them (one shared logger: a pino instance per item would be the slow part). */
export function items(cases: Array<Partial<PluginTestCase> & { source: string }>, settings: Record<string, unknown> = {}): Item[] {
  return cases.map((c, i) => ({
    id: i + 1, key: c.key ?? `key.${i + 1}`, context: c.context ?? '', maxLength: c.maxLength ?? 0,
    source: c.source, translation: c.translation ?? '', isPlural: c.isPlural ?? false,
    fileType: c.fileType ?? '', filePath: '', labelIds: c.labelIds ?? [],
    sourceLanguage: languageFromCode(c.sourceLanguage ?? 'en'), targetLanguage: languageFromCode(c.targetLanguage ?? 'fr'),
    settings, projectId: 1, stepId: 1, organizationId: '1', log: sharedLog, signal: sharedSignal,
  }))
}

/** A minimal pipeline around some checks and routes. */
export function pipelineYaml(body: string, head = ''): string {
  return `key: t
name: Test
input: [translated]
outputs:
  passed: { port: approved }
  failed: { port: translated }
${head}${body}`
}
