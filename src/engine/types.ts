// The plugin API: what a plugin author writes against and what the engine hands to checks.
// Everything a plugin needs comes through `create(options, context)` and the item; plugins
// import no globals of ours (CONVENTIONS.md, rule 4).
import type { Logger } from '../util/logger.js'
import type { JSONSchemaType, SchemaObject } from 'ajv'
import type { FromSchema, JSONSchema } from 'json-schema-to-ts'
import type { Severity } from '../protocol/findings.js'
import type { StringFields } from '../protocol/job.js'
import type { Language } from '../protocol/language.js'

export type { Language, Severity }
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info']

/** A character range in the text the finding is about: [start, end) in UTF-16 code units. */
export interface Span {
  start: number
  end: number
  /** Which text the span refers to; the translation unless said otherwise. */
  in?: 'source' | 'translation'
}

export interface Finding {
  /** The check's id in the pipeline (its `id`, or the plugin name). */
  check: string
  severity: Severity
  message: string
  span?: Span
  suggestion?: string
  /**
   * Stable id of the kind of finding (`missing-placeholder`, ...), like ESLint's `messageId`: the
   * message may be reworded, the code stays. Every built-in plugin gives one (its README's Codes).
   */
  code?: string
}

/** What a check returns: `check` and `severity` may be left out; the engine fills them in. */
export type FindingInput = Omit<Finding, 'check' | 'severity'> & Partial<Pick<Finding, 'check' | 'severity'>>

export interface PluralForm {
  /** CLDR category: zero, one, two, few, many, other. */
  plural: string
  text: string
}

/** One string as a check sees it: `key`, `context`, `maxLength` (0: no limit), `isPlural`, `fileType`, `filePath`, `labelIds`, and: */
export interface Item extends StringFields {
  /** The service's string id. */
  id: number
  /** Source text. For plural strings, the source as sent (often ICU or the `other` form). */
  source: string
  /**
   * Target text. Present when a plugin of the pipeline declared `needs: ['translation']`;
   * for plural strings, the `other` form (all forms are in `plurals`).
   */
  translation?: string
  /** Target plural forms, when the string has plurals and the translation was fetched. */
  plurals?: PluralForm[]
  sourceLanguage: Language
  targetLanguage: Language
  /** The step's settings, defaults applied. */
  settings: Record<string, unknown>
  /** Project, step and organization the string came from. */
  projectId: number
  stepId: number
  organizationId: string
  log: Logger
  signal: AbortSignal
}

/** What the engine gives a plugin once, at pipeline load. */
export interface PluginContext {
  /** Module key of the pipeline that uses the plugin. */
  pipelineKey: string
  /** Directory of the pipeline file, for resolving files a plugin's options name (glossaries, ...). */
  pipelineDir: string
  /** The check's id in the pipeline. */
  checkId: string
  /**
   * The check's time limit in ms (its `timeout`, else the plugin's `timeoutMs`, else 30 s): the
   * engine stops waiting for a call to `check` or `checkBatch` after it. A plugin that retries
   * can end its retries before it. Set by the engine; in a test context (testContext), the
   * engine's default, or the case's `timeout`.
   */
  timeoutMs?: number
  /**
   * The check's options whose value is (or holds) a step setting, `${settings.…}`: chosen by
   * whoever edits the workflow, not by the pipeline's author. Absent from a context a test builds.
   */
  settingsOptions?: readonly string[]
  log: Logger
  /** A namespaced key-value cache that survives restarts (Keyv). */
  cache: PluginCache
  /** Environment of the operator, for plugins that call out (API keys, base URLs). */
  env: Readonly<Record<string, string | undefined>>
  /** Counters a plugin may add to; shown in /metrics and in `switchyard try --pretty`. */
  metrics: PluginMetrics
}

export interface PluginCache {
  get<T = unknown>(key: string): Promise<T | undefined>
  set(key: string, value: unknown, ttlMs?: number): Promise<void>
}

export interface PluginMetrics {
  add(name: string, value?: number): void
}

export interface PluginEvent {
  /** Event name, as sent (`project.translated`, ...). */
  event: string
  /** The event object as received. */
  payload: Record<string, unknown>
  organizationId: string
  domain: string
  log: Logger
  signal: AbortSignal
}

