// One parsed pipeline file -> a runnable Pipeline. Every problem is collected as a located error
// (the file goes on being checked after the first one), so `switchyard validate` shows them all.
// Plugins are created here, once: a plugin whose create() refuses its options is a load error.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import { PRESETS, type PresetCheck } from '../../plugins/presets.js'
import type { Port } from '../webhooks/event-types.js'
import { compileCondition, ConditionError, type ConditionScope, type ValueType } from './conditions.js'
import { formatAjvErrors, PluginOptionsError, resolvePluginOptions } from './instantiate-plugin.js'
import { interpolateSettings, settingReferences } from './interpolate.js'
import type { LocatedError, SourceFile, YamlPath } from './located-error.js'
import { LruMap } from './lru-map.js'
import type { PluginRegistry } from './plugin-registry.js'
import { DEFAULT_MAX_TEXT_LENGTH, DEFAULT_TIMEOUT_MS, PipelineRunner, type CompiledCheck, type CompiledRoute, type OnError, type Progress, type RunMore, type RunResult } from './run-pipeline.js'
import type { Item, PluginCache, PluginContext, PluginEvent, PluginInstance, PluginMetrics, Severity } from './types.js'
import type { Logger } from '../util/logger.js'

export interface EngineDeps {
  pluginsDir?: string
  log: Logger
  cacheFor(namespace: string): PluginCache
  env: Readonly<Record<string, string | undefined>>
  metrics: PluginMetrics
}

export type EditorMode = 'side-by-side' | 'comfortable' | 'multilingual'

export interface Pipeline {
  key: string
  name: string
  description: string
  editorMode: EditorMode
  file: string
  /** Absolute path of the logo image. */
  logo?: { path: string; contentType: string }
  input: Port[]
  outputs: Array<{ name: string; port: Port; title: string }>
  settingsSchema: object
  resolveSettings(stored: unknown): { ok: true; settings: Record<string, unknown> } | { ok: false; errors: string[] }
  needsTranslation: boolean
  /** Issues raised on strings sent back (the `issues` option): the outputs that send a string back. */
  issues?: { outputs: string[] }
  run(items: Item[], options?: { signal?: AbortSignal; progress?: Progress } & RunMore): Promise<RunResult[]>
  /** The outcome of a string whose check `checkIndex` was stopped after `budgetMs` (on-error applies). */
  timedOut(id: number, checkIndex: number, budgetMs: number): RunResult
}

export interface EventHandler { on: string; id: string; plugin: string; instance: PluginInstance; timeoutMs: number; log: Logger }

export interface CompiledPipeline {
  pipeline: Pipeline
  events: EventHandler[]
  /** Every instance created for this pipeline, to close. */
  instances(): Array<Promise<PluginInstance> | PluginInstance>
  keyOffset: number
}

/** Counts the runs in flight on a set, so that a reload closes old plugins only after them. */
export interface RunTracker { enter(): void; leave(): void }

