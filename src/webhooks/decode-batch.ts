// The CPU-bound half of receiving a webhook, as one pure function: check the signature of the raw
// bytes, parse them, validate the batch and every string event, and reduce each string event to
// the few fields a job needs. It runs in a thread of the ingest pool (decode-pool.ts), or inline
// with INGEST_THREADS=0; both give the same answer for the same bytes.
//
// The answer is small and cheap to hand back across threads: the jobs as JSON text in the compact
// form of the journal (src/queue/job-codec.ts), not the parsed events with every field of 2.6.
import { isAscii } from 'node:buffer'
import { JobEncoder } from '../queue/job-codec.js'
import { RevisedList, stepOf, type RevisedStrings } from '../protocol/job.js'
import type { Language } from '../protocol/language.js'
import { RECALCULATION_EVENT, type OtherEvent, type RecalculationEvent } from '../protocol/service-events.js'
import { describeSchemaError, validateBatch, validateRecalculationEvent } from './batch-schema.js'
import { parseAppSecrets, secretsFor, type AppSecret } from './app-secrets.js'
import { matchSignature } from './verify-signature.js'
import { limitDepth } from './limit-depth.js'
import { EVENTS_TWICE, EventSlicer, NotSliceable } from './event-slices.js'

/** An event of the batch that could not be used; the others were. */
export interface InvalidEvent {
  /** Its index in `events`. */
  index: number
  reason: string
  /** It named its string, step and language, so it is parked at the service with "". */
  parked: boolean
}

export type DecodeFailure = 'bad_signature' | 'unknown_organization' | 'organization_mismatch' | 'malformed_json' | 'invalid_batch'

export type DecodeResult =
  | {
      ok: true
      /**
       * The organization the delivery is from: the id header, which the signed body agrees with
       * and whose secret (or a plain one) signed it; without the header, the body's.
       */
      organizationId: string
      /** The jobs, as JSON text in the compact form (job-codec.ts; '' for none). */
      jobs: string
      count: number
      moduleKeys: string[]
      /** The workflow step (stepOf) every job is of, or '' when they are of several (or none). */
      step: string
      /** Events per event name (names cut to 80 characters), for the metrics. A Map: a name like
       * `constructor` or `__proto__` is only a key. */
      eventCounts: Map<string, number>
      others: OtherEvent[]
      invalid: InvalidEvent[]
      /** The jobs at a revision past the first (journaled with the part, noted by the de-duplication); undefined: none. */
      revised?: RevisedStrings
    }
  | { ok: false; status: number; code: DecodeFailure; message: string }

function toInt(value: unknown): number {
  // Number, not parseInt: parseInt reads "1e3" as 1 (and "1e309", past any length, as 1).
  const n = Math.floor(typeof value === 'number' ? value : Number(String(value ?? '').trim() || 0))
  return Number.isFinite(n) && n > 0 ? n : 0
}

const EVENTS_OPEN = Buffer.from('{"events":[')
const EVENT_SEPARATOR = Buffer.from('},{"')

/**
 * JSON.parse of the body, the same value and the same errors, at about half the cost for a batch
 * as the service sends it (`{"events":[{...},{...}]}`, no whitespace): each event is parsed on
 * its own. A whole 300 KB body as one string is a large object for V8: a fresh allocation (and
 * its page faults) each time, and a two-byte copy of all of it if a single character is not ASCII;
 * events parsed one by one are small strings, one-byte unless that event has such a character.
 * Anything else (other spacing, a piece that does not parse) is parsed whole.
 */
export function parseBatchJson(bytes: Buffer): unknown {
  return parseEventwise(bytes) ?? JSON.parse(bytes.toString('utf8'))
}

/** The fast path of parseBatchJson alone: undefined where the body must be parsed whole. */
export function parseEventwise(bytes: Buffer): { events: unknown[] } | undefined {
  const end = bytes.length - 2
  if (end < EVENTS_OPEN.length || bytes.compare(EVENTS_OPEN, 0, EVENTS_OPEN.length, 0, EVENTS_OPEN.length) !== 0) return undefined
  if (bytes[end] !== 0x5d || bytes[end + 1] !== 0x7d) return undefined // ]}
  const events: unknown[] = []
  let start = EVENTS_OPEN.length
  if (start === end) return { events }
  // Cut before each `{"` that follows `},`: outside strings, that is where an object in an
  // array starts. A cut inside an event (an array of objects in it, or those characters at the
  // end of a string) leaves a piece that does not parse, and the body is parsed whole. If every
  // piece parses, the pieces joined by commas are the array: the same value as a whole parse.
  try {
    for (;;) {
      const at = bytes.indexOf(EVENT_SEPARATOR, start)
      const stop = at === -1 || at >= end ? end : at + 1
      // Cuts fall on ASCII bytes, so no UTF-8 sequence is split: each piece decodes as it would
      // within the whole body.
      const piece = bytes.subarray(start, stop)
      events.push(JSON.parse(piece.toString(isAscii(piece) ? 'latin1' : 'utf8')))
      if (stop === end) return { events }
      start = stop + 1
    }
  } catch {
    return undefined
  }
}

