// The pipeline as the rest of the worker sees it: three interfaces, declared once. The queue runs a
// `Pipeline`, the manifest and the settings page read its fields, and the worker reads the current
// `PipelineSet` from a `PipelineSource` (the PipelineHost, or the PipelinePool that runs the same
// pipelines on threads). How a file becomes a Pipeline is compile-pipeline.ts.
import type { Port } from '../protocol/string-status.js'
import type { EditorMode } from './pipeline-schema.js'
import type { Progress, RunMore, RunResult } from './run-pipeline.js'
import type { Item, PluginEvent } from './types.js'

export type { EditorMode } from './pipeline-schema.js'

/** A compiled pipeline: what the step module shows, and how to run its checks on strings. */
export interface Pipeline {
  key: string
  name: string
  description: string
  editorMode: EditorMode
  /** Absolute path of the pipeline file. */
  file: string
  /** The logo image (absolute path). */
  logo?: { path: string; contentType: string }
  input: Port[]
  outputs: Array<{ name: string; port: Port; title: string }>
  settingsSchema: object
  /**
   * A step's stored settings, validated against settingsSchema with its defaults filled in. With
   * `run` (the settings a step's strings run with, rather than a save) only what the step saved
   * can be refused: a required setting it never saved, or one whose default its own field refuses,
   * has no value (as when nothing is saved), and a setting the schema no longer takes
   * (additionalProperties: false) is left out.
   */
  resolveSettings(stored: unknown, options?: { run?: boolean }): { ok: true; settings: Record<string, unknown> } | { ok: false; errors: string[] }
  /**
   * What the checks whose options take settings say of these (resolved) settings: their plugins'
   * option errors and refusals to start, each naming the check ([] when every check would start). The settings page
   * refuses settings that pass the schema but would keep a check from starting on every string.
   */
  checkSettings(settings: Record<string, unknown>): Promise<string[]>
  /** Some check reads the translation: the worker fetches it before run(). */
  needsTranslation: boolean
  /** Issues raised on strings sent back (the `issues` option): the outputs that send a string back. */
  issues?: { outputs: string[] }
  run(items: Item[], options?: { signal?: AbortSignal; progress?: Progress } & RunMore): Promise<RunResult[]>
  /** The outcome of a string whose check `checkIndex` was stopped after `budgetMs` (on-error applies). */
  timedOut(id: number, checkIndex: number, budgetMs: number): RunResult
  /** The outcome of a string not run because its step's saved settings are invalid (`errors`; on-error applies). */
  settingsInvalid(id: number, errors: string[]): RunResult
}

/** The pipelines loaded together from one directory (or list of files). */
export interface PipelineSet {
  get(key: string): Pipeline | undefined
  all(): Pipeline[]
  /** Every event name some pipeline subscribed a plugin to (for the manifest's webhook module). */
  events(): string[]
  /** Hand an event to every subscribed plugin; errors are logged; resolves when all are done. */
  dispatchEvent(e: PluginEvent): Promise<void>
  /** Close the plugins, after the runs in flight (or a grace period). */
  close(graceMs?: number): Promise<void>
}

/** Where the worker finds the current pipelines; reload() swaps them (the old set keeps its runs). */
export interface PipelineSource {
  readonly current: PipelineSet
  reload?(): Promise<{ ok: boolean; errors: unknown[] }>
  /** Does this string run apart, on a long-text lane (the pipeline pool)? */
  isLong?(item: Item): boolean
  /** Can the pipelines run now without loading first (the pool: its threads have loaded them)? Absent: always. */
  ready?(): boolean
}