const LOGO_TYPES: Record<string, string> = { '.png': 'image/png', '.svg': 'image/svg+xml', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' }

const settingsAjv = new Ajv({ allErrors: true, useDefaults: true, strict: false })

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

interface RawCheck { entry: Obj; path: YamlPath; withPath: YamlPath }

function valueType(schema: unknown): ValueType {
  const t = isObj(schema) ? schema.type : undefined
  switch (t) {
    case 'number': case 'integer': return 'number'
    case 'string': return 'string'
    case 'boolean': return 'boolean'
    case 'array': return 'list'
    default: return 'any'
  }
}

export async function compilePipeline(
  src: SourceFile, data: Obj, registry: PluginRegistry, deps: EngineDeps, tracker: RunTracker,
  errors: LocatedError[], warnings: LocatedError[],
): Promise<CompiledPipeline | undefined> {
  const errorsBefore = errors.length
  const err = (p: YamlPath, message: string, at: 'key' | 'value' = 'value') => { errors.push(src.errorAtPath(p, message, at)) }
  const warn = (p: YamlPath, message: string) => { warnings.push(src.errorAtPath(p, message)) }
  const dir = path.dirname(path.resolve(src.file))
  const key = str(data.key) ?? ''
  const created: Array<Promise<PluginInstance> | PluginInstance> = []
  const log = deps.log.child({ pipeline: key })

  // Outputs.
  const outputs: Array<{ name: string; port: Port; title: string }> = []
  if (isObj(data.outputs)) {
    for (const [name, o] of Object.entries(data.outputs)) {
      if (isObj(o) && typeof o.port === 'string') outputs.push({ name, port: o.port as Port, title: str(o.title) ?? name })
    }
  }
  const outputPorts = new Map(outputs.map((o) => [o.name, o.port as string]))
  const outputHint = outputs.length ? `declared outputs: ${outputs.map((o) => o.name).join(', ')}` : 'no outputs are declared'

  // Settings: a JSON Schema of an object; defaults fill in what the step's stored settings lack.
  const settingsRaw = isObj(data.settings) ? data.settings : {}
  const settingsSchema: Obj = { type: 'object', ...settingsRaw, properties: isObj(settingsRaw.properties) ? settingsRaw.properties : {} }
  let validateSettings: ValidateFunction | undefined
  try {
    validateSettings = settingsAjv.compile(settingsSchema)
  } catch (e) {
    err(['settings'], `settings is not a valid JSON Schema: ${(e as Error).message}`)
  }
  const settingTypes = new Map<string, ValueType>(Object.entries(settingsSchema.properties as Obj).map(([k, v]) => [k, valueType(v)]))
  const resolveSettings = (stored: unknown): { ok: true; settings: Record<string, unknown> } | { ok: false; errors: string[] } => {
    const copy = structuredClone(isObj(stored) ? stored : {})
    if (!validateSettings) return { ok: true, settings: copy }
    if (validateSettings(copy)) return { ok: true, settings: copy }
    return { ok: false, errors: formatAjvErrors(validateSettings.errors, 'settings.').map((e) => e.replace('settings.(options)', 'settings')) }
  }
  const defaultSettings: Obj = {}
  for (const [k, v] of Object.entries(settingsSchema.properties as Obj)) if (isObj(v) && v.default !== undefined) defaultSettings[k] = structuredClone(v.default)

  // Checks: presets expanded, then every check resolved and created.
  const raw: RawCheck[] = []
  const expand = (list: unknown, base: YamlPath, inherited: Obj = {}) => {
    if (!Array.isArray(list)) return
    list.forEach((entry, i) => {
      const p = [...base, i]
      if (!isObj(entry) || typeof entry.uses !== 'string') return
      if (entry.enabled === false) return
      const uses = entry.uses
      if (registry.has(uses)) {
        raw.push({ entry: { ...inherited, ...entry }, path: p, withPath: [...p, 'with'] })
        return
      }
      const preset: PresetCheck[] | undefined = Object.hasOwn(PRESETS, uses) ? PRESETS[uses] : undefined
      if (preset) {
        const overrides = isObj(entry.overrides) ? entry.overrides : {}
        const used = new Set<string>()
        for (const pc of preset) {
          const cid = pc.id ?? pc.uses
          const oKey = Object.hasOwn(overrides, cid) ? cid : Object.hasOwn(overrides, pc.uses) ? pc.uses : undefined
          const o = oKey !== undefined && isObj(overrides[oKey]) ? overrides[oKey] as Obj : {}
          if (oKey !== undefined) used.add(oKey)
          if (o.enabled === false) continue
          const merged: Obj = { uses: pc.uses, id: cid }
          if (entry.if !== undefined) merged.if = entry.if
          if (pc.severity ?? entry.severity) merged.severity = entry.severity ?? pc.severity
          if (entry.timeout !== undefined) merged.timeout = entry.timeout
          if (entry.maxTextLength !== undefined) merged.maxTextLength = entry.maxTextLength
          merged.with = { ...(pc.with ?? {}), ...(isObj(o.with) ? o.with : {}) }
          for (const f of ['severity', 'if', 'timeout', 'maxTextLength'] as const) if (o[f] !== undefined) merged[f] = o[f]
          const where = oKey !== undefined ? [...p, 'overrides', oKey] : [...p, 'uses']
          raw.push({ entry: merged, path: where, withPath: oKey !== undefined && isObj(o.with) ? [...where, 'with'] : where })
        }
        for (const k of Object.keys(overrides)) {
          if (!used.has(k)) err([...p, 'overrides', k], `preset "${uses}" has no check "${k}"; its checks: ${preset.map((c) => c.id ?? c.uses).join(', ')}`, 'key')
        }
        return
      }
      if (Array.isArray(entry.fallback)) {
        warn([...p, 'uses'], `preset "${uses}" is not defined; using the fallback checks`)
        expand(entry.fallback, [...p, 'fallback'])
        return
      }
      const presets = Object.keys(PRESETS)
      err([...p, 'uses'], `unknown plugin or preset "${uses}"; plugins: ${registry.names().join(', ') || '(none)'}${presets.length ? `; presets: ${presets.join(', ')}` : ''}; or npm:<package>`)
    })
  }
  expand(data.checks, ['checks'])

  const checks: CompiledCheck[] = []
  const conditionTexts: Array<{ check: CompiledCheck; text: string; path: YamlPath }> = []
  const ids = new Map<string, YamlPath>()
  for (const rc of raw) {
    const e = rc.entry
    const uses = e.uses as string
    const loaded = await registry.resolve(uses)
    if (!loaded) { err([...rc.path, 'uses'], `unknown plugin "${uses}"`); continue }
    if ('error' in loaded) { err([...rc.path, 'uses'], loaded.error); continue }
    const definition = loaded.definition
    const id = str(e.id) ?? definition.name
    const seen = ids.get(id)
    if (seen) { err([...rc.path, str(e.id) ? 'id' : 'uses'], `two checks are called "${id}"; give one an \`id\``); continue }
    ids.set(id, rc.path)
    const context: PluginContext = {
      pipelineKey: key, pipelineDir: dir, checkId: id, log: log.child({ check: id }),
      cache: deps.cacheFor(definition.name), env: deps.env, metrics: deps.metrics,
    }
    const check: CompiledCheck = {
      id, index: checks.length, plugin: definition.name, definition, options: e.with ?? {}, bySettings: settingsInstances(context.log), context,
      severity: str(e.severity) as Severity | undefined,
      timeoutMs: typeof e.timeout === 'number' ? e.timeout : definition.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxTextLength: typeof e.maxTextLength === 'number' ? e.maxTextLength : typeof data.maxTextLength === 'number' ? data.maxTextLength : DEFAULT_MAX_TEXT_LENGTH,
      needsTranslation: !!definition.needs?.includes('translation'),
    }
    await createInstance(check, rc.withPath, true)
    if (typeof e.if === 'string') conditionTexts.push({ check, text: e.if, path: [...rc.path, 'if'] })
    checks.push(check)
  }

  async function createInstance(check: CompiledCheck, withPath: YamlPath, forChecks: boolean): Promise<PluginInstance | undefined> {
    const refs = settingReferences(check.options)
    if (!forChecks && refs.length) {
      err([...withPath, ...refs[0]!.path], 'events have no step, hence no step settings: ${settings.…} cannot be used here')
      return undefined
    }
    let missing = false
    for (const r of refs) {
      if (!settingTypes.has(r.name)) err([...withPath, ...r.path], `unknown setting "${r.name}" in \${settings.${r.name}}; declare it under settings.properties`)
      else if (defaultSettings[r.name] === undefined) missing = true
    }
    if (refs.some((r) => !settingTypes.has(r.name))) return undefined
    // Options that take settings without defaults can only be checked when a step's settings arrive.
    if (missing) return undefined
    let resolved: unknown
    try {
      resolved = resolvePluginOptions(check.definition, refs.length ? interpolateSettings(check.options, defaultSettings) : check.options)
    } catch (e) {
      if (!(e instanceof PluginOptionsError)) throw e
      for (const m of e.errors) {
        const where = /^([^:]+): /.exec(m)?.[1]
        const sub = where && where !== '(options)' ? where.split('.') : []
        err([...withPath, ...sub], `check "${check.id}": option ${m}`)
      }
      return undefined
    }
    let instance: PluginInstance
    try {
      instance = await check.definition.create(resolved as never, check.context)
    } catch (e) {
      // Point at the option the message quotes (a bad pattern), else at the options.
      const message = (e as Error).message
      const quoted = stringLeaves(check.options).filter((l) => l.value.length > 0 && message.includes(l.value))
      const at = quoted.length === 1 && !settingReferences(check.options).length ? [...withPath, ...quoted[0]!.path] : withPath
      err(at, `check "${check.id}": plugin "${check.plugin}" refused its options: ${message}`)
      return undefined
    }
    created.push(instance)
    const usable = forChecks ? typeof instance?.check === 'function' || typeof instance?.checkBatch === 'function' : typeof instance?.onEvent === 'function'
    if (!usable) {
      err(withPath, `plugin "${check.plugin}" cannot be used ${forChecks ? 'as a check: create() returned no check() or checkBatch()' : 'for events: create() returned no onEvent()'}`)
      return undefined
    }
    if (refs.length) check.bySettings.set(JSON.stringify(resolved), Promise.resolve(instance))
    else check.fixed = instance
    return instance
  }

  // Conditions, now that every check id is known. A check's `if` sees only earlier checks.
  const scopeFor = (upTo: number): ConditionScope => {
    const m = new Map<string, number>()
    for (const c of checks) if (c.index < upTo) m.set(c.id, c.index)
    m.set('engine', checks.length)
    return { checks: m, settings: settingTypes }
  }
  const compileAt = (text: string, p: YamlPath, scope: ConditionScope) => {
    try {
      return compileCondition(text, scope)
    } catch (e) {
      if (!(e instanceof ConditionError)) throw e
      errors.push(src.errorAt(src.offsetInScalar(p, e.offset), `bad condition: ${e.message}`))
      return undefined
    }
  }
  for (const c of conditionTexts) c.check.condition = compileAt(c.text, c.path, scopeFor(c.check.index))

  // Routes.
  const routes: CompiledRoute[] = []
  const routeList = Array.isArray(data.route) ? data.route : []
  const allScope = scopeFor(Infinity)
  let fallsThrough = true
  routeList.forEach((r, i) => {
    if (!isObj(r) || typeof r.to !== 'string') return
    const to = r.to
    let port = ''
    if (to !== '' && !outputPorts.has(to)) err(['route', i, 'to'], `route to "${to}", which is not an output; ${outputHint}`)
    else if (to !== '') port = outputPorts.get(to)!
    const condition = typeof r.if === 'string' ? compileAt(r.if, ['route', i, 'if'], allScope) : undefined
    if (r.if === undefined) {
      if (i < routeList.length - 1) warn(['route', i + 1], 'this route is never reached: the one before it has no `if`')
      fallsThrough = false
    }
    routes.push({ condition, output: to === '' ? null : to, port })
  })
  if (fallsThrough && Array.isArray(data.checks)) {
    warn(routeList.length ? ['route', routeList.length - 1] : ['key'], 'strings that match no route are parked (output ""); end the routes with one that has no `if` to route everything')
  }

  // on-error.
  let onError: OnError = { kind: 'park' }
  const oe = data['on-error']
  if (typeof oe === 'string') {
    if (oe === 'park' || oe === '') onError = { kind: 'park' }
    else if (oe === 'retry') onError = { kind: 'retry' }
    else if (outputPorts.has(oe)) onError = { kind: 'output', output: oe, port: outputPorts.get(oe)! }
    else err(['on-error'], `on-error must be park, retry or an output name, not "${oe}"; ${outputHint}`)
  }

  // Issues: on by the key's presence; which outputs send a string back, by name or by the routes
  // that count errors.
  let issues: Pipeline['issues']
  const is = data.issues
  if (isObj(is) && is.raise !== false) {
    if (Array.isArray(is.outputs)) {
      is.outputs.forEach((o, i) => {
        if (typeof o === 'string' && !outputPorts.has(o)) err(['issues', 'outputs', i], `issues on "${o}", which is not an output; ${outputHint}`)
      })
      issues = { outputs: is.outputs.filter((o): o is string => typeof o === 'string') }
    } else {
      const onErrors = routeList.filter((r): r is Obj => isObj(r) && typeof r.if === 'string' && /\berrors\b/.test(r.if) && typeof r.to === 'string' && r.to !== '').map((r) => r.to as string)
      if (!onErrors.length) warn(['issues'], 'no route counts errors, so no output sends strings back: name them in issues.outputs')
      issues = { outputs: [...new Set(onErrors)] }
    }
  }

  // Logo: a file beside the pipeline; by default <file name>.png or .svg if there is one.
  let logo: Pipeline['logo']
  if (typeof data.logo === 'string') {
    const file = path.resolve(dir, data.logo)
    const type = LOGO_TYPES[path.extname(file).toLowerCase()]
    if (!type) err(['logo'], `logo must be an image (${Object.keys(LOGO_TYPES).join(', ')})`)
    else if (path.relative(dir, file).startsWith('..')) err(['logo'], 'logo must be a file beside the pipeline, not outside its folder')
    else if (!existsSync(file)) err(['logo'], `logo file ${data.logo} does not exist beside ${path.basename(src.file)}`)
    else logo = { path: file, contentType: type }
  } else {
    const base = src.file.replace(/\.ya?ml$/i, '')
    for (const ext of ['.png', '.svg']) if (existsSync(path.resolve(base + ext))) { logo = { path: path.resolve(base + ext), contentType: LOGO_TYPES[ext]! }; break }
  }

  // Events: plugins subscribed to other webhook events.
  const events: EventHandler[] = []
  if (Array.isArray(data.events)) {
    for (const [i, ev] of data.events.entries()) {
      if (!isObj(ev) || typeof ev.on !== 'string' || typeof ev.uses !== 'string') continue
      const loaded = registry.has(ev.uses) ? await registry.resolve(ev.uses) : undefined
      if (!loaded || 'error' in loaded) { err(['events', i, 'uses'], loaded ? loaded.error : `unknown plugin "${ev.uses}"; plugins: ${registry.names().join(', ')}`); continue }
      const id = str(ev.id) ?? loaded.definition.name
      const handler: CompiledCheck = {
        id, index: -1, plugin: loaded.definition.name, definition: loaded.definition, options: ev.with ?? {}, bySettings: new Map(),
        context: { pipelineKey: key, pipelineDir: dir, checkId: id, log: log.child({ event: ev.on, plugin: loaded.definition.name }), cache: deps.cacheFor(loaded.definition.name), env: deps.env, metrics: deps.metrics },
        timeoutMs: typeof ev.timeout === 'number' ? ev.timeout : loaded.definition.timeoutMs ?? DEFAULT_TIMEOUT_MS, needsTranslation: false,
      }
      // Events carry no step, hence no step settings: their options are taken as written.
      const instance = await createInstance(handler, ['events', i, ev.with ? 'with' : 'uses'], false)
      if (instance) events.push({ on: ev.on, id, plugin: handler.plugin, instance, timeoutMs: handler.timeoutMs, log: handler.context.log })
    }
  }

  if (errors.length > errorsBefore) {
    await closeAll(created, log)
    return undefined
  }
  const runner = new PipelineRunner(checks, routes, onError, outputPorts)
  const pipeline: Pipeline = {
    key,
    name: str(data.name) ?? key,
    description: str(data.description) ?? '',
    editorMode: (str(data.editorMode) ?? 'side-by-side') as EditorMode,
    file: path.resolve(src.file),
    logo,
    input: (Array.isArray(data.input) ? data.input : []) as Port[],
    outputs,
    settingsSchema,
    resolveSettings,
    needsTranslation: checks.some((c) => c.needsTranslation),
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
  }
  return {
    pipeline,
    events,
    keyOffset: src.offsetOf(['key']),
    instances: () => [...created, ...checks.flatMap((c) => [...c.bySettings.values()])],
  }
}

function stringLeaves(v: unknown, p: Array<string | number> = [], out: Array<{ value: string; path: Array<string | number> }> = []) {
  if (typeof v === 'string') out.push({ value: v, path: p })
  else if (Array.isArray(v)) v.forEach((x, i) => stringLeaves(x, [...p, i], out))
  else if (isObj(v)) for (const [k, x] of Object.entries(v)) stringLeaves(x, [...p, k], out)
  return out
}

/** Plugin instances of one check kept per distinct settings value, at most. */
export const INSTANCES_PER_CHECK = 256
/** An evicted instance may still be running a batch: it is closed only after this grace. */
const EVICTED_CLOSE_GRACE_MS = 30_000

/** The bounded cache of one check's instances per settings value; an evicted one is closed later. */
function settingsInstances(log: Logger): LruMap<string, Promise<PluginInstance>> {
  return new LruMap(INSTANCES_PER_CHECK, (evicted) => {
    setTimeout(() => void closeAll([evicted], log), EVICTED_CLOSE_GRACE_MS).unref()
  })
}

/** Close plugin instances, each once; a close that throws is logged, never thrown. */
export async function closeAll(instances: Array<Promise<PluginInstance> | PluginInstance>, log: Logger): Promise<void> {
  const settled = await Promise.allSettled(instances.map((p) => Promise.resolve(p)))
  const unique = new Set(settled.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : [])))
  await Promise.all([...unique].map(async (instance) => {
    try {
      await instance.close?.()
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'closing a plugin failed')
    }
  }))
}

/** Run one event handler with its timeout; errors are logged, never thrown. */
export async function dispatchTo(handler: EventHandler, event: PluginEvent): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      Promise.resolve().then(() => handler.instance.onEvent!(event)),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${handler.timeoutMs} ms`)), handler.timeoutMs) }),
    ])
  } catch (e) {
    handler.log.error({ err: (e as Error).message, event: event.event }, `plugin "${handler.plugin}" failed on ${event.event}`)
  } finally {
    clearTimeout(timer)
  }
}
