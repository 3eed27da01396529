// The one way a job becomes the `Item` a check sees: the worker (with the translation it fetched),
// `switchyard try` (webhook bodies through the worker's own decoder, or its own list of strings)
// and PluginTester all build items here, so a check sees the same fields whoever runs it.
import type { Job } from '../protocol/job.js'
import type { Logger } from '../util/logger.js'
import type { Item, PluralForm } from './types.js'

/** What an item is made of: a job, or what a test or a local file says of a string. */
export type ItemSource = Pick<Job, 'stringId' | 'projectId' | 'stepId' | 'organizationId' | 'string' | 'sourceLanguage' | 'targetLanguage'>

/** The target text, as the service returns it (or as given locally); plural strings have forms. */
export interface TargetText {
  text?: string
  plurals?: PluralForm[]
}

export interface ItemContext {
  /** Absent when no check of the pipeline needs the translation. */
  translation?: TargetText
  settings: Record<string, unknown>
  log: Logger
  signal: AbortSignal
}

export function buildItem(job: ItemSource, context: ItemContext): Item {
  const { translation } = context
  const plurals = translation?.plurals
  // A plural string's translation is its `other` form (all forms are in `plurals`).
  const other = plurals?.find((p) => p.plural === 'other') ?? plurals?.[plurals.length - 1]
  return {
    id: job.stringId,
    key: job.string.key,
    context: job.string.context,
    maxLength: job.string.maxLength,
    source: job.string.text,
    translation: translation ? (translation.text ?? other?.text ?? '') : undefined,
    plurals,
    isPlural: job.string.isPlural || !!plurals,
    fileType: job.string.fileType,
    filePath: job.string.filePath,
    labelIds: job.string.labelIds,
    sourceLanguage: job.sourceLanguage,
    targetLanguage: job.targetLanguage,
    settings: context.settings,
    projectId: job.projectId,
    stepId: job.stepId,
    organizationId: job.organizationId,
    log: context.log,
    signal: context.signal,
  }
}

/** Characters of a string's texts together (source, translation, plural forms): what routes it to the pipelines' long-text lane. */
export function textChars(item: Pick<Item, 'source' | 'translation' | 'plurals'>): number {
  let n = item.source.length
  // A plural string's translation is its "other" form, one of `plurals`: counted once.
  if (item.plurals?.length) for (const p of item.plurals) n += p.text?.length ?? 0
  else n += item.translation?.length ?? 0
  return n
}
