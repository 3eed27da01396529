// Issues at the service for strings a pipeline sends back, and their resolution when the string
// passes. Runs only after the status update was accepted (the findings stage calls it from the
// reporter's `reported`), and yields to status updates:
// - a small lane per organization (COMMENTS_MAX_IN_FLIGHT requests at once), inside the API
//   client's limit of 20, at a lower priority than status requests waiting for a slot;
// - a failed request (network, 429, 5XX) is retried a few times by the API client; then it, or
//   any other refusal, is counted, logged (once a minute per organization) and given up: nothing
//   here throws back into the status path;
// - at most `maxPending` tasks wait per organization; beyond it they are dropped, counted and
//   logged (once a minute per organization);
// - a 403 (the app may not comment in the project, or its token lost that right for a while) on a
//   look-up or a POST pauses raising in that project for `refusedPauseMs`: raises meanwhile make
//   neither request (counted as `refused`) but still resolve the out-of-date issues they know of.
//   A 403 on resolving gives up that issue alone, and the string's other issues are still
//   resolved: a skipped resolution would leave its issue open for good, an approved string
//   seldom coming back. Either is logged once per `refusedPauseMs` and project, not per string.
// What was raised is remembered in the findings log (string + language + findings hash), so a
// string sent back again with the same findings raises nothing. When the log has no memory of the
// string at all, one GET of its unresolved issues looks for the worker's own reference first.
// A POST is never repeated blindly: before it, the string's entry is marked `unsure` (in the write
// that remembers what the look-up found, and only while the entry is still the outcome being
// raised); the mark is cleared once the issue is remembered or the POST was surely refused. So
// whatever happens to the POST (an answer lost, a crash, a log write that fails after it), whoever
// reads the entry next (the retry, a later raise, the string's pass) looks its issues up (one GET)
// before trusting what is remembered, and finds the issue if the POST created it. A lost POST may
// also land late (a gateway answered 5XX while the service went on): until `lateLandingMs` after
// its answer was lost (the mark is stamped anew then) a look-up that misses it proves nothing, so
// the mark stays, and a passed string is looked at once more after that. A string's tasks run one
// after the other (a task whose string is busy waits aside, without holding a slot).
// What is given up, dropped or lost with a restart is not forgotten: the findings log's sweep picks
// the entries that still owe the service something (owes(), catchUpPicker()) and catchUp() queues
// their tasks again.
import { randomBytes } from 'node:crypto'
import { ApiError, type ApiClient } from '../platform/api-client.js'
import { OrganizationUnavailableError } from '../platform/token-provider.js'
import type { Logger } from '../util/logger.js'
import type { FindingRecord } from '../protocol/findings.js'
import { findingsHash } from './finding-records.js'
import type { EntryRef, FindingsEntry, FindingsLog, RaisedIssue } from './findings-log.js'
import { issueFindings, issueText, issueTypeOf, ownReference } from './issue-text.js'

export type IssueOutcome = 'raised' | 'already-open' | 'resolved' | 'failed' | 'dropped' | 'stale' | 'refused'

export interface IssueWork extends EntryRef {
  pipelineName: string
  findings: FindingRecord[]
}

/** What the catch-up needs of a pipeline that raises issues now: its display name and the outputs that send back. */
export interface IssuesOfPipeline { name: string; outputs: string[] }

export interface IssueSenderOptions {
  api: ApiClient
  findings: FindingsLog
  log: Logger
  /** Comment requests in flight per organization. */
  concurrency: number
  /** Attempts of one comment request (429, 5xx and network errors are retried). */
  maxAttempts?: number
  /** Tasks waiting per organization before new ones are dropped. */
  maxPending?: number
  /** First wait before a raise whose POST had an unknown outcome runs again (ms; doubles). */
  retryDelayMs?: number
  /** After a 403 on raising, how long raising in that project is not tried again (ms). */
  refusedPauseMs?: number
  /** How long a lost POST may still land (ms; LATE_LANDING_MS): a look-up answers its mark only after. */
  lateLandingMs?: number
  /** Catch-up: entries reported less than this long ago are left to their own tasks (ms; CATCH_UP_AFTER_MS). */
  catchUpAfterMs?: number
  /** Catch-up: entries reported longer ago than this are left to the string's next outcome (ms; CATCH_UP_WITHIN_MS). */
  catchUpWithinMs?: number
  /** A monotonic clock in ms (tests). */
  now?(): number
  count?(outcome: IssueOutcome, n?: number): void
}

