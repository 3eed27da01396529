// String statuses on the custom step, per (language, string), with the history tests check:
// how many PATCHes touched each string and every output it was given.
import type { StatusRecord } from '../protocol/string-status.js'
import type { SampleProject, SampleString } from './sample-project.js'

export const STRING_STATUSES = ['TODO', 'DONE', 'INCOMPLETE', 'NEED_PROCESS', 'FAILED'] as const
export type StringStatusName = (typeof STRING_STATUSES)[number]

export interface StatusEntry {
  status: StringStatusName
  output: string
  /** PATCH operations that named this string. */
  patches: number
  /** Every value a PATCH gave it, in order (only those applied: a refused repeat is not here). */
  outputs: string[]
  /** Times the string reached the step (NEED_PROCESS): 1 at seed, +1 per send-back or Resend. */
  arrivals: number
  /** Arrivals that got an output (a port or ""); at most one each. */
  answered: number
  /**
   * The arrival whose delivery the app confirmed (2XX), 0: none. The sender does not send that
   * arrival again by itself (platform notes: a confirmed delivery is done; only Resend, a
   * send-back or a deliberate repeat sends the string again).
   */
  delivered: number
}

/** What a PATCH operation did to one (string, language). */
export type ApplyResult = 'applied' | 'second-output' | 'patch-not-waiting'

/** A status with what the emulator knows about it, for tests and the control API. */
export interface StatusView extends StatusRecord {
  expected: string
  defect: string | null
  patches: number
  outputs: string[]
  arrivals: number
  answered: number
}

export interface StatusFilter {
  languageId?: string
  status?: string
  output?: string
  stringIds?: number[]
  /** Only DONE strings whose output is not the expected one. */
  wrong?: boolean
  /** Only strings routed to more than one distinct port. */
  conflicting?: boolean
}

export interface LanguageSummary {
  total: number
  byStatus: Record<string, number>
  byOutput: Record<string, number>
  expected: Record<string, number>
}

export interface Summary {
  strings: number
  languages: Record<string, LanguageSummary>
  /** Status PATCH operations received. */
  patchOperations: number
  /** (string, language) pairs not DONE yet. */
  notDone: number
  /** DONE with an output other than the expected one. */
  wrongOutput: number
  /** Routed to more than one distinct port over time. */
  conflicting: number
  /** The first of the wrong and conflicting ones, for a readable failure message. */
  examples: { wrong: StatusView[]; conflicting: StatusView[] }
}

export class StatusStore {
  private readonly byLanguage = new Map<string, Map<number, StatusEntry>>()
  patchOperations = 0
  /** (string, language) pairs DONE now, kept as statuses change so progress is cheap to poll. */
  doneCount = 0

  constructor(readonly sample: SampleProject) {
    for (const languageId of sample.languages) {
      const entries = new Map<number, StatusEntry>()
      for (const str of sample.strings) entries.set(str.id, { status: 'NEED_PROCESS', output: '', patches: 0, outputs: [], arrivals: 1, answered: 0, delivered: 0 })
      this.byLanguage.set(languageId, entries)
    }
  }

  get(stringId: number, languageId: string): StatusEntry | undefined {
    return this.byLanguage.get(languageId)?.get(stringId)
  }

  /**
   * Applies one validated PATCH value: a port routes the string (DONE), "" parks it (TODO). Only a
   * string waiting at the step (NEED_PROCESS) changes; any other is left as it is and the caller
   * records the mistake: a second output for one arrival, or an output for a string not waiting.
   */
  apply(stringId: number, languageId: string, value: string): { entry: StatusEntry; result: ApplyResult } {
    const entry = this.get(stringId, languageId)
    if (!entry) throw new Error(`no status for string ${stringId} in ${languageId}`)
    entry.patches++
    this.patchOperations++
    if (entry.status !== 'NEED_PROCESS') {
      return { entry, result: entry.answered >= entry.arrivals ? 'second-output' : 'patch-not-waiting' }
    }
    entry.outputs.push(value)
    entry.answered++
    this.track(entry.status, value === '' ? 'TODO' : 'DONE')
    entry.status = value === '' ? 'TODO' : 'DONE'
    entry.output = value
    return { entry, result: 'applied' }
  }

  /** Sets a status; moving to NEED_PROCESS from any other status is a new arrival at the step. */
  set(stringId: number, languageId: string, status: StringStatusName): void {
    const entry = this.get(stringId, languageId)
    if (!entry) return
    if (status === 'NEED_PROCESS' && entry.status !== 'NEED_PROCESS') {
      entry.arrivals++
      entry.output = ''
    }
    this.track(entry.status, status)
    entry.status = status
  }

