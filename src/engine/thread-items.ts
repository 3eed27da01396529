// A run's items as they cross to a pipeline thread (pipeline-pool.ts -> pipeline-thread.ts): one
// array per field instead of one object per string. A structured clone writes every property name
// of every object and the thread reads each one back and looks it up; a run of 500 strings was 8,500
// names each way. As columns, a field's name crosses not at all and its values as one array; the
// objects shared by a run's strings (languages, settings) still cross once (the clone keeps
// identity). The thread then builds each item as one object literal of a fixed shape, which the
// checks read faster than a copy spread from a cloned object. The results come back as columns too.
import type { RunResult } from './run-pipeline.js'
import type { Finding, Item } from './types.js'

/** An item as it crosses to a thread: no logger, no signal (the thread makes its own). */
export type ThreadItem = Omit<Item, 'log' | 'signal'>

/** Every field of ThreadItem, in the order of `ItemColumns`. */
export const ITEM_FIELDS = ['id', 'key', 'context', 'maxLength', 'source', 'translation', 'plurals', 'isPlural', 'fileType', 'filePath', 'labelIds', 'sourceLanguage', 'targetLanguage', 'settings', 'projectId', 'stepId', 'organizationId'] as const satisfies ReadonlyArray<keyof ThreadItem>

// A field of ThreadItem left out of ITEM_FIELDS would not cross: this fails to compile then.
type Missing = Exclude<keyof ThreadItem, (typeof ITEM_FIELDS)[number]>
const everyField: [Missing] extends [never] ? true : Missing = true
void everyField

/** A run's items, one column per field of ITEM_FIELDS, each as long as the run. */
type Columns<T extends ReadonlyArray<keyof ThreadItem>> = { -readonly [K in keyof T]: Array<ThreadItem[T[K] & keyof ThreadItem]> }
export type ItemColumns = Columns<typeof ITEM_FIELDS>

/** The columns of a run's items (their loggers and signals stay behind). */
export function encodeItems(items: ReadonlyArray<ThreadItem>): ItemColumns {
  const n = items.length
  const columns = ITEM_FIELDS.map(() => new Array<unknown>(n)) as unknown as ItemColumns
  const [id, key, context, maxLength, source, translation, plurals, isPlural, fileType, filePath, labelIds, sourceLanguage, targetLanguage, settings, projectId, stepId, organizationId] = columns
  // Each field by name (not items[k][field]): a load the JIT can make monomorphic.
  for (let k = 0; k < n; k++) {
    const item = items[k]!
    id[k] = item.id
    key[k] = item.key
    context[k] = item.context
    maxLength[k] = item.maxLength
    source[k] = item.source
    translation[k] = item.translation
    plurals[k] = item.plurals
    isPlural[k] = item.isPlural
    fileType[k] = item.fileType
    filePath[k] = item.filePath
    labelIds[k] = item.labelIds
    sourceLanguage[k] = item.sourceLanguage
    targetLanguage[k] = item.targetLanguage
    settings[k] = item.settings
    projectId[k] = item.projectId
    stepId[k] = item.stepId
    organizationId[k] = item.organizationId
  }
  return columns
}

/** The items again, each with the run's logger and signal. */
export function decodeItems(columns: ItemColumns, log: Item['log'], signal: AbortSignal): Item[] {
  const [id, key, context, maxLength, source, translation, plurals, isPlural, fileType, filePath, labelIds, sourceLanguage, targetLanguage, settings, projectId, stepId, organizationId] = columns
  const items = new Array<Item>(id.length)
  for (let k = 0; k < id.length; k++) {
    // One literal, fields in buildItem's order: every item of every run has the same shape.
    items[k] = {
      id: id[k]!,
      key: key[k]!,
      context: context[k]!,
      maxLength: maxLength[k]!,
      source: source[k]!,
      translation: translation[k],
      plurals: plurals[k],
      isPlural: isPlural[k]!,
      fileType: fileType[k]!,
      filePath: filePath[k]!,
      labelIds: labelIds[k]!,
      sourceLanguage: sourceLanguage[k]!,
      targetLanguage: targetLanguage[k]!,
      settings: settings[k]!,
      projectId: projectId[k]!,
      stepId: stepId[k]!,
      organizationId: organizationId[k]!,
      log,
      signal,
    }
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
  results.forEach((r, k) => {
    columns.ids.push(r.id)
    columns.outputs.push(r.output)
    columns.ports.push(r.port)
    if (r.findings.length) columns.findings.push(k, r.findings)
    if (r.retry) columns.retry.push(k)
  })
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
