// A run's items as they cross to a pipeline thread (pipeline-pool.ts -> pipeline-thread.ts): one
// array per field instead of one object per string. A structured clone writes every property name
// of every object and the thread reads each one back and looks it up; a run of 500 strings was 8,500
// names each way. As columns, a field's name crosses once and its values as one packed array; the
// objects shared by a run's strings (languages, settings) still cross once (the clone keeps
// identity). The thread then builds each item as one object literal of a fixed shape, which the
// checks read faster than a copy spread from a cloned object. The results come back as columns too.
import type { RunResult } from './run-pipeline.js'
import type { Finding, Item } from './types.js'

/** An item as it crosses to a thread: no logger, no signal (the thread makes its own). */
export type ThreadItem = Omit<Item, 'log' | 'signal'>

/**
 * A run's items, one array per field of ThreadItem, by name: every field must have its column
 * (the type says so), and no field can be read from another's column. Each column is built by
 * push, so that V8 keeps it packed: a holey array (`new Array(n)` filled by index) is cloned in
 * V8's sparse format, an index key before every value, which costs about what the property names
 * did.
 */
export type ItemColumns = { [K in keyof Required<ThreadItem>]: Array<ThreadItem[K]> }

/** The columns of a run's items (their loggers and signals stay behind). */
export function encodeItems(items: ReadonlyArray<ThreadItem>): ItemColumns {
  const c: ItemColumns = {
    id: [], key: [], context: [], maxLength: [], source: [], translation: [], plurals: [], isPlural: [], fileType: [], filePath: [],
    labelIds: [], sourceLanguage: [], targetLanguage: [], settings: [], projectId: [], stepId: [], organizationId: [],
  }
  // Each field by name (not item[field] over a list): loads the JIT can make monomorphic.
  for (const item of items) {
    c.id.push(item.id)
    c.key.push(item.key)
    c.context.push(item.context)
    c.maxLength.push(item.maxLength)
    c.source.push(item.source)
    c.translation.push(item.translation)
    c.plurals.push(item.plurals)
    c.isPlural.push(item.isPlural)
    c.fileType.push(item.fileType)
    c.filePath.push(item.filePath)
    c.labelIds.push(item.labelIds)
    c.sourceLanguage.push(item.sourceLanguage)
    c.targetLanguage.push(item.targetLanguage)
    c.settings.push(item.settings)
    c.projectId.push(item.projectId)
    c.stepId.push(item.stepId)
    c.organizationId.push(item.organizationId)
  }
  return c
}

/** The items again, each with the run's logger and signal. */
export function decodeItems(c: ItemColumns, log: Item['log'], signal: AbortSignal): Item[] {
  const items = new Array<Item>(c.id.length)
  for (let k = 0; k < c.id.length; k++) {
    // One literal, fields in buildItem's order: every item of every run has the same shape.
    items[k] = {
      id: c.id[k]!,
      key: c.key[k]!,
      context: c.context[k]!,
      maxLength: c.maxLength[k]!,
      source: c.source[k]!,
      translation: c.translation[k],
      plurals: c.plurals[k],
      isPlural: c.isPlural[k]!,
      fileType: c.fileType[k]!,
      filePath: c.filePath[k]!,
      labelIds: c.labelIds[k]!,
      sourceLanguage: c.sourceLanguage[k]!,
      targetLanguage: c.targetLanguage[k]!,
      settings: c.settings[k]!,
      projectId: c.projectId[k]!,
      stepId: c.stepId[k]!,
      organizationId: c.organizationId[k]!,
      log,
      signal,
    } satisfies Record<keyof Item, unknown>
  }
  return items
}

/**
 * A run's results as they come back: ids, outputs and ports as columns; findings only for the
 * strings that have some (most have none); the indexes of the strings to retry.
 */
export interface ResultColumns {
  ids: number[]
  outputs: Array<string | null>
  ports: string[]
  /** Index in the run, then its findings, for each string with findings. */
  findings: Array<number | Finding[]>
  retry: number[]
}

export function encodeResults(results: ReadonlyArray<RunResult>): ResultColumns {
  const columns: ResultColumns = { ids: [], outputs: [], ports: [], findings: [], retry: [] }
  for (let k = 0; k < results.length; k++) {
    const r = results[k]!
    columns.ids.push(r.id)
    columns.outputs.push(r.output)
    columns.ports.push(r.port)
    if (r.findings.length) columns.findings.push(k, r.findings)
    if (r.retry) columns.retry.push(k)
  }
  return columns
}

export function decodeResults(columns: ResultColumns): RunResult[] {
  const { ids, outputs, ports } = columns
  const results = new Array<RunResult>(ids.length)
  for (let k = 0; k < ids.length; k++) results[k] = { id: ids[k]!, output: outputs[k]!, port: ports[k]!, findings: [] }
  for (let f = 0; f < columns.findings.length; f += 2) results[columns.findings[f] as number]!.findings = columns.findings[f + 1] as Finding[]
  for (const k of columns.retry) results[k]!.retry = true
  return results
}
