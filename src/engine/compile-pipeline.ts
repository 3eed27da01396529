// One validated pipeline file -> a runnable Pipeline. Every problem is collected as a located error
// (the file goes on being checked after the first one), so `switchyard validate` shows them all.
// The stages: outputs, step settings, checks (compile-checks.ts), conditions, routes, on-error,
// issues, logo, event handlers; then the Pipeline. Plugins are created once, here: a plugin whose
// create() refuses its options is a load error.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { closeAll, compileChecks, compileEventHandlers, error, warn, type Compiling, type EngineDeps, type EventHandler, type SettingsDefaults } from './compile-checks.js'
import { compileCondition, ConditionError, type Condition, type ConditionScope, type EvalState, type ValueType } from './conditions.js'
import { ENGINE_CHECK } from './engine-findings.js'
import { formatAjvErrors, PluginOptionsError, resolvePluginOptions } from './instantiate-plugin.js'
import { interpolateSettings } from './interpolate.js'
import type { LocatedError, SourceFile, YamlPath } from './located-error.js'
import type { Pipeline } from './pipeline.js'
import type { PipelineFile } from './pipeline-schema.js'
import type { PluginRegistry } from './plugin-registry.js'
import { PipelineRunner, settleWithin, type CompiledCheck, type CompiledRoute, type OnError } from './run-pipeline.js'
import type { PluginInstance } from './types.js'

export { closeAll, dispatchTo, INSTANCES_PER_CHECK, type EngineDeps, type EventHandler } from './compile-checks.js'

/** Counts the runs in flight on a set, so that a reload closes old plugins only after them. */
export interface RunTracker { enter(): void; leave(): void }

type Output = Pipeline['outputs'][number]

/** The outputs, and how errors that name a missing one list the declared ones. */
interface Outputs { list: Output[]; ports: Map<string, string>; hint: string }

const LOGO_TYPES: Record<string, string> = { '.png': 'image/png', '.svg': 'image/svg+xml', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' }

// Settings schemas may use the standard formats (email, uri, date...), checked when settings are
// saved (savedAjv; settings stored before they were checked still run, as they did); and
// `textarea`, which only asks the settings page for a larger field. Ajv's own logger is off: an
// unknown format is a located warning at load (compileSettings), not a line on the console.
const settingsAjv = new Ajv({ allErrors: true, useDefaults: true, strict: false, logger: false, validateFormats: false })
const savedAjv = new Ajv({ allErrors: true, useDefaults: true, strict: false, logger: false })
addFormats.default(savedAjv)
savedAjv.addFormat('textarea', true)

/** The `format`s a settings schema names that are not known (not checked, whatever their name promises). */
function unknownFormats(schema: unknown, at: YamlPath = []): Array<{ at: YamlPath; format: string }> {
  if (!schema || typeof schema !== 'object') return []
  const out: Array<{ at: YamlPath; format: string }> = []
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if (k === 'format' && typeof v === 'string' && !savedAjv.formats[v]) out.push({ at: [...at, k], format: v })
    else if (v && typeof v === 'object') out.push(...unknownFormats(v, [...at, k]))
  }
  return out
}

/**
 * Compile one file that passed the schema: its Pipeline, its event handlers and (to close with the
 * set) every plugin instance it holds; undefined, with `errors` added to, when it has errors.
 */
