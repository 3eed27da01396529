// The checks and event handlers of one pipeline file: presets expanded, each plugin resolved and
// created once with its options (a plugin whose create() refuses them is a load error, located at
// the option it quotes). Options that take step settings without defaults are created per step,
// when the settings arrive (run-pipeline.ts), from the bounded cache made here.
import { PRESETS, type PresetCheck } from '../../plugins/presets.js'
import type { ValueType } from './conditions.js'
import { PluginOptionsError, resolvePluginOptions } from './instantiate-plugin.js'
import { interpolateSettings, settingReferences } from './interpolate.js'
import type { LocatedError, SourceFile, YamlPath } from './located-error.js'
import { LruMap } from './lru-map.js'
import type { CheckEntry, PipelineFile } from './pipeline-schema.js'
import type { PluginRegistry } from './plugin-registry.js'
import { DEFAULT_MAX_TEXT_LENGTH, DEFAULT_TIMEOUT_MS, settleWithin, type CompiledCheck } from './run-pipeline.js'
import { ENGINE_CHECK } from './engine-findings.js'
import { MAX_TIMER_MS, type PluginCache, type PluginContext, type PluginEvent, type PluginInstance, type PluginMetrics } from './types.js'
import type { Logger } from '../util/logger.js'

export interface EngineDeps {
  pluginsDir?: string
  log: Logger
  cacheFor(namespace: string): PluginCache
  env: Readonly<Record<string, string | undefined>>
  metrics: PluginMetrics
}

/** What every stage of compiling one file shares: where it is, and where its problems go. */
export interface Compiling {
  src: SourceFile
  /** Directory of the file (plugins read files beside it). */
  dir: string
  key: string
  log: Logger
  deps: EngineDeps
  registry: PluginRegistry
  errors: LocatedError[]
  warnings: LocatedError[]
  /** Every plugin instance created so far, to close if the file has errors. */
  created: Array<Promise<PluginInstance> | PluginInstance>
  /** Ids of the checks switched off (`enabled: false`): conditions may still name them, and count 0. */
  disabled: Set<string>
}

export function error(c: Compiling, at: YamlPath, message: string, part: 'key' | 'value' = 'value'): void {
  c.errors.push(c.src.errorAtPath(at, message, part))
}

export function warn(c: Compiling, at: YamlPath, message: string): void {
  c.warnings.push(c.src.errorAtPath(at, message))
}

/** The step settings as the checks see them: their types (for conditions) and their defaults. */
export interface SettingsDefaults {
  types: Map<string, ValueType>
  defaults: Record<string, unknown>
}

export interface EventHandler { on: string; id: string; plugin: string; instance: PluginInstance; timeoutMs: number; log: Logger }

/** A check to create: the entry (a preset's merged with its overrides) and where to point errors. */
interface CheckToCreate { entry: CheckEntry; path: YamlPath; withPath: YamlPath }

/** The ids an entry's checks would have: a plugin's one, a preset's, or a missing preset's fallback's. */
function idsOf(c: Compiling, entry: CheckEntry): string[] {
  if (c.registry.has(entry.uses)) return [entry.id ?? entry.uses]
  if (Object.hasOwn(PRESETS, entry.uses)) return PRESETS[entry.uses]!.map((p) => p.id ?? p.uses)
  if (entry.fallback) return entry.fallback.flatMap((f) => idsOf(c, f))
  return [entry.id ?? entry.uses]
}

