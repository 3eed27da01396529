// Table-driven tests for plugins, in the manner of ESLint's RuleTester: a list of `valid` cases
// (no finding at all) and `invalid` cases (exactly the findings listed). It registers one test per
// case with the test framework's `describe`/`it`, taken from the globals or set on the class.
// A plugin that declares its `messages` is held to them: each finding carries a declared code with
// a declared severity, and its invalid cases name the code and the side of each finding.
import { buildItem } from './build-item.js'
import { languageFromCode } from './languages.js'
import { instantiatePlugin } from './instantiate-plugin.js'
import { DEFAULT_TIMEOUT_MS } from './run-pipeline.js'
import type { Finding, FindingInput, Item, PluginCache, PluginContext, PluginDefinition, PluginInstance, PluralForm, Severity } from './types.js'
import { silentLogger } from '../util/logger.js'

export interface PluginTestCase {
  /** Shown in the test name; defaults to the texts. */
  name?: string
  source: string
  translation: string
  /** Language codes; default `en` and `fr`. */
  sourceLanguage?: string
  targetLanguage?: string
  options?: Record<string, unknown>
  key?: string
  context?: string
  maxLength?: number
  isPlural?: boolean
  plurals?: PluralForm[]
  fileType?: string
  labelIds?: number[]
  settings?: Record<string, unknown>
  /**
   * The check's `timeout` in a pipeline, in ms: the plugin's `context.timeoutMs`. Default, as in
   * the engine: the plugin's `timeoutMs`, else 30 s.
   */
  timeout?: number
}

export interface ExpectedFinding {
  /** The finding's code (required when the plugin declares `messages`). */
  code?: string
  /**
   * The text the finding's span is in. For a plugin that declares `messages` it is always checked:
   * left out (and no `span.in`), it means a span in the translation when `span` is given, else no span.
   */
  in?: 'source' | 'translation'
  /** Substring the message must contain, or a pattern it must match. */
  message?: string | RegExp
  severity?: Severity
  suggestion?: string
  /** Where the finding points; `in` (source or translation), when given, is checked too. */
  span?: { start: number; end: number; in?: 'source' | 'translation' }
}

export interface InvalidPluginTestCase extends PluginTestCase {
  /** The findings expected, in order; a number checks only how many (not for a plugin that declares `messages`). */
  findings: ExpectedFinding[] | number
}

type Describe = (name: string, fn: () => void) => void
type It = (name: string, fn: () => Promise<void>) => void

function memoryCache(): PluginCache {
  const map = new Map<string, unknown>()
  return {
    async get<T>(key: string) { return map.get(key) as T | undefined },
    async set(key: string, value: unknown) { map.set(key, value) },
  }
}

/**
 * A context as the engine gives one at load. `timeoutMs` is the engine's for a check without a
 * `timeout`: a plugin that bounds its retries by it (ai-proofread) was tested without the limit
 * it gets in the worker.
 */
export function testContext(definition: PluginDefinition<never>, overrides: Partial<PluginContext> = {}): PluginContext {
  return {
    pipelineKey: 'test',
    pipelineDir: process.cwd(),
    checkId: definition.name,
    timeoutMs: definition.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    log: silentLogger(),
    cache: memoryCache(),
    env: {},
    metrics: { add() {} },
    ...overrides,
  }
}

/** An item as the engine would build it (build-item.ts), from a test case. */
export function testItem(c: PluginTestCase, id = 1): Item {
  const string = {
    key: c.key ?? `key.${id}`, context: c.context ?? '', maxLength: c.maxLength ?? 0, text: c.source,
    isPlural: c.isPlural ?? !!c.plurals, fileType: c.fileType ?? '', filePath: '', labelIds: c.labelIds ?? [],
  }
  const job = { stringId: id, projectId: 1, stepId: 1, organizationId: '1', string, sourceLanguage: languageFromCode(c.sourceLanguage ?? 'en'), targetLanguage: languageFromCode(c.targetLanguage ?? 'fr') }
  return buildItem(job, { translation: { text: c.translation, ...(c.plurals ? { plurals: c.plurals } : {}) }, settings: c.settings ?? {}, log: silentLogger(), signal: new AbortController().signal })
}