export async function compilePipeline(
  src: SourceFile, file: PipelineFile, registry: PluginRegistry, deps: EngineDeps, tracker: RunTracker,
  errors: LocatedError[], warnings: LocatedError[],
): Promise<{ pipeline: Pipeline; events: EventHandler[]; instances(): Array<Promise<PluginInstance> | PluginInstance> } | undefined> {
  const errorsBefore = errors.length
  const c: Compiling = {
    src, dir: path.dirname(path.resolve(src.file)), key: file.key, log: deps.log.child({ pipeline: file.key }),
    deps, registry, errors, warnings, created: [], disabled: new Set(),
  }
  const outputs = compileOutputs(file.outputs)
  const settings = compileSettings(c, file.settings)
  const { checks, conditions } = await compileChecks(c, file, settings)
  for (const cond of conditions) cond.check.condition = compileConditionAt(c, cond.text, cond.path, scopeFor(checks, cond.check.index, settings.types, c.disabled))
  const routes = compileRoutes(c, file.route ?? [], outputs, scopeFor(checks, Infinity, settings.types, c.disabled))
  const onError = compileOnError(c, file['on-error'], outputs)
  const issues = compileIssues(c, file.issues, file.route ?? [], routes, checks.length, outputs)
  const logo = findLogo(c, file.logo)
  const events = await compileEventHandlers(c, file.events ?? [], settings)
  if (errors.length > errorsBefore) {
    await closeAll(c.created, c.log)
    return undefined
  }
  const runner = new PipelineRunner(checks, routes, onError)
  const pipeline: Pipeline = {
    key: file.key,
    name: file.name,
    description: file.description ?? '',
    editorMode: file.editorMode ?? 'side-by-side',
    file: path.resolve(src.file),
    logo,
    input: file.input,
    outputs: outputs.list,
    settingsSchema: settings.schema,
    resolveSettings: settings.resolve,
    checkSettings: async (values) => [...settings.formatErrors(values), ...(await checkOptionsWith(checks, values))],
    needsTranslation: checks.some((check) => check.needsTranslation),
    issues,
    async run(items, options) {
      tracker.enter()
      try {
        return await runner.run(items, options?.signal, options?.progress, options)
      } finally {
        tracker.leave()
      }
    },
    timedOut: (id, checkIndex, budgetMs) => runner.timedOut(id, checkIndex, budgetMs),
    settingsInvalid: (id, errors) => runner.settingsInvalid(id, errors),
  }
  const created = c.created
  return { pipeline, events, instances: () => [...created, ...checks.flatMap((check) => [...check.bySettings.values()])] }
}

function compileOutputs(declared: PipelineFile['outputs']): Outputs {
  const list = Object.entries(declared).map(([name, o]): Output => ({ name, port: o.port, title: o.title ?? name }))
  return {
    list,
    ports: new Map(list.map((o) => [o.name, o.port as string])),
    hint: list.length ? `declared outputs: ${list.map((o) => o.name).join(', ')}` : 'no outputs are declared',
  }
}

/**
 * The same keys on an object without a prototype, for ajv: it reads `data.toString` through
 * Object.prototype, so a setting named toString (valueOf, constructor...) that a step lacks was
 * "set" to a function (refused for its type, its default never applied).
 */
const bare = (o: Record<string, unknown>): Record<string, unknown> => Object.assign(Object.create(null) as Record<string, unknown>, o)

/**
 * Saved settings the schema refused, resolved for a run: only what the step saved can make them
 * invalid. A setting the schema no longer takes (additionalProperties: false) is left out (nothing
 * reads it); a required setting the step never saved, and one whose default its own field refuses
 * (a warning at load), have no value, as in a step with nothing saved. What is left is the step's.
 */
function forRun(copy: Record<string, unknown>, stored: unknown, validate: ValidateFunction): { ok: true; settings: Record<string, unknown> } | { ok: false; errors: ValidateFunction['errors'] } {
  let dropped = false
  for (const e of validate.errors ?? []) {
    const name = e.keyword === 'additionalProperties' && e.instancePath === '' ? (e.params as { additionalProperty?: unknown }).additionalProperty : undefined
    if (typeof name === 'string' && Object.hasOwn(copy, name)) dropped = delete copy[name]
  }
  if (dropped && validate(copy)) return { ok: true, settings: { ...copy } }
  const saved = (stored && typeof stored === 'object' ? stored : {}) as Record<string, unknown>
  const unset = new Set<string>()
  const errors = (validate.errors ?? []).filter((e) => {
    if (e.keyword === 'required' && e.instancePath === '') return false
    const field = /^\/([^/]+)/.exec(e.instancePath)?.[1]?.replaceAll('~1', '/').replaceAll('~0', '~')
    if (field === undefined || Object.hasOwn(saved, field)) return true
    unset.add(field)
    return false
  })
  if (errors.length) return { ok: false, errors }
  for (const field of unset) delete copy[field]
  return { ok: true, settings: { ...copy } }
}