/** Replace presets by their checks (with overrides applied) and fallbacks of missing presets. */
function expandChecks(c: Compiling, list: CheckEntry[], base: YamlPath, out: CheckToCreate[] = []): CheckToCreate[] {
  list.forEach((entry, i) => {
    const at = [...base, i]
    const uses = entry.uses
    if (entry.enabled === false) {
      for (const id of idsOf(c, entry)) c.disabled.add(id)
      return
    }
    if (c.registry.has(uses)) {
      // A preset's keys on a plugin's check are dropped: said, as a warning (a pipeline that
      // loaded before must still load).
      if (entry.overrides) warn(c, [...at, 'overrides'], `"overrides" changes the checks of a preset; "${uses}" is a plugin: set its options under \`with\` (ignored)`)
      if (entry.fallback) warn(c, [...at, 'fallback'], `"fallback" stands in for a preset that does not exist; "${uses}" is a plugin (ignored)`)
      out.push({ entry, path: at, withPath: [...at, 'with'] })
      return
    }
    const preset: PresetCheck[] | undefined = Object.hasOwn(PRESETS, uses) ? PRESETS[uses] : undefined
    if (preset) {
      // A plugin's keys on a preset are dropped (its checks keep their own ids, and take options
      // by check under `overrides`): said, as a warning.
      if (entry.with) warn(c, [...at, 'with'], `"with" does not apply to a preset: give a check of "${uses}" its options under \`overrides.<check>.with\` (ignored)`)
      if (entry.id !== undefined) warn(c, [...at, 'id'], `"id" does not apply to a preset: its checks keep their own ids, ${preset.map((p) => p.id ?? p.uses).join(', ')} (ignored)`)
      out.push(...expandPreset(c, entry, preset, at))
      return
    }
    if (entry.fallback) {
      warn(c, [...at, 'uses'], `preset "${uses}" is not defined; using the fallback checks`)
      expandChecks(c, entry.fallback, [...at, 'fallback'], out)
      return
    }
    const presets = Object.keys(PRESETS)
    // A plugin of the operator's own (the READMEs' max-words) is found only through PLUGINS_DIR:
    // without it, the list above is the built-ins alone, and the error said nothing of why.
    const own = c.deps.pluginsDir ? '' : ' (PLUGINS_DIR is not set: no plugins of your own are loaded)'
    error(c, [...at, 'uses'], `unknown plugin or preset "${uses}"; plugins: ${c.registry.names().join(', ') || '(none)'}${own}${presets.length ? `; presets: ${presets.join(', ')}` : ''}; or npm:<package>`)
  })
  return out
}

/** A preset's checks, each with the entry's settings and its override (by check id or plugin name). */
function expandPreset(c: Compiling, entry: CheckEntry, preset: PresetCheck[], at: YamlPath): CheckToCreate[] {
  const overrides = entry.overrides ?? {}
  const used = new Set<string>()
  const out: CheckToCreate[] = []
  for (const pc of preset) {
    const id = pc.id ?? pc.uses
    const overrideKey = Object.hasOwn(overrides, id) ? id : Object.hasOwn(overrides, pc.uses) ? pc.uses : undefined
    const override = overrideKey !== undefined ? overrides[overrideKey] ?? {} : {}
    if (overrideKey !== undefined) used.add(overrideKey)
    if (override.enabled === false) {
      c.disabled.add(id)
      continue
    }
    const merged: CheckEntry = {
      uses: pc.uses,
      id,
      if: override.if ?? entry.if,
      severity: override.severity ?? entry.severity ?? pc.severity,
      timeout: override.timeout ?? entry.timeout,
      maxTextLength: override.maxTextLength ?? entry.maxTextLength,
      with: { ...(pc.with ?? {}), ...(override.with ?? {}) },
    }
    const where = overrideKey !== undefined ? [...at, 'overrides', overrideKey] : [...at, 'uses']
    out.push({ entry: merged, path: where, withPath: overrideKey !== undefined && override.with ? [...where, 'with'] : where })
  }
  for (const k of Object.keys(overrides)) {
    if (!used.has(k)) error(c, [...at, 'overrides', k], `preset "${entry.uses}" has no check "${k}"; its checks: ${preset.map((p) => p.id ?? p.uses).join(', ')}`, 'key')
  }
  return out
}

/**
 * A plugin's metrics are counters: they only go up. A value that is not a finite number of 0 or
 * more (a negative correction, NaN, a server's usage sent as text) is left out: the counter behind
 * them throws on it, and for a run on a pipeline thread, whose counts are added when its results
 * come back, that failed every string of the run.
 */
function countersOf(metrics: PluginMetrics): PluginMetrics {
  return {
    add(name, value = 1) {
      if (typeof name === 'string' && typeof value === 'number' && Number.isFinite(value) && value >= 0) metrics.add(name, value)
    },
  }
}

/** The names of the options (top level) that take a step setting. */
const settingsOptionsOf = (options: unknown): string[] => [...new Set(settingReferences(options).map((r) => String(r.path[0])))]

function contextFor(c: Compiling, checkId: string, plugin: string, log: Logger, timeoutMs: number, options: unknown): PluginContext {
  return { pipelineKey: c.key, pipelineDir: c.dir, checkId, timeoutMs, settingsOptions: settingsOptionsOf(options), log, cache: c.deps.cacheFor(plugin), env: c.deps.env, metrics: countersOf(c.deps.metrics) }
}

/**
 * A timeout past what a timer can wait (refused by the schema, but the file is still compiled so
 * that all its errors show at once) is held to that limit while compiling: Node fires a longer
 * timer at once, which failed a create() that had not ended within 1 ms as "did not start".
 */