/** Run a plugin on one case and return its findings, with check and severity filled in. */
export async function runPluginCase(definition: PluginDefinition<never>, c: PluginTestCase, context?: Partial<PluginContext>): Promise<Finding[]> {
  const instance: PluginInstance = await instantiatePlugin(definition, c.options ?? {}, testContext(definition, { ...(c.timeout !== undefined ? { timeoutMs: c.timeout } : {}), ...context }))
  // As in the worker, an item has the translation only for a plugin that declares the need.
  const needsTranslation = Array.isArray(definition.needs) && definition.needs.includes('translation')
  const item = needsTranslation ? testItem(c) : { ...testItem(c), translation: undefined, plurals: undefined }
  let raw: unknown
  if (instance.check) raw = await instance.check(item)
  else if (instance.checkBatch) {
    const batch: unknown = await instance.checkBatch([item])
    if (!Array.isArray(batch) || batch.length !== 1) throw new Error(`plugin "${definition.name}": checkBatch() returned ${Array.isArray(batch) ? `${batch.length} results for 1 string` : 'no array'} (the worker fails the strings with plugin-bad-result)`)
    raw = batch[0]
    // The string failed alone: as a check() that throws.
    if (raw instanceof Error) throw raw
  } else throw new Error(`plugin "${definition.name}" has neither check() nor checkBatch()`)
  await instance.close?.()
  // Held to what the worker takes (run-pipeline.ts): an array of findings with a message each; a
  // severity it does not know is an error there.
  if (!Array.isArray(raw)) throw new Error(`plugin "${definition.name}": returned ${raw === undefined ? 'nothing' : typeof raw} instead of an array of findings (the worker fails the string with plugin-bad-result)`)
  const bad = (raw as unknown[]).findIndex((f) => !f || typeof (f as FindingInput).message !== 'string')
  if (bad !== -1) throw new Error(`plugin "${definition.name}": finding ${bad} has no message (the worker fails the string with plugin-bad-result)`)
  const known = (v: unknown): v is Severity => v === 'error' || v === 'warning' || v === 'info'
  const findings = (raw as FindingInput[]).map((f) => ({ check: f.check ?? definition.name, ...f, severity: known(f.severity) ? f.severity : 'error' }) as Finding)
  for (const f of findings) {
    const problem = undeclared(definition, f)
    if (problem) throw new Error(`plugin "${definition.name}": ${problem}`)
  }
  return findings
}

/** Why a finding breaks the plugin's declared `messages`, if it does. */
export function undeclared(definition: Pick<PluginDefinition<never>, 'messages'>, f: Finding): string | undefined {
  const messages = definition.messages
  if (!messages) return undefined
  if (f.code === undefined) return `finding without a code: ${JSON.stringify(f.message)}`
  const spec = Object.hasOwn(messages, f.code) ? messages[f.code] : undefined
  if (!spec) return `finding code "${f.code}" is not declared in its messages`
  const allowed: readonly Severity[] = typeof spec.severity === 'string' ? [spec.severity] : spec.severity
  if (!allowed.includes(f.severity)) return `finding "${f.code}" has severity ${f.severity}; its messages declare ${allowed.join(' or ')}`
  return undefined
}

type Side = 'source' | 'translation' | 'no span'
const actualSide = (f: Finding): Side => (f.span ? (f.span.in ?? 'translation') : 'no span')
const expectedSide = (e: ExpectedFinding): Side => e.in ?? e.span?.in ?? (e.span ? 'translation' : 'no span')

function describeCase(c: PluginTestCase): string {
  const text = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s)
  return c.name ?? `${c.sourceLanguage ?? 'en'}→${c.targetLanguage ?? 'fr'} ${text(c.source)} → ${text(c.translation)}`
}