/** Step settings: a JSON Schema of an object; defaults fill in what the step's stored settings lack. */
function compileSettings(c: Compiling, declared: PipelineFile['settings']): SettingsDefaults & { schema: object; resolve: Pipeline['resolveSettings']; formatErrors(settings: Record<string, unknown>): string[] } {
  const properties = declared?.properties ?? {}
  const schema = { type: 'object', ...declared, properties }
  let validate: ValidateFunction | undefined
  let saved: ValidateFunction | undefined
  try {
    validate = settingsAjv.compile(schema)
    saved = savedAjv.compile(schema)
  } catch (e) {
    error(c, ['settings'], `settings is not a valid JSON Schema: ${(e as Error).message}`)
  }
  for (const { at, format } of unknownFormats(declared ?? {})) warn(c, ['settings', ...at], `unknown format "${format}" is not checked; known: textarea, ${Object.keys(savedAjv.formats).filter((f) => f !== 'textarea').join(', ')}`)
  const defaults: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(properties)) if (v.default !== undefined) defaults[k] = structuredClone(v.default)
  // A default its own field refuses: every step with nothing saved would run on settings the
  // schema refuses, and the settings page could not save until the field was changed.
  // (The defaults alone, against the whole schema: only errors inside a field count; a required
  // field without a default is the user's to fill.)
  // A warning, not an error: a pipeline that loaded before must still load.
  if (saved && !saved(bare(structuredClone(defaults)))) {
    for (const e of saved.errors ?? []) {
      const k = /^\/([^/]+)/.exec(e.instancePath)?.[1]?.replaceAll('~1', '/').replaceAll('~0', '~')
      if (k !== undefined && Object.hasOwn(defaults, k)) warn(c, ['settings', 'properties', k, 'default'], `the default of setting "${k}" does not pass its own schema (a step that did not save it runs without it, and the settings page cannot save until it is changed): ${formatAjvErrors([e]).join('; ')}`)
    }
  }
  const refused = (errors: ValidateFunction['errors']) => ({ ok: false as const, errors: formatAjvErrors(errors, 'settings.').map((e) => e.replace(/^settings\.:/, 'settings:')) })
  const resolve: Pipeline['resolveSettings'] = (stored, options) => {
    const copy = bare(structuredClone(stored && typeof stored === 'object' && !Array.isArray(stored) ? stored : {}) as Record<string, unknown>)
    if (!validate || validate(copy)) return { ok: true, settings: { ...copy } }
    // Nothing saved: the pipeline's defaults (applied to the copy), whatever `required` asks of
    // the user. A required setting without a default has no value then, as any unset setting;
    // refusing the lot ran the step with none of the other settings' defaults.
    if (stored === undefined && validate.errors?.every((e) => e.keyword === 'required' && e.instancePath === '')) return { ok: true, settings: { ...(copy as Record<string, unknown>) } }
    if (!options?.run) return refused(validate.errors)
    const run = forRun(copy, stored, validate)
    return run.ok ? run : refused(run.errors)
  }
  const types = new Map(Object.entries(properties).map(([k, v]) => [k, valueType(v.type)]))
  /** What a save is also refused for: the formats (resolved settings; the other keywords passed already). */
  const formatErrors = (values: Record<string, unknown>): string[] => (!saved || saved(bare(structuredClone(values))) ? [] : formatAjvErrors(saved.errors, 'settings.'))
  return { schema, resolve, types, defaults, formatErrors }
}

/**
 * What the checks whose options take settings say of these settings: each check's options, with
 * the settings put in, against its plugin's schema, then its plugin started with them (and closed
 * again: the runs start their own) unless it already runs with the same options. A refusal of
 * either is an error naming the check.
 */