/** Below the status requests (priority 0) in the organization's queue. */
export const COMMENT_PRIORITY = -1

/** A dropped or failed issue is logged at most this often per organization (the counts say how many). */
export const WARN_EVERY_MS = 60_000

/** How long raising in a project whose comment requests were refused (403) is left alone. */
export const REFUSED_PAUSE_MS = 5 * 60_000

const now = () => new Date().toISOString()
/** A new `unsure` mark: the time, and a tag so that two marks of the same millisecond differ. */
export const unsureMark = () => `${now()}#${randomBytes(4).toString('hex')}`
/** When a mark was written (ms), or NaN for one of another form. */
const markTime = (mark: string) => Date.parse(mark.split('#')[0]!)

/**
 * How long after a POST whose answer was lost the issue may still appear at the service (a gateway
 * that answered 5XX while the service went on): until then a look-up that does not find it proves
 * nothing, and the mark stays.
 */
export const LATE_LANDING_MS = 60_000

/**
 * The catch-up (the findings log's sweep picks entries with owes(), catchUp() queues them) takes
 * up what a string's entry says is still owed to the service: an issue not raised (its task dropped at the bound,
 * failed, refused during a pause, or lost with a restart) or not resolved, or a POST whose answer
 * was lost. It leaves alone entries younger than this, whose tasks may still be waiting...
 */
export const CATCH_UP_AFTER_MS = 5 * 60_000
/** ...and older than this: a string its organization or project no longer has would be asked about every sweep. */
export const CATCH_UP_WITHIN_MS = 24 * 60 * 60_000

/**
 * A failure while resolving within a raise (an out-of-date issue, or everything when the string
 * passed meanwhile): counted as failed and logged once, never retried as if the POST had been lost.
 */
class ResolveFailed extends Error {
  constructor(cause: unknown) {
    super(`resolving out-of-date issues failed: ${(cause as Error)?.message ?? String(cause)}`, { cause })
    this.name = 'ResolveFailed'
  }
}
/**
 * The service's answer to the look-up of a string's issues was a failure, after the API client's
 * own attempts: the raise is not run again for it (only for a POST whose answer was lost), so a
 * failing look-up costs the organization's budget its 3 attempts, not 3 for each of 3 runs.
 */
class LookUpFailed extends Error {
  constructor(cause: unknown) {
    super(`looking up the string's issues failed: ${(cause as Error)?.message ?? String(cause)}`, { cause })
    this.name = 'LookUpFailed'
  }
}
/** The string a task is about: one task of it runs at a time. */
const refKey = (r: EntryRef) => `${r.domain}|${r.projectId}|${r.languageId}|${r.stringId}`

/**
 * A task waiting in an organization's lane: a plain record, run when a slot frees. Under a burst a
 * lane holds up to `maxPending` of them (10,000); as p-queue tasks each cost closures, promises
 * and their contexts besides the work, about 10 MB of the main heap at the burst's peak (issue 16).
 */
type LaneTask = { raise: true; work: IssueWork } | { raise: false; work: EntryRef }

/**
 * An organization's lane: its waiting tasks (from `head` on), how many run, and who waits for it
 * to empty. A task whose string has a task running waits aside, in `parked`, until that one ends
 * (then it runs first): two at once could both find nothing and both POST.
 */
interface Lane {
  tasks: Array<LaneTask | undefined>
  head: number
  running: number
  idle: Array<() => void>
  /** Strings (refKey) with a task running. */
  busy: Set<string>
  parked: Map<string, LaneTask[]>
  parkedCount: number
}

export class IssueSender {
  private readonly lanes = new Map<string, Lane>()
  private readonly maxAttempts: number
  private readonly maxPending: number
  readonly counts: Record<IssueOutcome, number> = { raised: 0, 'already-open': 0, resolved: 0, failed: 0, dropped: 0, stale: 0, refused: 0 }
  /** `domain|project` where a raise was refused with a 403: when to try raising again. */
  private readonly raisingPausedUntil = new Map<string, number>()
  /** `kind|where` (warnSometimes): until when a warning of that kind there is not logged again. */
  private readonly quietUntil = new Map<string, number>()
  /** Passed strings to look at once more when their mark is old enough (refKey: its timer). */
  private readonly rechecks = new Map<string, NodeJS.Timeout>()
  /** `kind|domain`: warnings not logged since the last line of that kind (see warnSometimes). */
  private readonly suppressed = new Map<string, number>()
  /** Shut down (abandon()): no recheck is scheduled any more. */
  private abandoned = false

