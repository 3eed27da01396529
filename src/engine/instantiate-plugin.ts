// Turning a plugin definition plus the options a pipeline gives it into a running instance:
// options are validated against the plugin's own JSON Schema (defaults applied) once, at load.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { KNOWN_NEEDS, MAX_TIMER_MS, type Need, type PluginContext, type PluginDefinition, type PluginInstance } from './types.js'

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false })
const validators = new WeakMap<object, ValidateFunction>()

export class PluginOptionsError extends Error {
  constructor(readonly plugin: string, readonly errors: string[]) {
    super(`options of "${plugin}": ${errors.join('; ')}`)
    this.name = 'PluginOptionsError'
  }
}

/** Human-readable ajv errors, each naming the option path. */
export function formatAjvErrors(errors: ErrorObject[] | null | undefined, root = ''): string[] {
  return (errors ?? []).map((e) => {
    const where = `${root}${e.instancePath.replace(/^\//, '').replaceAll('/', '.')}` || '(options)'
    if (e.keyword === 'additionalProperties') return `${where}: unknown option "${(e.params as { additionalProperty: string }).additionalProperty}"`
    if (e.keyword === 'enum') return `${where}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
    return `${where}: ${e.message ?? 'is invalid'}`
  })
}

/** Validate options (applying defaults, on a copy) and return them; throws PluginOptionsError. */
export function resolvePluginOptions<O>(definition: PluginDefinition<O>, options: unknown): O {
  let validate = validators.get(definition)
  if (!validate) {
    try {
      validate = ajv.compile(definition.options as object)
    } catch (e) {
      // The plugin's own schema is broken: its author's error, reported as its options' (located
      // at the check that uses it), not thrown through the loading of every pipeline.
      throw new PluginOptionsError(definition.name, [`(options): the plugin's options schema is invalid (${e instanceof Error ? e.message : String(e)})`])
    }
    validators.set(definition, validate)
  }
  const copy = cloneOptions(definition.name, options ?? {}) as O
  if (!validate(copy)) throw new PluginOptionsError(definition.name, formatAjvErrors(validate.errors))
  return copy
}

/**
 * A copy of the options (validation applies defaults to it); a value that cannot be copied (a
 * function, a symbol) is a PluginOptionsError naming the option, not a DataCloneError.
 */
function cloneOptions(plugin: string, options: unknown): unknown {
  try {
    return structuredClone(options)
  } catch (e) {
    const at = uncloneablePath(options)
    throw new PluginOptionsError(plugin, [`${at.join('.') || '(options)'}: cannot be copied (${e instanceof Error ? e.message : String(e)})`])
  }
}

/** Where in a value that structuredClone refuses the first part it refuses is. */
function uncloneablePath(value: unknown, at: Array<string | number> = [], seen = new Set<object>()): Array<string | number> {
  if (!value || typeof value !== 'object' || seen.has(value)) return at
  seen.add(value)
  for (const [k, v] of Object.entries(value)) {
    try {
      structuredClone(v)
    } catch {
      return uncloneablePath(v, [...at, Array.isArray(value) ? Number(k) : k], seen)
    }
  }
  return at
}

export async function instantiatePlugin<O>(
  definition: PluginDefinition<O>,
  options: unknown,
  context: PluginContext,
): Promise<PluginInstance> {
  const resolved = resolvePluginOptions(definition, options)
  const instance = await definition.create(resolved, context)
  if (!instance || (typeof instance.check !== 'function' && typeof instance.checkBatch !== 'function' && typeof instance.onEvent !== 'function')) {
    throw new Error(`plugin "${definition.name}": create() must return an object with check(), checkBatch() or onEvent()`)
  }
  return instance
}

/** Is this value shaped like a plugin definition? (For plugins loaded from files and packages.) */
export function isPluginDefinition(value: unknown): value is PluginDefinition {
  return looksLikePluginDefinition(value) && pluginDefinitionProblem(value) === undefined
}

/** Has it the fields every definition has (name, create, options)? It may still be unusable. */
export function looksLikePluginDefinition(value: unknown): value is PluginDefinition {
  const v = value as PluginDefinition | null
  return !!v && typeof v === 'object' && typeof v.name === 'string' && typeof v.create === 'function' && typeof v.options === 'object'
}

/** Why a definition with those fields cannot be used (its optional fields' shapes), or undefined. */
export function pluginDefinitionProblem(definition: PluginDefinition): string | undefined {
  const needs: unknown = definition.needs
  if (needs !== undefined && !(Array.isArray(needs) && needs.every((n) => typeof n === 'string'))) {
    let shown: string
    try { shown = JSON.stringify(needs) ?? String(needs) } catch { shown = typeof needs }
    return `plugin "${definition.name}": \`needs\` must be a list of strings (such as ['translation']), not ${shown.slice(0, 100)}`
  }
  // A need the engine does not know would be granted nothing, silently (a plugin naming
  // 'translations' would see no translation and pass every string).
  const unknown = (needs as string[] | undefined)?.find((n) => !KNOWN_NEEDS.includes(n as Need))
  if (unknown !== undefined) return `plugin "${definition.name}": \`needs\` names ${JSON.stringify(unknown.slice(0, 100))}, which the engine does not provide (it knows: ${KNOWN_NEEDS.map((n) => `'${n}'`).join(', ')})`
  // A timer past setTimeout's limit fires at once: every call would time out.
  const timeoutMs: unknown = definition.timeoutMs
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && (timeoutMs as number) >= 1 && (timeoutMs as number) <= MAX_TIMER_MS)) {
    return `plugin "${definition.name}": \`timeoutMs\` must be a whole number of ms from 1 to ${MAX_TIMER_MS}, not ${String(timeoutMs).slice(0, 40)}`
  }
  return undefined
}

/** What a plugin threw, as text, whatever it threw: null, a string, an object without a usable toString. */
export function thrownText(e: unknown): string {
  try {
    // An Error's message may be a getter that throws, or not text at all.
    if (e instanceof Error) return String(e.message)
    return String(e)
  } catch {
    return Object.prototype.toString.call(e)
  }
}