/** Does a body that parsed as JSON have the member `events` twice (keys read as JSON reads them)? */
function hasEventsTwice(bytes: Buffer): boolean {
  try {
    new EventSlicer(Infinity).push(bytes)
  } catch (error) {
    return error instanceof NotSliceable && error.message === EVENTS_TWICE
  }
  return false
}

let parsedFor: readonly string[] | undefined
let parsed: AppSecret[] = []
/** The entries of APP_SECRET, parsed once per list (a decoding thread gets one list for its life). */
function appSecrets(entries: readonly string[]): AppSecret[] {
  if (parsedFor !== entries) {
    parsed = parseAppSecrets(entries)
    parsedFor = entries
  }
  return parsed
}

/** The string of an event parked for being invalid: it never runs, only its ids are reported. */
const NO_STRING = { key: '', context: '', maxLength: 0, text: '', isPlural: false, fileType: '', filePath: '', labelIds: [] }

const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
const field = (v: unknown, k: string): unknown => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined)

/** The ids a status update needs, from an event that failed validation; undefined if one is missing. */
function parkingIds(event: unknown): { stringId: number; projectId: number; stepId: number; languageId: string; moduleKey: string; revision: number } | undefined {
  const s = field(event, 'stringStatus')
  const t = field(s, 'translation')
  const stringId = field(t, 'id')
  const projectId = field(field(t, 'project'), 'id')
  const stepId = field(field(s, 'workflowStep'), 'id')
  const languageId = field(field(s, 'affectedLanguage'), 'id')
  if (!isId(stringId) || !isId(projectId) || !isId(stepId) || typeof languageId !== 'string' || languageId === '') return undefined
  const moduleKey = field(field(field(s, 'workflowStep'), 'applicationModule'), 'moduleKey')
  const revision = field(t, 'revision')
  return { stringId, projectId, stepId, languageId, moduleKey: typeof moduleKey === 'string' ? moduleKey : '', revision: isId(revision) ? revision : 0 }
}

/**
 * Verify, parse and validate one delivery. `organizationHeader` is the X-…-Id header: it picks the
 * secrets to try, and the signed body must agree with it. `first`: the index of its first event
 * in the delivery, when it is a slice of a larger one (event-slices.ts), for the indexes reported. A batch is refused only as a whole when
 * it is not what it claims to be (signature, organization) or not a batch at all (JSON, `events`);
 * an event that is unusable is reported in `invalid` and costs no other event.
 */
export function decodeBatch(raw: Uint8Array, signature: string, secrets: readonly string[], organizationHeader = '', first = 0): DecodeResult {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  const candidates = secretsFor(appSecrets(secrets), organizationHeader)
  if (candidates.length === 0) {
    return { ok: false, status: 401, code: 'unknown_organization', message: `no app secret is configured for organization "${organizationHeader.slice(0, 64)}"` }
  }
  const matched = matchSignature(bytes, signature, candidates.map((c) => c.secret))
  if (matched === -1) return { ok: false, status: 401, code: 'bad_signature', message: 'signature does not match the body' }
  const signer = candidates[matched]!.organizationId
  let body: unknown
  let whole = false
  try {
    body = parseEventwise(bytes)
    if (body === undefined) {
      whole = true
      body = JSON.parse(bytes.toString('utf8'))
    }
  } catch (error) {
    return { ok: false, status: 400, code: 'malformed_json', message: `body is not valid JSON: ${(error as Error).message}` }
  }
  // JSON.parse keeps the last of keys given twice: a second `events` would drop the first one's
  // events unseen while the batch is answered 200. (The event-wise parse never sees two.)
  if (whole && hasEventsTwice(bytes)) return { ok: false, status: 400, code: 'invalid_batch', message: '(body): "events" is given twice; send the events in one array' }
  return decodeBatchBody(body, organizationHeader, signer, first)
}

/**
 * A parsed batch body, validated and reduced as a signed delivery is: `decodeBatch` once the
 * signature holds (`signer`: the organization whose secret signed it, if the secret names one), and
 * `switchyard try` for a body on disk (no signature to check).
 */