  constructor(private readonly options: IssueSenderOptions) {
    this.maxAttempts = options.maxAttempts ?? 3
    this.maxPending = options.maxPending ?? 10_000
  }

  /** The organization has no token until someone connects it again (not a token endpoint's passing failure). */
  private static disconnected(error: unknown): boolean {
    const code = (error as { code?: string } | null)?.code
    return error instanceof OrganizationUnavailableError || code === 'NOT_CONNECTED' || code === 'ORGANIZATION_DISCONNECTED'
  }

  /** An answer after which the request may or may not have been applied. */
  private static uncertain(error: unknown): boolean {
    if (error instanceof ResolveFailed || error instanceof LookUpFailed) return false
    return !(error instanceof ApiError) || error.status === 0 || error.status === 408 || error.status >= 500
  }

  private count(outcome: IssueOutcome, n = 1): void {
    this.counts[outcome] += n
    this.options.count?.(outcome, n)
  }

  private lane(domain: string): Lane {
    let lane = this.lanes.get(domain)
    if (!lane) {
      lane = { tasks: [], head: 0, running: 0, idle: [], busy: new Set(), parked: new Map(), parkedCount: 0 }
      this.lanes.set(domain, lane)
    }
    return lane
  }

  private get request() {
    return { priority: COMMENT_PRIORITY, maxAttempts: this.maxAttempts }
  }

  private static waiting(lane: Lane): number {
    return lane.tasks.length - lane.head + lane.parkedCount
  }

  private enqueue(task: LaneTask): void {
    const { work } = task
    const lane = this.lane(work.domain)
    if (IssueSender.waiting(lane) >= this.maxPending) {
      this.count('dropped')
      this.warnSometimes('dropped', work.domain, WARN_EVERY_MS, { domain: work.domain, string: work.stringId, language: work.languageId, waiting: this.maxPending }, `too many issue requests waiting for this organization; not ${task.raise ? 'raised' : 'resolved'} (counted in switchyard_issues_total{outcome="dropped"}; logged once a minute)`)
      return
    }
    lane.tasks.push(task)
    this.pump(lane)
  }

  /** Start waiting tasks while the lane has free slots (at once, as a task is added or one ends). */
  private pump(lane: Lane): void {
    while (lane.running < this.options.concurrency && lane.head < lane.tasks.length) {
      const task = lane.tasks[lane.head]!
      lane.tasks[lane.head++] = undefined
      const key = refKey(task.work)
      if (lane.busy.has(key)) {
        const parked = lane.parked.get(key)
        if (parked) parked.push(task)
        else lane.parked.set(key, [task])
        lane.parkedCount++
        continue
      }
      this.start(lane, task, key)
    }
    // The array is emptied from its head: drop the consumed slots once they are most of it.
    if (lane.head > 1024 && lane.head * 2 > lane.tasks.length) {
      lane.tasks = lane.tasks.slice(lane.head)
      lane.head = 0
    } else if (lane.head === lane.tasks.length) {
      lane.tasks = []
      lane.head = 0
    }
  }

  private clock(): number {
    return this.options.now?.() ?? performance.now()
  }

  /** Is raising paused in this project (a 403 less than `refusedPauseMs` ago)? */
  private raisingPaused(work: EntryRef): boolean {
    const key = `${work.domain}|${work.projectId}`
    const until = this.raisingPausedUntil.get(key)
    if (until === undefined) return false
    if (this.clock() < until) return true
    this.raisingPausedUntil.delete(key)
    return false
  }

  /** Run a task in a slot; when it ends, the next task of its string (if one waits aside) takes the slot. */
  private start(lane: Lane, task: LaneTask, key: string): void {
    lane.running++
    lane.busy.add(key)
    void this.run(task).finally(() => {
      lane.running--
      lane.busy.delete(key)
      const parked = lane.parked.get(key)
      const next = parked?.shift()
      if (parked && !parked.length) lane.parked.delete(key)
      if (next) {
        lane.parkedCount--
        this.start(lane, next, key)
      }
      this.pump(lane)
      if (lane.running === 0 && IssueSender.waiting(lane) === 0) for (const resolve of lane.idle.splice(0)) resolve()
    })
  }