function mismatch(expected: ExpectedFinding, actual: Finding, byCode: boolean): string | undefined {
  if (byCode) {
    if (expected.code === undefined) return `the case names no code (the plugin declares messages): the finding is ${actual.code}`
    if (expected.code !== actual.code) return `code ${actual.code}, expected ${expected.code}`
    if (expectedSide(expected) !== actualSide(actual)) return `${actual.code}: ${actualSide(actual) === 'no span' ? 'no span' : `span in the ${actualSide(actual)}`}, expected ${expectedSide(expected) === 'no span' ? 'no span' : `in the ${expectedSide(expected)}`}`
  } else if (expected.code !== undefined && expected.code !== actual.code) return `code ${actual.code}, expected ${expected.code}`
  if (expected.in !== undefined && actualSide(actual) !== expected.in) return `${actualSide(actual) === 'no span' ? 'no span' : `span in the ${actualSide(actual)}`}, expected in the ${expected.in}`
  if (expected.message !== undefined) {
    const ok = typeof expected.message === 'string' ? actual.message.includes(expected.message) : expected.message.test(actual.message)
    if (!ok) return `message ${JSON.stringify(actual.message)} does not match ${String(expected.message)}`
  }
  if (expected.severity && expected.severity !== actual.severity) return `severity ${actual.severity}, expected ${expected.severity}`
  if (expected.suggestion !== undefined && expected.suggestion !== actual.suggestion) return `suggestion ${JSON.stringify(actual.suggestion)}, expected ${JSON.stringify(expected.suggestion)}`
  if (expected.span && (actual.span?.start !== expected.span.start || actual.span?.end !== expected.span.end)) {
    return `span ${JSON.stringify(actual.span)}, expected ${JSON.stringify(expected.span)}`
  }
  // A span is in the translation unless it says otherwise (Span.in).
  if (expected.span?.in !== undefined && (actual.span?.in ?? 'translation') !== expected.span.in) {
    return `span in the ${actual.span?.in ?? 'translation'}, expected in the ${expected.span.in}`
  }
  return undefined
}

export class PluginTester {
  /** Set these when the test framework does not expose `describe`/`it` as globals (vitest without globals). */
  static describe?: Describe
  static it?: It

  run(definition: PluginDefinition<never>, cases: { valid: PluginTestCase[]; invalid: InvalidPluginTestCase[] }): void {
    const g = globalThis as unknown as { describe?: Describe; it?: It }
    const describe = PluginTester.describe ?? g.describe
    const it = PluginTester.it ?? g.it
    if (!describe || !it) throw new Error('PluginTester needs describe/it: set PluginTester.describe and PluginTester.it')
    describe(definition.name, () => {
      describe('valid', () => {
        for (const c of cases.valid) {
          it(describeCase(c), async () => {
            const findings = await runPluginCase(definition, c)
            if (findings.length) throw new Error(`expected no finding, got ${findings.length}:\n${findings.map((f) => `  ${f.severity}: ${f.message}`).join('\n')}`)
          })
        }
      })
      describe('invalid', () => {
        for (const c of cases.invalid) {
          it(describeCase(c), async () => {
            const byCode = !!definition.messages
            if (byCode && typeof c.findings === 'number') throw new Error('the case counts findings: list their codes (the plugin declares messages)')
            const findings = await runPluginCase(definition, c)
            const want = typeof c.findings === 'number' ? c.findings : c.findings.length
            if (findings.length !== want) {
              throw new Error(`expected ${want} finding(s), got ${findings.length}:\n${findings.map((f) => `  ${f.severity}${f.code ? ` ${f.code}` : ''}: ${f.message}`).join('\n') || '  (none)'}`)
            }
            if (Array.isArray(c.findings)) {
              c.findings.forEach((expected, i) => {
                const problem = mismatch(expected, findings[i]!, byCode)
                if (problem) throw new Error(`finding ${i + 1}: ${problem}`)
              })
            }
          })
        }
      })
    })
  }
}