export function decodeBatchBody(body: unknown, organizationHeader = '', signer?: string, first = 0): DecodeResult {
  if (!validateBatch(body)) return { ok: false, status: 400, code: 'invalid_batch', message: describeSchemaError(validateBatch.errors) }
  const events = (body as { events: unknown[] }).events

  // Who sent it: the header, else the secret's own organization. Every event that names its
  // organization must name that one (a signed body replayed under another id is refused whole).
  let organizationId = organizationHeader || signer || ''
  for (let i = 0; i < events.length; i++) {
    const named = field(field(events[i], 'stringStatus'), 'organizationId')
    // An event that names none (absent, null, or "") is the delivery's, as the header says.
    if ((typeof named !== 'string' && typeof named !== 'number') || named === '') continue
    const id = String(named)
    if (!organizationId) organizationId = id
    if (id !== organizationId || (signer !== undefined && id !== signer)) {
      return { ok: false, status: 401, code: 'organization_mismatch', message: `the delivery claims organization "${organizationId.slice(0, 64)}" but event ${first + i} is from "${id.slice(0, 64)}"` }
    }
  }

  const jobs = new JobEncoder()
  const others: OtherEvent[] = []
  const invalid: InvalidEvent[] = []
  const moduleKeys = new Set<string>()
  const revised = new RevisedList()
  // The jobs' step while they share one (numbers compared, the key made once at the end).
  let stepProject = -1
  let stepOfAll = -1
  let mixed = false
  const seeStep = (projectId: number, stepId: number) => {
    if (stepProject === -1) {
      stepProject = projectId
      stepOfAll = stepId
    } else if (projectId !== stepProject || stepId !== stepOfAll) mixed = true
  }
  const eventCounts = new Map<string, number>()
  for (let i = 0; i < events.length; i++) {
    const event = events[i]
    const name = field(event, 'event')
    if (typeof name !== 'string' || name === '') {
      invalid.push({ index: first + i, reason: `/events/${first + i}: not an event object with a name`, parked: false })
      continue
    }
    const label = name.slice(0, 80)
    eventCounts.set(label, (eventCounts.get(label) ?? 0) + 1)
    if (name !== RECALCULATION_EVENT) {
      // Cut before it crosses threads: structuredClone overflows on deep nesting.
      others.push(limitDepth(event) as OtherEvent)
      continue
    }
    if (!validateRecalculationEvent(event)) {
      const reason = describeSchemaError(validateRecalculationEvent.errors, `/events/${first + i}`)
      const ids = parkingIds(event)
      invalid.push({ index: first + i, reason, parked: ids !== undefined })
      if (ids) {
        seeStep(ids.projectId, ids.stepId)
        const language = { id: ids.languageId }
        jobs.add({ ...ids, organizationId, string: NO_STRING, sourceLanguage: language, targetLanguage: language, invalid: reason })
      }
      continue
    }
    const s = (event as RecalculationEvent).stringStatus
    const t = s.translation
    const moduleKey = s.workflowStep.applicationModule.moduleKey
    moduleKeys.add(moduleKey)
    seeStep(t.project.id, s.workflowStep.id)
    revised.add(organizationId, t.project.id, s.workflowStep.id, s.affectedLanguage.id, t.id, t.revision ?? 0)
    jobs.add({
      organizationId, moduleKey, projectId: t.project.id, stepId: s.workflowStep.id, languageId: s.affectedLanguage.id, stringId: t.id, revision: t.revision ?? 0,
      string: {
        key: t.key ?? t.identifier ?? '', context: t.context ?? '', maxLength: toInt(t.maxLength), text: t.text, isPlural: t.hasPlurals === true,
        fileType: t.file?.type ?? '', filePath: t.file?.path ?? '', labelIds: Array.isArray(t.labelIds) ? integersOf(t.labelIds) : [],
      },
      // Kept whole for plugins, but cut where nested too deep to cross threads (limit-depth.ts).
      sourceLanguage: limitDepth(s.sourceLanguage) as Language, targetLanguage: limitDepth(s.affectedLanguage) as Language,
    })
  }
  return { ok: true, organizationId, jobs: jobs.text(), count: jobs.count, moduleKeys: [...moduleKeys], step: mixed || stepProject === -1 ? '' : stepOf({ projectId: stepProject, stepId: stepOfAll }), eventCounts, others, invalid, revised: revised.value() }
}

/** The integers of a list (the list itself when it holds nothing else, as it does from the service). */
function integersOf(list: unknown[]): number[] {
  for (const v of list) if (!Number.isInteger(v)) return list.filter((x): x is number => Number.isInteger(x))
  return list as number[]
}