export interface PluginInstance {
  /** Check one string. */
  check?(item: Item): FindingInput[] | Promise<FindingInput[]>
  /**
   * Check many strings at once (plugins that batch remote calls). Returns the findings of each
   * item in the order of `items`; an Error in an item's place fails that item alone (as a
   * `check()` that throws), where throwing fails every item of the batch.
   */
  checkBatch?(items: Item[]): Promise<Array<FindingInput[] | Error>>
  /** Handle another event the pipeline subscribed this plugin to. */
  onEvent?(event: PluginEvent): void | Promise<void>
  /** Release what `create` acquired (clients, timers). */
  close?(): void | Promise<void>
}

export type Need = 'translation'
/** Every need a plugin may declare; a definition naming another is refused at load. */
export const KNOWN_NEEDS: readonly Need[] = ['translation']

/**
 * The longest wait a timer can make (setTimeout's limit, about 24.8 days; a longer one fires at
 * once): an option that sets a timeout is bounded by it in its schema (`maximum: MAX_TIMER_MS`).
 */
export { MAX_TIMER_MS } from '../util/max-timer.js'

/**
 * One kind of finding a plugin gives, declared once under its code: the README's Codes table and
 * the message come from here, so the two cannot drift.
 */
export interface MessageSpec<D = never> {
  /** The finding's severity; a list when the plugin picks one per finding (`meaning` says when). */
  severity: Severity | readonly Severity[]
  /** What the finding means, for the README's Codes table (one sentence). */
  meaning: string
  /** The message: fixed, or made from the data the check passes. */
  text: string | ((data: D) => string)
}

/** A plugin's kinds of finding, keyed by their kebab-case code (`any`: each kind has its own data type). */
export type Messages = Readonly<Record<string, MessageSpec<any>>>

type DataOf<S> = S extends { text: (data: infer D) => string } ? D : never
/** What a finding adds to its code and message. */
export type FindingExtra = Omit<FindingInput, 'message' | 'code'>

/** Builds the findings of one plugin's `messages`: `report(code, data?, extra?)`. */
export type Report<M extends Messages> = <C extends keyof M & string>(
  code: C,
  ...rest: [DataOf<M[C]>] extends [never] ? [extra?: FindingExtra] : [data: DataOf<M[C]>, extra?: FindingExtra]
) => FindingInput

/**
 * Declare a plugin's kinds of finding, and get the function that makes its findings: the code,
 * its message, and its severity when the kind has only one.
 */
export function defineMessages<const M extends Messages>(messages: M): { messages: M; report: Report<M> } {
  const report = ((code: string, ...rest: unknown[]): FindingInput => {
    const spec = messages[code]
    if (!spec) throw new Error(`unknown finding code "${code}"`)
    const hasData = typeof spec.text === 'function'
    const data = hasData ? rest[0] : undefined
    const extra = (hasData ? rest[1] : rest[0]) as FindingExtra | undefined
    const message = typeof spec.text === 'function' ? spec.text(data) : spec.text
    const severity = extra?.severity ?? (typeof spec.severity === 'string' ? spec.severity : undefined)
    const finding: FindingInput = { code, message, ...extra }
    if (severity) finding.severity = severity
    return finding
  }) as Report<M>
  return { messages, report }
}

export interface PluginDefinition<O = Record<string, unknown>> {
  name: string
  description: string
  /** JSON Schema of the options, `additionalProperties: false`, defaults inside. */
  options: SchemaObject | JSONSchemaType<O>
  /** The kinds of finding the plugin gives, by code (see `defineMessages`). */
  messages?: Messages
  needs?: Need[]
  /** Longest a single check may run, in ms, before it becomes an engine finding. */
  timeoutMs?: number
  create(options: O, context: PluginContext): PluginInstance | Promise<PluginInstance>
}

/** The options a schema describes, as `create` receives them: defaults applied, so defaulted properties are present. */
export type OptionsOf<S extends JSONSchema> = FromSchema<S>

/**
 * Declare a plugin. The options' type is derived from the options schema (declare it `as const`);
 * the engine validates the definition at load.
 */
export function definePlugin<const S extends JSONSchema>(
  definition: Omit<PluginDefinition<NoInfer<OptionsOf<S>>>, 'options'> & { options: S },
): PluginDefinition<OptionsOf<S>> {
  return definition as never
}