async function checkOptionsWith(checks: CompiledCheck[], settings: Record<string, unknown>): Promise<string[]> {
  const errors: string[] = []
  for (const check of checks) {
    if (check.fixed) continue
    let resolved: unknown
    try {
      resolved = resolvePluginOptions(check.definition, interpolateSettings(check.options, settings))
    } catch (e) {
      if (!(e instanceof PluginOptionsError)) throw e
      errors.push(...e.errors.map((m) => `check "${check.id}": option ${m}`))
      continue
    }
    // Started (or found started) within the check's timeout, and a new one closed again: a
    // create() that hangs must not keep the settings callback (and the service waiting on it).
    const cached = check.bySettings.get(JSON.stringify(resolved))
    const made = cached ?? Promise.resolve().then(() => check.definition.create(resolved as never, check.context))
    const r = (await settleWithin([made], check.timeoutMs))[0]!
    if ('value' in r) {
      if (!cached) {
        try {
          await r.value?.close?.()
        } catch {
          // Started with these options is all that was asked.
        }
      }
    } else if (r.code === 'plugin-timed-out') {
      errors.push(`check "${check.id}": plugin "${check.plugin}" did not start within ${check.timeoutMs} ms with these options`)
      if (!cached) void made.then((instance) => instance?.close?.(), () => undefined).catch(() => undefined)
    } else errors.push(`check "${check.id}": plugin "${check.plugin}" refused its options: ${r.error}`)
  }
  return errors
}

function valueType(type: unknown): ValueType {
  switch (type) {
    case 'number': case 'integer': return 'number'
    case 'string': return 'string'
    case 'boolean': return 'boolean'
    case 'array': return 'list'
    default: return 'any'
  }
}

/** What a condition may name: the checks before `upTo` (a check's `if` sees only earlier ones). */
function scopeFor(checks: CompiledCheck[], upTo: number, settings: Map<string, ValueType>, disabled: ReadonlySet<string>): ConditionScope {
  const ids = new Map<string, number>()
  for (const check of checks) if (check.index < upTo) ids.set(check.id, check.index)
  ids.set(ENGINE_CHECK, checks.length)
  return { checks: ids, settings, disabled }
}

function compileConditionAt(c: Compiling, text: string, at: YamlPath, scope: ConditionScope): Condition | undefined {
  try {
    return compileCondition(text, scope)
  } catch (e) {
    if (!(e instanceof ConditionError)) throw e
    c.errors.push(c.src.errorAt(c.src.offsetInScalar(at, e.offset), `bad condition: ${e.message}`))
    return undefined
  }
}

type Route = NonNullable<PipelineFile['route']>[number]

function compileRoutes(c: Compiling, list: Route[], outputs: Outputs, scope: ConditionScope): CompiledRoute[] {
  const routes: CompiledRoute[] = []
  let fallsThrough = true
  list.forEach((r, i) => {
    let port = ''
    if (r.to !== '' && !outputs.ports.has(r.to)) error(c, ['route', i, 'to'], `route to "${r.to}", which is not an output; ${outputs.hint}`)
    else if (r.to !== '') port = outputs.ports.get(r.to)!
    const condition = r.if !== undefined ? compileConditionAt(c, r.if, ['route', i, 'if'], scope) : undefined
    if (r.if === undefined) {
      if (i < list.length - 1) warn(c, ['route', i + 1], 'this route is never reached: the one before it has no `if`')
      fallsThrough = false
    }
    routes.push({ condition, output: r.to === '' ? null : r.to, port })
  })
  if (fallsThrough) {
    warn(c, list.length ? ['route', list.length - 1] : ['key'], 'strings that match no route are parked (output ""); end the routes with one that has no `if` to route everything')
  }
  return routes
}