const timerMs = (ms: number): number => Math.min(ms, MAX_TIMER_MS)

/** The checks of the file, in order, each created (or ready to be, per step settings). */
export async function compileChecks(
  c: Compiling, file: PipelineFile, settings: SettingsDefaults,
): Promise<{ checks: CompiledCheck[]; conditions: Array<{ check: CompiledCheck; text: string; path: YamlPath }> }> {
  const checks: CompiledCheck[] = []
  const conditions: Array<{ check: CompiledCheck; text: string; path: YamlPath }> = []
  const ids = new Map<string, YamlPath>()
  for (const { entry, path: at, withPath } of expandChecks(c, file.checks, ['checks'])) {
    const loaded = await c.registry.resolve(entry.uses)
    if (!loaded) { error(c, [...at, 'uses'], `unknown plugin "${entry.uses}"`); continue }
    if ('error' in loaded) { error(c, [...at, 'uses'], loaded.error); continue }
    const definition = loaded.definition
    const id = entry.id ?? definition.name
    // Conditions count a plugin's failure under `engine`: a check of that name would be counted
    // there (its own errors lost among the engine's, or the engine's among its).
    if (id === ENGINE_CHECK) { error(c, [...at, entry.id ? 'id' : 'uses'], `the id "${ENGINE_CHECK}" is the engine's own (conditions count a plugin's failure under it); give this check another \`id\``); continue }
    if (ids.has(id)) { error(c, [...at, entry.id ? 'id' : 'uses'], `two checks are called "${id}"; give one an \`id\``); continue }
    ids.set(id, at)
    const timeoutMs = timerMs(entry.timeout ?? definition.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    const context = contextFor(c, id, definition.name, c.log.child({ check: id }), timeoutMs, entry.with ?? {})
    const check: CompiledCheck = {
      id, index: checks.length, plugin: definition.name, definition, options: entry.with ?? {}, bySettings: settingsInstances(context.log), context,
      severity: entry.severity,
      timeoutMs,
      maxTextLength: entry.maxTextLength ?? file.maxTextLength ?? DEFAULT_MAX_TEXT_LENGTH,
      needsTranslation: Array.isArray(definition.needs) && definition.needs.includes('translation'),
    }
    await createInstance(c, settings, check, withPath, 'check')
    if (entry.if !== undefined) conditions.push({ check, text: entry.if, path: [...at, 'if'] })
    checks.push(check)
  }
  return { checks, conditions }
}

/** Plugins subscribed to other webhook events; their options are taken as written (no step). */
export async function compileEventHandlers(c: Compiling, events: NonNullable<PipelineFile['events']>, settings: SettingsDefaults): Promise<EventHandler[]> {
  const handlers: EventHandler[] = []
  for (const [i, ev] of events.entries()) {
    const loaded = c.registry.has(ev.uses) ? await c.registry.resolve(ev.uses) : undefined
    if (!loaded || 'error' in loaded) { error(c, ['events', i, 'uses'], loaded ? loaded.error : `unknown plugin "${ev.uses}"; plugins: ${c.registry.names().join(', ')}`); continue }
    const definition = loaded.definition
    const id = ev.id ?? definition.name
    const timeoutMs = timerMs(ev.timeout ?? definition.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    const handler: CompiledCheck = {
      id, index: -1, plugin: definition.name, definition, options: ev.with ?? {}, bySettings: new Map(),
      context: contextFor(c, id, definition.name, c.log.child({ event: ev.on, plugin: definition.name }), timeoutMs, ev.with ?? {}),
      timeoutMs, needsTranslation: false,
    }
    const instance = await createInstance(c, settings, handler, ['events', i, ev.with ? 'with' : 'uses'], 'event')
    if (instance) handlers.push({ on: ev.on, id, plugin: handler.plugin, instance, timeoutMs: handler.timeoutMs, log: handler.context.log })
  }
  return handlers
}

/**
 * The check's options, validated by its plugin: with the settings' defaults in place of
 * `${settings.x}`; undefined when they cannot be known before a step's settings arrive, or are wrong.
 */
function resolveOptions(c: Compiling, settings: SettingsDefaults, check: CompiledCheck, withPath: YamlPath, use: 'check' | 'event'): { resolved: unknown; takesSettings: boolean } | undefined {
  const refs = settingReferences(check.options)
  if (use === 'event' && refs.length) {
    error(c, [...withPath, ...refs[0]!.path], 'events have no step, hence no step settings: ${settings.…} cannot be used here')
    return undefined
  }
  const unknown = refs.filter((r) => !settings.types.has(r.name))
  for (const r of unknown) error(c, [...withPath, ...r.path], `unknown setting "${r.name}" in \${settings.${r.name}}; declare it under settings.properties`)
  // Options that take settings without defaults can only be checked when a step's settings arrive.
  // (Own defaults only: a setting called toString has none unless it declares one.)
  if (unknown.length || refs.some((r) => !Object.hasOwn(settings.defaults, r.name) || settings.defaults[r.name] === undefined)) return undefined
  try {
    return { resolved: resolvePluginOptions(check.definition, refs.length ? interpolateSettings(check.options, settings.defaults) : check.options), takesSettings: refs.length > 0 }
  } catch (e) {
    if (!(e instanceof PluginOptionsError)) throw e
    for (const m of e.errors) {
      const where = /^([^:]+): /.exec(m)?.[1]
      const sub = where && where !== '(options)' ? where.split('.') : []
      error(c, [...withPath, ...sub], `check "${check.id}": option ${m}`)
    }
    return undefined
  }
}

/** Create the plugin of a check or event handler once, now, when its options can be known. */
async function createInstance(c: Compiling, settings: SettingsDefaults, check: CompiledCheck, withPath: YamlPath, use: 'check' | 'event'): Promise<PluginInstance | undefined> {
  const options = resolveOptions(c, settings, check, withPath, use)
  if (!options) return undefined
  // Waited for at most the check's timeout, as at run time: a create() that never ends must not
  // hold the load (validate, the start, every later reload); one that ends late is closed then.
  const made = Promise.resolve().then(() => check.definition.create(options.resolved as never, check.context))
  const r = (await settleWithin([made], check.timeoutMs))[0]!
  if (!('value' in r) && r.code === 'plugin-timed-out') {
    error(c, withPath, `check "${check.id}": plugin "${check.plugin}" did not start within ${check.timeoutMs} ms (its create() has not ended; \`timeout\` sets the limit)`)
    void made.then((late) => late?.close?.(), () => undefined).catch(() => undefined)
    return undefined
  }
  if (!('value' in r)) {
    // Point at the option the message quotes (a bad pattern), else at the options.
    // A plugin may throw anything, a string included.
    const quoted = stringLeaves(check.options).filter((l) => l.value.length > 0 && r.error.includes(l.value))
    const at = quoted.length === 1 && !options.takesSettings ? [...withPath, ...quoted[0]!.path] : withPath
    error(c, at, `check "${check.id}": plugin "${check.plugin}" refused its options: ${r.error}`)
    return undefined
  }
  const instance = r.value
  c.created.push(instance)
  const usable = use === 'check' ? typeof instance?.check === 'function' || typeof instance?.checkBatch === 'function' : typeof instance?.onEvent === 'function'
  if (!usable) {
    error(c, withPath, `plugin "${check.plugin}" cannot be used ${use === 'check' ? 'as a check: create() returned no check() or checkBatch()' : 'for events: create() returned no onEvent()'}`)
    return undefined
  }
  if (options.takesSettings) check.bySettings.set(JSON.stringify(options.resolved), Promise.resolve(instance))
  else check.fixed = instance
  return instance
}

function stringLeaves(v: unknown, p: Array<string | number> = [], out: Array<{ value: string; path: Array<string | number> }> = []) {
  if (typeof v === 'string') out.push({ value: v, path: p })
  else if (Array.isArray(v)) v.forEach((x, i) => stringLeaves(x, [...p, i], out))
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) stringLeaves(x, [...p, k], out)
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

/** How long closing waits for instances whose create() has not ended (ms); they close when it does. */
export const CLOSE_WAIT_MS = 5000

/**
 * Close plugin instances, each once; a close that throws is logged, never thrown. An instance
 * still starting is closed once its create() ends. All of it, close() included, is waited for at
 * most `waitMs`: a create() or close() that never ends must not hold a reload or a shutdown (one
 * that ends later goes on by itself).
 */
export async function closeAll(instances: Array<Promise<PluginInstance> | PluginInstance>, log: Logger, waitMs = CLOSE_WAIT_MS): Promise<void> {
  const closed = new Set<PluginInstance>()
  const closeOne = async (instance: PluginInstance | undefined) => {
    if (!instance || closed.has(instance)) return
    closed.add(instance)
    try {
      await instance.close?.()
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'closing a plugin failed')
    }
  }
  const all = Promise.all(instances.map((p) => Promise.resolve(p).then(closeOne, () => undefined)))
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))
  timer?.unref()
  try {
    await Promise.race([all, late])
  } finally {
    clearTimeout(timer)
  }
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