  private track(from: StringStatusName, to: StringStatusName): void {
    if (from !== 'DONE' && to === 'DONE') this.doneCount++
    else if (from === 'DONE' && to !== 'DONE') this.doneCount--
  }

  /** Pairs in total and DONE, without walking them (what a benchmark polls). */
  progress(): { total: number; done: number; patchOperations: number } {
    return { total: this.sample.strings.length * this.sample.languages.length, done: this.doneCount, patchOperations: this.patchOperations }
  }

  record(stringId: number, languageId: string): StatusRecord | undefined {
    const entry = this.get(stringId, languageId)
    if (!entry) return undefined
    return { stringId, languageId, stepId: this.sample.step.id, status: entry.status, output: entry.output }
  }

  view(str: SampleString, languageId: string): StatusView | undefined {
    const entry = this.get(str.id, languageId)
    const translation = str.translations.get(languageId)
    if (!entry || !translation) return undefined
    return {
      stringId: str.id,
      languageId,
      stepId: this.sample.step.id,
      status: entry.status,
      output: entry.output,
      expected: translation.expected,
      defect: translation.defect,
      patches: entry.patches,
      outputs: [...entry.outputs],
      arrivals: entry.arrivals,
      answered: entry.answered,
    }
  }

  /** Every (string, language) pair matching the filter, by language then string id. */
  *select(filter: StatusFilter = {}): Generator<{ str: SampleString; languageId: string; entry: StatusEntry }> {
    const languages = filter.languageId ? [filter.languageId] : this.sample.languages
    const strings = filter.stringIds
      ? filter.stringIds.map((id) => this.sample.byId.get(id)).filter((s): s is SampleString => s !== undefined)
      : this.sample.strings
    for (const languageId of languages) {
      const entries = this.byLanguage.get(languageId)
      if (!entries) continue
      for (const str of strings) {
        const entry = entries.get(str.id)
        if (!entry) continue
        if (filter.status !== undefined && entry.status !== filter.status) continue
        if (filter.output !== undefined && entry.output !== filter.output) continue
        if (filter.wrong && !(entry.status === 'DONE' && entry.output !== str.translations.get(languageId)!.expected)) continue
        if (filter.conflicting && !isConflicting(entry)) continue
        yield { str, languageId, entry }
      }
    }
  }

  views(filter: StatusFilter = {}): StatusView[] {
    const out: StatusView[] = []
    for (const { str, languageId } of this.select(filter)) out.push(this.view(str, languageId)!)
    return out
  }

  summary(exampleLimit = 20): Summary {
    const languages: Record<string, LanguageSummary> = {}
    let notDone = 0
    let wrongOutput = 0
    let conflicting = 0
    const examples: Summary['examples'] = { wrong: [], conflicting: [] }
    for (const languageId of this.sample.languages) {
      const lang: LanguageSummary = { total: 0, byStatus: {}, byOutput: {}, expected: {} }
      languages[languageId] = lang
      const entries = this.byLanguage.get(languageId)!
      for (const str of this.sample.strings) {
        const entry = entries.get(str.id)!
        const expected = str.translations.get(languageId)!.expected
        lang.total++
        lang.byStatus[entry.status] = (lang.byStatus[entry.status] ?? 0) + 1
        lang.byOutput[entry.output] = (lang.byOutput[entry.output] ?? 0) + 1
        lang.expected[expected] = (lang.expected[expected] ?? 0) + 1
        if (entry.status !== 'DONE') notDone++
        else if (entry.output !== expected) {
          wrongOutput++
          if (examples.wrong.length < exampleLimit) examples.wrong.push(this.view(str, languageId)!)
        }
        if (isConflicting(entry)) {
          conflicting++
          if (examples.conflicting.length < exampleLimit) examples.conflicting.push(this.view(str, languageId)!)
        }
      }
    }
    return { strings: this.sample.strings.length, languages, patchOperations: this.patchOperations, notDone, wrongOutput, conflicting, examples }
  }
}

/** Routed to more than one distinct port over time (a park, "", does not count as an output). */
function isConflicting(entry: StatusEntry): boolean {
  let first = ''
  for (const output of entry.outputs) {
    if (output === '') continue
    if (first === '') first = output
    else if (output !== first) return true
  }
  return false
}