function compileOnError(c: Compiling, onError: string | undefined, outputs: Outputs): OnError {
  if (onError === undefined || onError === 'park' || onError === '') return { kind: 'park' }
  if (onError === 'retry') return { kind: 'retry' }
  const port = outputs.ports.get(onError)
  if (port !== undefined) return { kind: 'output', output: onError, port }
  error(c, ['on-error'], `on-error must be park, retry or an output name, not "${onError}"; ${outputs.hint}`)
  return { kind: 'park' }
}

/**
 * Does a route that names `errors` send strings back? It does when errors can make it hold: it
 * need not hold for a string without any finding, and it may hold for one with errors, whatever
 * the string's fields and settings (and its other counts) are. `no errors so far`, `errors == 0`
 * or `no errors and target.language == "de"` route clean strings; `errors > 0`, `errors > 0 and
 * file.type == "json"` or `errors > 0 or not settings.strict` send strings back. Decided in
 * three-valued logic, what the condition does not fix left unknown.
 */
function sendsStringsBack(condition: Condition | undefined, text: string, checkCount: number): boolean {
  if (!condition) return true
  const item = { settings: {} } as unknown as EvalState['item']
  const state = (errors: number): EvalState => ({ item, sev: Int32Array.of(errors, 0, 0), byCheck: new Int32Array((checkCount + 1) * 3) })
  // Counts are compared with the condition's numbers only: it can change only at them, so some
  // error count at, around or beyond each one (and 1) is where it may hold (`errors == 1`,
  // `errors > 0 and errors < 3`), not only a very large one.
  const numbers = (text.match(/\d+(\.\d+)?/g) ?? []).map(Number)
  const counts = [...new Set([1, 1_000_000, ...numbers.flatMap((n) => [Math.floor(n) - 1, Math.floor(n), Math.floor(n) + 1, Math.ceil(n)])])]
    .filter((n) => n >= 1 && n <= 1_000_000)
  try {
    return condition.decided(state(0), false) !== true && counts.some((n) => condition.decided(state(n), true) !== false)
  } catch {
    return true
  }
}

/** Issues: on by the key's presence; the outputs that send a string back, by name or by the routes that count errors. */
function compileIssues(c: Compiling, issues: PipelineFile['issues'], routes: Route[], compiled: CompiledRoute[], checkCount: number, outputs: Outputs): Pipeline['issues'] {
  if (!issues || issues.raise === false) return undefined
  if (issues.outputs) {
    issues.outputs.forEach((o, i) => {
      if (!outputs.ports.has(o)) error(c, ['issues', 'outputs', i], `issues on "${o}", which is not an output; ${outputs.hint}`)
    })
    return { outputs: issues.outputs }
  }
  const sendBack = routes.filter((r, i) => r.if !== undefined && /\berrors\b/.test(r.if) && r.to !== '' && sendsStringsBack(compiled[i]?.condition, r.if, checkCount)).map((r) => r.to)
  if (!sendBack.length) warn(c, ['issues'], 'no route counts errors, so no output sends strings back: name them in issues.outputs')
  return { outputs: [...new Set(sendBack)] }
}

/** Logo: a file beside the pipeline; by default <file name>.png or .svg if there is one. */
function findLogo(c: Compiling, logo: string | undefined): Pipeline['logo'] {
  if (logo === undefined) {
    const base = c.src.file.replace(/\.ya?ml$/i, '')
    for (const ext of ['.png', '.svg']) if (existsSync(path.resolve(base + ext))) return { path: path.resolve(base + ext), contentType: LOGO_TYPES[ext]! }
    return undefined
  }
  const file = path.resolve(c.dir, logo)
  const contentType = LOGO_TYPES[path.extname(file).toLowerCase()]
  if (!contentType) error(c, ['logo'], `logo must be an image (${Object.keys(LOGO_TYPES).join(', ')})`)
  else if (path.relative(c.dir, file).startsWith('..')) error(c, ['logo'], 'logo must be a file beside the pipeline, not outside its folder')
  else if (!existsSync(file)) error(c, ['logo'], `logo file ${logo} does not exist beside ${path.basename(c.src.file)}`)
  else return { path: file, contentType }
  return undefined
}