  /** Never rejects: whatever fails is counted and logged here. */
  private async run(task: LaneTask): Promise<void> {
    const { work } = task
    try {
      if (task.raise) await this.raiseWithRetries(task.work)
      else await this.resolveAll(task.work)
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) return this.refuse(work, error)
      this.count('failed')
      const what = error instanceof ResolveFailed
        ? 'an out-of-date issue could not be resolved; it stays open until the catch-up or the string\'s next outcome resolves it'
        : `issue could not be ${task.raise ? 'raised' : 'resolved'}; the status was reported, the catch-up tries again within the hour`
      this.warnSometimes('failed', work.domain, WARN_EVERY_MS, { err: error, domain: work.domain, project: work.projectId, string: work.stringId, language: work.languageId }, `${what} (counted in switchyard_issues_total{outcome="failed"}; logged once a minute per organization)`)
    }
  }

  /**
   * A warning of this kind for this place (an organization, or an organization's project), unless
   * one was logged less than `everyMs` ago (an outage or a burst would write one per string); the
   * next one says how many were not.
   */
  private warnSometimes(kind: string, where: string, everyMs: number, fields: Record<string, unknown>, message: string): void {
    const key = `${kind}|${where}`
    const at = this.clock()
    if ((this.quietUntil.get(key) ?? Number.NEGATIVE_INFINITY) > at) {
      this.suppressed.set(key, (this.suppressed.get(key) ?? 0) + 1)
      return
    }
    this.quietUntil.set(key, at + everyMs)
    const notLogged = this.suppressed.get(key)
    this.suppressed.delete(key)
    this.options.log.warn({ ...fields, ...(notLogged ? { notLoggedSinceLastLine: notLogged } : {}) }, message)
  }

  /**
   * A 403. On a look-up or a POST, raising pauses in this project; on a PATCH, only that issue's
   * resolution is given up. Logged once per pause length and project for each kind.
   */
  private refuse(work: EntryRef, error: ApiError): void {
    this.count('refused')
    // A PATCH resolves an issue; a look-up (GET) or a POST raises one.
    const raising = error.method !== 'PATCH'
    const at = this.clock()
    const pauseMs = this.options.refusedPauseMs ?? REFUSED_PAUSE_MS
    if (raising) this.raisingPausedUntil.set(`${work.domain}|${work.projectId}`, at + pauseMs)
    const pause = pauseMs >= 60_000 ? `${Math.round(pauseMs / 60_000)} minutes` : `${Math.round(pauseMs / 1000)} s`
    this.warnSometimes(
      raising ? 'raise' : 'resolve', `${work.domain}|${work.projectId}`, pauseMs,
      { domain: work.domain, project: work.projectId, status: error.status, request: `${error.method} ${error.path.split('?')[0]}`, pauseMs },
      raising
        ? `the service refuses this app's comment requests in this project (403): no issue is raised there for the next ${pause} (counted as refused; out-of-date issues are still resolved); statuses are not affected. Check that the app may comment in the project, or reconnect the organization if its token lost that right`
        : `the service refused to resolve an issue in this project (403): it stays open at the service (counted as refused; said once per ${pause} for the project); statuses are not affected. Check that the app may edit comments in the project, or reconnect the organization if its token lost that right`,
    )
  }

  /** The string was sent back with these findings: one open issue naming them. */
  sentBack(work: IssueWork): void {
    if (!issueFindings(work.findings).length) return
    this.enqueue({ raise: true, work })
  }

  /** The string passed: resolve the issues this worker raised on it. */
  passed(work: EntryRef): void {
    this.enqueue({ raise: false, work })
  }

  /**
   * Does a findings-log entry still owe the service something (the catch-up)? A sent-back entry
   * without an open issue for its findings (the raise that follows is a live one: it looks first
   * when it remembers nothing or is unsure), or with an out-of-date issue or a copy still open; a
   * passed entry (of a pipeline with `issues`; not a parked one) with an issue of this worker open;
   * either when a POST's answer was lost (`unsure`). `issuesOf` says how a pipeline raises issues now, by its key (undefined: it raises
   * none, and nothing is raised for it; an outcome it no longer sends back raises nothing either).
   * Only entries reported between CATCH_UP_AFTER_MS and CATCH_UP_WITHIN_MS ago.
   */
  owes(entry: FindingsEntry, issuesOf: (key: string) => IssuesOfPipeline | undefined): boolean {
    const age = Date.now() - Date.parse(entry.at)
    if (!(age >= (this.options.catchUpAfterMs ?? CATCH_UP_AFTER_MS) && age <= (this.options.catchUpWithinMs ?? CATCH_UP_WITHIN_MS))) return false
    // A young mark: its POST may be under way, here or on another instance (a POST's life, waiting
    // for a slot and its retries, can outlast the late-landing window): the next sweep looks.
    if (entry.unsure !== undefined && Date.now() - markTime(entry.unsure) < Math.max(this.options.catchUpAfterMs ?? CATCH_UP_AFTER_MS, this.options.lateLandingMs ?? LATE_LANDING_MS)) return false
    const pipeline = issuesOf(entry.pipeline)
    if (entry.sentBack) {
      if (!entry.hash || this.raisingPaused(entry)) return false
      // As a live raise would: no open issue for its findings, an out-of-date one open, or a copy
      // of it (one the raise that found it could not resolve).
      const open = entry.issues?.filter((i) => i.status === 'unresolved') ?? []
      const forThese = open.filter((i) => i.hash === entry.hash).length
      const owed = entry.unsure !== undefined || forThese !== 1 || open.length > forThese
      return owed && pipeline !== undefined && entry.output !== null && pipeline.outputs.includes(entry.output)
    }
    // A pass of a pipeline with issues (an entry written before `resolves` was: judged by the pipeline as it is now).
    const resolves = entry.resolves ?? (entry.outcome !== '' && entry.output !== null && pipeline !== undefined && !pipeline.outputs.includes(entry.output))
    return resolves && (entry.unsure !== undefined || entry.issues?.some((i) => i.status === 'unresolved') === true)
  }

  /**
   * A sweep's filter: the entries that owe something, at most as many per organization as its
   * lane has room for now (one that owes thousands does not take the others' turn).
   */
  catchUpPicker(issuesOf: (key: string) => IssuesOfPipeline | undefined): (entry: FindingsEntry) => boolean {
    const picked = new Map<string, number>()
    return (entry) => {
      const n = picked.get(entry.domain) ?? 0
      if (n >= this.catchUpRoom(entry.domain) || !this.owes(entry, issuesOf)) return false
      picked.set(entry.domain, n + 1)
      return true
    }
  }

  /** Room the catch-up may take in an organization's lane now (half the waiting bound, less what waits). */
  catchUpRoom(domain: string): number {
    return this.abandoned ? 0 : Math.max(0, Math.floor(this.maxPending / 2) - IssueSender.waiting(this.lane(domain)))
  }

  /**
   * The catch-up: queue the task an entry still owes (owes()), while the organization's lane is
   * less than half full (live tasks keep the room they need). True when one was queued.
   */
  catchUp(entry: FindingsEntry, issuesOf: (key: string) => IssuesOfPipeline | undefined): boolean {
    if (this.catchUpRoom(entry.domain) === 0 || !this.owes(entry, issuesOf)) return false
    const ref: EntryRef = { domain: entry.domain, projectId: entry.projectId, languageId: entry.languageId, stringId: entry.stringId }
    if (entry.sentBack) this.sentBack({ ...ref, pipelineName: issuesOf(entry.pipeline)!.name, findings: entry.findings })
    else this.passed(ref)
    return true
  }

  private async raiseWithRetries(work: IssueWork): Promise<void> {
    const records = issueFindings(work.findings)
    const hash = findingsHash(records)
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.raise(work, records, hash)
      } catch (error) {
        // No token for the organization (disconnected): no request went out, and waiting here
        // while holding a slot would not bring one.
        if (!IssueSender.uncertain(error) || attempt >= this.maxAttempts || IssueSender.disconnected(error)) throw error
        await new Promise((r) => setTimeout(r, (this.options.retryDelayMs ?? 500) * 2 ** (attempt - 1)))
      }
    }
  }

  private async raise(work: IssueWork, records: FindingRecord[], hash: string): Promise<void> {
    const { api, findings } = this.options
    const entry = await findings.get(work)
    // A later outcome took the place of this one (the string passed, or came back with other
    // findings): its own task does the work, after this one (and looks first if a POST of this
    // task left the entry unsure).
    if (entry && (!entry.sentBack || entry.hash !== hash)) return this.count('stale')
    /** Found by looking them up, not remembered yet: written with what follows, in one update. */
    let found: RaisedIssue[] | undefined
    // Raising refused here a moment ago (a 403): neither look-up nor POST; what is known still counts.
    let paused = this.raisingPaused(work)
    /** The look-up was refused now (403): counted as refused once, by refuse(). */
    let refusedNow = false
    // Nothing remembered (a new string, or a store that forgot), or a lost POST may have raised
    // one: look for our own open issues.
    if ((entry?.issues === undefined || entry.unsure) && !paused) {
      try {
        found = await this.lookUp(work)
      } catch (error) {
        // An answer of the service: the API client has made its attempts already. (A token that
        // could not be had made no request: the raise is tried again for it, as before.)
        if (!(error instanceof ApiError)) throw error
        if (error.status !== 403) throw new LookUpFailed(error)
        // Refused: raising pauses in the project, and the out-of-date issues known are still
        // resolved below, as after a refused POST.
        this.refuse(work, error)
        paused = true
        refusedNow = true
      }
    }
    const seen = new Set(entry?.issues?.map((i) => i.id))
    const withFound = (issues: RaisedIssue[]) => (found ? IssueSender.merge(issues, found, seen) : issues)
    /** After a look-up, the mark it answers (not one set since, by another instance's POST). */
    const looked = found ? this.answered(entry?.unsure) : undefined
    const remembered = entry?.issues ? withFound(entry.issues) : found
    const open = (remembered ?? []).filter((i) => i.status === 'unresolved')
    /** The entry as the last update here left it: whether the string passed meanwhile. */
    let latest: FindingsEntry | undefined
    let updated = false
    if (open.some((i) => i.hash === hash)) {
      if (found) {
        latest = await this.remember(work, withFound, looked)
        updated = true
      }
      this.count('already-open')
    } else if (paused || this.raisingPaused(work)) {
      // Paused (checked again: another task may have been refused while the look-up ran). What the
      // look-up found is written, even nothing: it answers the mark it saw.
      if (found) {
        latest = await this.remember(work, withFound, looked)
        updated = true
      }
      if (!refusedNow) this.count('refused')
    } else {
      // Before the POST, one write: what the look-up found, and a mark of this POST's, so that
      // whatever becomes of the POST or of this process, whoever reads the entry next looks first.
      // Only while the entry is still this outcome's; else a later one's task does the work.
      const tag = unsureMark()
      let current = false
      let youngBefore = false
      const intent = await findings.update(work, (e) => {
        // Gone, moved on, or marked since it was read (another instance's POST: it raises), or
        // another instance raised the issue meanwhile (its POST done and remembered, mark cleared).
        if (!e || !e.sentBack || e.hash !== hash || e.unsure !== entry?.unsure) return undefined
        if (e.issues?.some((i) => i.hash === hash && i.status === 'unresolved' && !seen.has(i.id))) return undefined
        current = true
        // Always this POST's own mark (so another instance that read the old one does not POST
        // too). One it replaces that is still young guards a POST that may yet land: see below.
        // (Young as the look-up judged it: it may have settled since, with a copy landing meanwhile.)
        youngBefore = e.unsure !== undefined && looked === undefined
        return IssueSender.withIssues(e, withFound(e.issues ?? []), tag)
      })
      if (!current) {
        // What the look-up found is kept all the same, and if the string passed meanwhile (its
        // pass queued no task: nothing was known), resolved here.
        this.count('stale')
        const after = found ? await this.remember(work, withFound, looked) : intent
        if (after && !after.sentBack) await this.resolveAll(work).catch((e: unknown) => { throw new ResolveFailed(e) })
        return
      }
      let created: { id: number } | undefined
      try {
        created = await api.createComment(work.domain, work.projectId, {
          stringId: work.stringId, targetLanguageId: work.languageId, type: 'issue', issueType: issueTypeOf(records),
          text: issueText(records, { pipelineName: work.pipelineName, hash }),
        }, this.request)
      } catch (error) {
        // An answer lost: the issue may exist, the mark stays (the retry looks), stamped anew with
        // the time of the loss: the POST may land until `lateLandingMs` after it, not after the
        // mark (it may have waited for a slot, been retried, taken its timeout). Surely refused:
        // nothing was created, the mark goes (or, if it replaced a young one, is stamped anew).
        if (IssueSender.uncertain(error)) {
          // Whatever the entry's mark is now (another instance's pass may have answered ours while
          // this POST waited for a slot): a fresh one, and a look once more if the string passed.
          const fresh = unsureMark()
          const marked = await findings.update(work, (e) => e && { ...e, unsure: fresh }).catch(() => undefined)
          if (marked && !marked.sentBack) this.recheckLater(work, fresh)
          throw error
        }
        const saved = await this.remember(work, (issues) => issues, { unsure: tag }, youngBefore ? unsureMark() : undefined).catch(() => undefined)
        if (!(error instanceof ApiError && error.status === 403)) throw error
        // Refused: raising pauses in the project; the out-of-date issues are still resolved below.
        this.refuse(work, error)
        if (saved) {
          latest = saved
          updated = true
        }
      }
      if (created) {
        const id = created.id
        // Should this write fail, the mark stays: the retry's look-up finds the issue. If this
        // POST's mark replaced a young one, a fresh mark (a later time) stands for that one.
        latest = await this.remember(work, (issues) => [...issues, { id, hash, status: 'unresolved', at: now() }], { unsure: tag }, youngBefore ? unsureMark() : undefined)
        updated = true
        this.count('raised')
      }
    }
    // Issues this worker raised for earlier findings are out of date: resolved, so one stays open.
    // So are copies for these findings beyond the first (a POST that landed after its answer was
    // lost, and was raised again).
    // (`open` holds only what the look-up found, when one ran: the service's word.)
    const copies = open.filter((i) => i.hash === hash).sort((a, b) => a.id - b.id).slice(1)
    // One that fails is left for later (the catch-up, or the string's next outcome), the others still go; the
    // failure is counted once they have, never retried as if the POST had been lost.
    let resolveFailed: unknown
    for (const old of [...open.filter((i) => i.hash !== hash), ...copies]) {
      const resolved = await this.resolveOne(work, old).catch((e: unknown) => { resolveFailed ??= e })
      if (resolved) {
        latest = resolved.entry
        updated = true
      }
    }
    // The string passed while this task ran (its resolving task may have found nothing yet).
    const after = updated ? latest : await findings.get(work)
    if (after && !after.sentBack) await this.resolveAll(work).catch((e: unknown) => { resolveFailed ??= e })
    if (resolveFailed !== undefined) throw new ResolveFailed(resolveFailed)
  }

  private async resolveAll(work: EntryRef): Promise<void> {
    const entry = await this.options.findings.get(work)
    if (entry?.sentBack) return this.count('stale')
    let issues = entry?.issues ?? []
    let lookUpFailed: unknown
    if (entry?.unsure) {
      // A lost POST may have raised an issue not remembered: look it up (even while raising is
      // paused: a passed string seldom comes back, and its issue would stay open for good).
      let found: RaisedIssue[] | undefined
      try {
        found = await this.lookUp(work)
      } catch (error) {
        // Refused (403) or failed: the issues remembered are still resolved; the mark stays for
        // the next pass. A failure is counted once they are.
        if (error instanceof ApiError && error.status === 403) this.refuse(work, error)
        else lookUpFailed = error
      }
      const seen = new Set(entry.issues?.map((i) => i.id))
      if (found) issues = (await this.remember(work, (known) => IssueSender.merge(known, found!, seen), this.answered(entry.unsure)))?.issues ?? found
      // The POST may still land: looked at once more when it no longer can.
      if (!this.settled(entry.unsure)) this.recheckLater(work, entry.unsure)
    }
    // One that fails is left for later (the catch-up, or the string's next pass); the others still
    // go, as in a raise: one failing first every time would keep them all open for good.
    let failed = lookUpFailed
    for (const issue of issues.filter((i) => i.status === 'unresolved')) {
      try {
        await this.resolveOne(work, issue)
      } catch (error) {
        failed ??= error
      }
    }
    if (failed !== undefined) throw failed
  }

  /** Is the POST a mark guards past landing (or the mark of another form)? */
  private settled(mark: string): boolean {
    const at = markTime(mark)
    return !Number.isFinite(at) || Date.now() - at >= (this.options.lateLandingMs ?? LATE_LANDING_MS)
  }

  /** What a look-up made after the entry read `mark` answers: the mark, once it is settled. */
  private answered(mark: string | undefined): { unsure: string | undefined } | undefined {
    return mark === undefined || this.settled(mark) ? { unsure: mark } : undefined
  }

  /** A passed string whose mark is young: its issues are looked at once more when it is settled. */
  private recheckLater(work: EntryRef, mark: string): void {
    const key = refKey(work)
    if (this.abandoned || this.rechecks.has(key)) return
    const late = this.options.lateLandingMs ?? LATE_LANDING_MS
    // At most `late` (a mark dated ahead, by another instance's clock, waits no longer).
    const delay = Math.min(late, Math.max(0, markTime(mark) + late - Date.now())) + 10
    const timer = setTimeout(() => {
      this.rechecks.delete(key)
      this.passed(work)
    }, delay)
    timer.unref?.()
    this.rechecks.set(key, timer)
  }

  /** This worker's unresolved issues on the string at the service (recognised by their reference). */
  private async lookUp(work: EntryRef): Promise<RaisedIssue[]> {
    const open = await this.options.api.listOpenIssues(work.domain, work.projectId, work.stringId, work.languageId, this.request)
    return open.flatMap((c) => {
      const hash = ownReference(c.text ?? '')
      return hash ? [{ id: c.id, hash, status: 'unresolved' as const, at: now() }] : []
    })
  }

  /**
   * What is remembered, with what a look-up found in place of the same ids. An issue remembered
   * open when the entry was read (`seen`) that the look-up did not find is no longer open at the
   * service (a person resolved it): remembered as resolved. One remembered since is kept as it is.
   */
  private static merge(known: RaisedIssue[], found: RaisedIssue[], seen: Set<number>): RaisedIssue[] {
    const at = now()
    const kept = known.filter((i) => !found.some((f) => f.id === i.id)).map((i) => (i.status === 'unresolved' && seen.has(i.id) ? { ...i, status: 'resolved' as const, at } : i))
    return [...kept, ...found]
  }

  /**
   * Resolves with the entry as the update left it; undefined when the service refused (403): that
   * issue alone is given up (counted, logged once per pause length), and the caller goes on.
   */
  private async resolveOne(work: EntryRef, issue: RaisedIssue): Promise<{ entry: FindingsEntry | undefined } | undefined> {
    try {
      await this.options.api.resolveIssue(work.domain, work.projectId, issue.id, this.request)
    } catch (error) {
      // Gone at the service (a person deleted it): nothing is left to resolve; remembered as
      // resolved, so that it is not tried first at every pass and catch-up for ever.
      if (error instanceof ApiError && error.status === 404) {
        this.options.log.debug({ domain: work.domain, project: work.projectId, issue: issue.id }, 'the issue to resolve is gone at the service (404); remembered as resolved')
      } else {
        if (!(error instanceof ApiError && error.status === 403)) throw error
        this.refuse(work, error)
        return undefined
      }
    }
    const entry = await this.remember(work, (issues) => issues.map((i) => (i.id === issue.id ? { ...i, status: 'resolved', at: now() } : i)))
    this.count('resolved')
    return { entry }
  }

  /**
   * Change the remembered issues of an entry (kept short: resolved ones beyond the last 10 go).
   * Resolves with the entry as it is now (undefined when the log has none). `answers`: the mark
   * this write answers (a look-up made after the entry read it, or the POST that set it). If it is
   * still the entry's it is cleared, or replaced by `replacement`; another one, set since, stays.
   */
  private remember(ref: EntryRef, fn: (issues: RaisedIssue[]) => RaisedIssue[], answers?: { unsure: string | undefined }, replacement?: string): Promise<FindingsEntry | undefined> {
    return this.options.findings.update(ref, (entry: FindingsEntry | undefined) => {
      if (!entry) return undefined
      const unsure = answers && entry.unsure === answers.unsure ? replacement : entry.unsure
      return IssueSender.withIssues(entry, fn(entry.issues ?? []), unsure)
    })
  }

  /** The entry with these issues (resolved ones beyond the last 10 dropped) and this mark. */
  private static withIssues(entry: FindingsEntry, issues: RaisedIssue[], unsure: string | undefined): FindingsEntry {
    const open = issues.filter((i) => i.status === 'unresolved')
    const resolved = issues.filter((i) => i.status === 'resolved').slice(-10)
    const { unsure: _old, ...rest } = entry
    return { ...rest, issues: [...resolved, ...open], ...(unsure ? { unsure } : {}) }
  }

  /** Tasks waiting or running, over every organization. */
  get pending(): number {
    let n = 0
    for (const lane of this.lanes.values()) n += IssueSender.waiting(lane) + lane.running
    return n
  }

  /** Give up every task still waiting (shutdown); those running finish. Returns how many were given up. */
  abandon(): number {
    let n = 0
    // A recheck not yet due is left to the catch-up after the next start (its mark stays in the log).
    this.abandoned = true
    for (const timer of this.rechecks.values()) clearTimeout(timer)
    this.rechecks.clear()
    for (const lane of this.lanes.values()) {
      n += IssueSender.waiting(lane)
      lane.tasks = []
      lane.head = 0
      lane.parked.clear()
      lane.parkedCount = 0
      if (lane.running === 0) for (const resolve of lane.idle.splice(0)) resolve()
    }
    if (n) this.count('dropped', n)
    return n
  }

  /** Wait until every task queued so far has finished. */
  async flush(): Promise<void> {
    await Promise.all(
      [...this.lanes.values()].map((lane) => (lane.running === 0 && IssueSender.waiting(lane) === 0 ? undefined : new Promise<void>((resolve) => lane.idle.push(resolve)))),
    )
  }
}
