// Turning a verified, parsed batch into jobs (one per recalculation event) and other events.
import type { Language } from '../engine/types.js'
import type { Job } from '../queue/job.js'
import { jobKeyOf } from '../queue/job.js'
import { describeSchemaError, validateRecalculationEvent } from './batch-schema.js'
import { RECALCULATION_EVENT, type OtherEvent, type RecalculationEvent } from './event-types.js'

export interface Unbatched {
  jobs: Job[]
  others: OtherEvent[]
  /** Module keys named by the jobs. */
  moduleKeys: Set<string>
}

export class EventError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'EventError'
  }
}

// Language records repeat in every event of a batch; share one object per distinct record so a
// queue of thousands of jobs holds a handful of them. Bounded: languages are few.
const languages = new Map<string, Language>()
// Keyed by the record's fields joined, not JSON.stringify: it runs twice per event (bench).
function intern(language: Language): Language {
  const l = language
  const k = `${l.id}\u0001${l.name}\u0001${l.editorCode}\u0001${l.twoLettersCode}\u0001${l.threeLettersCode}\u0001${l.locale}\u0001${l.androidCode}\u0001${l.osxCode}\u0001${l.osxLocale}\u0001${l.textDirection}\u0001${l.dialectOf}\u0001${Object.keys(l).length}`
  const known = languages.get(k)
  if (known) return known
  if (languages.size > 2000) languages.clear()
  languages.set(k, language)
  return language
}

function toInt(value: unknown): number {
  const n = typeof value === 'number' ? value : Number.parseInt(String(value ?? ''), 10)
  return Number.isFinite(n) && n > 0 ? n : 0
}

export interface BatchOrigin {
  organizationId: string
  domain: string
  batchId: string
}

/** Throws EventError naming the first bad event; nothing of a bad batch is used. */
export function unbatch(events: Array<{ event: string }>, origin: BatchOrigin): Unbatched {
  const jobs: Job[] = []
  const others: OtherEvent[] = []
  const moduleKeys = new Set<string>()
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (event.event !== RECALCULATION_EVENT) {
      others.push(event as OtherEvent)
      continue
    }
    if (!validateRecalculationEvent(event)) {
      throw new EventError(describeSchemaError(validateRecalculationEvent.errors, `/events/${i}`))
    }
    const s = (event as RecalculationEvent).stringStatus
    const t = s.translation
    const moduleKey = s.workflowStep.applicationModule.moduleKey
    moduleKeys.add(moduleKey)
    const job: Job = {
      key: '',
      organizationId: origin.organizationId || String(s.organizationId ?? ''),
      domain: origin.domain,
      moduleKey,
      projectId: t.project.id,
      stepId: s.workflowStep.id,
      languageId: s.affectedLanguage.id,
      stringId: t.id,
      revision: t.revision ?? 0,
      string: {
        key: t.key ?? t.identifier ?? '',
        context: t.context ?? '',
        maxLength: toInt(t.maxLength),
        text: t.text,
        isPlural: !!t.hasPlurals,
        fileType: t.file?.type ?? '',
        filePath: t.file?.path ?? '',
        labelIds: Array.isArray(t.labelIds) ? t.labelIds : [],
      },
      sourceLanguage: intern(s.sourceLanguage),
      targetLanguage: intern(s.affectedLanguage),
      batchId: origin.batchId,
      attempts: 0,
    }
    job.key = jobKeyOf(job)
    jobs.push(job)
  }
  return { jobs, others, moduleKeys }
}
