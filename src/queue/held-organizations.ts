// Organizations that cannot update statuses now: not connected (no usable token), forbidden (the
// service answered 403, or 401 after a refresh), or unavailable (its API kept failing: 429, 5XX,
// timeouts, network, through the retries). Their strings are held, never dropped: they
// wait on disk, in the backlog (backlog.ts), and only counts are kept here. The organization is
// tried again with back-off (capped near a minute, near 15 s if unavailable) until it can be reported for again; then its
// line of the backlog is served again (decisions held after their pipeline ran go straight back
// to the reporter, so no check runs twice).
//
// An organization let go for a try stays listed for the operator (its cause, reason and the time
// it was first held) until a status update for it goes through, but is not held meanwhile:
// `cause()` and `retryAt()` say nothing of it, so its strings are really tried. Refused again, it
// is held again with the same `since`. A try that is neither reported for nor refused within a
// minute (another instance took its strings, or they were dropped) leaves the list.
//
// Organizations due are tried each on its own: one's token check (canReport) never delays
// another's try. A check gets TOKEN_CHECK_LIMIT_MS; one that has not answered by then is a failed
// try, like a check that fails (held on, the next back-off), and no second check of the
// organization starts until the first has ended.
import type { HoldCause } from '../platform/reporter.js'
import type { Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import type { Job } from '../protocol/job.js'
import { RETRY_AFTER_MAX_MS } from '../util/retry-after.js'

/** The longest back-off of an organization held because its API kept failing (ms). */
export const UNAVAILABLE_MAX_DELAY_MS = 15_000

/**
 * How long a tick waits for one organization's token check (ms): a refresh may take API_TIMEOUT_MS
 * per try, a token store read has no limit of its own.
 */
export const TOKEN_CHECK_LIMIT_MS = 5_000

export interface HeldOrganizationView {
  domain: string
  cause: HoldCause
  reason: string
  /** When its strings were first held (ms), kept across tries until a status update for it goes through. */
  since: number
  /**
   * Its strings waiting in the backlog (on disk; in Redis with QUEUE=bullmq, by any instance), or
   * the strings held here since it was last held if more (the backlog's count may lag behind a
   * hold: with BullMQ it is read about once a second).
   */
  strings: number
  /** When they will be tried again (ms); undefined while a try is under way (let go, neither reported for nor refused yet). */
  nextTryAt?: number
}

export interface HeldOrganizationsOptions {
  log: Logger
  /**
   * Can the organization get a token now? Asked before strings held for `disconnected` are let go.
   * `organizations`: the ids of the organizations whose strings were held under the domain (one,
   * almost always): one connected under another domain since is let go too, its strings going
   * under the new domain as they run (worker.ts).
   */
  canReport(domain: string, organizations: readonly string[]): Promise<boolean>
  /** The organization's held strings may go back to work (its line of the backlog is served again). */
  release(domain: string, strings: number): void
  /**
   * The strings each organization (domain) has waiting in the backlog (on disk; in Redis with
   * QUEUE=bullmq), all at once (one pass, not one per organization): the counts shown. A domain
   * missing: none known.
   */
  waiting?(): ReadonlyMap<string, number>
  now?(): number
  random?(): number
  baseDelayMs?: number
  maxDelayMs?: number
  /** How long one organization's canReport() is waited for (ms; default TOKEN_CHECK_LIMIT_MS). */
  checkLimitMs?: number
}

interface Entry {
  cause: HoldCause
  reason: string
  since: number
  /** When it is tried again (ms); undefined while a try is under way. */
  nextTryAt?: number
  /** When it was let go for the try under way (ms). */
  triedAt?: number
  /** Strings that went through the hold since it was last held again (or listed); kept through a try. */
  strings: number
  /** The organizations (ids) whose strings were held under the domain, at most ORGANIZATIONS_KEPT. */
  organizations: Set<string>
}

/** Organization ids remembered per held domain (a domain is one organization's; a few more only while one moves). */
const ORGANIZATIONS_KEPT = 16

export class HeldOrganizations {
  /** Organizations held now (`nextTryAt` set) or being tried (not held, still listed). */
  private readonly entries = new Map<string, Entry>()
  /** Failed tries in a row per organization; forgotten when a status update goes through. */
  private readonly failures = new Map<string, number>()
  /** When each organization was first held; forgotten when a status update goes through. */
  private readonly firstHeld = new Map<string, number>()
  private readonly now: () => number
  private readonly random: () => number
  private readonly baseDelayMs: number
  private readonly maxDelayMs: number
  private readonly checkLimitMs: number
  /** Organizations whose canReport() has not ended yet (even past its limit): not asked again meanwhile. */
  private readonly checking = new Set<string>()

  constructor(private readonly options: HeldOrganizationsOptions) {
    this.now = options.now ?? Date.now
    this.random = options.random ?? Math.random
    this.baseDelayMs = options.baseDelayMs ?? 1000
    this.maxDelayMs = options.maxDelayMs ?? 60_000
    this.checkLimitMs = options.checkLimitMs ?? TOKEN_CHECK_LIMIT_MS
  }

  /** Why the organization's strings are held now, if they are (not while a try is under way: its strings are tried). */
  cause(domain: string): HoldCause | undefined {
    const e = this.entries.get(domain)
    return e?.nextTryAt !== undefined ? e.cause : undefined
  }

  /** When the organization's held strings are tried again (ms), if it is held now. */
  retryAt(domain: string): number | undefined {
    return this.entries.get(domain)?.nextTryAt
  }

  /**
   * Count `strings` of the organization as held (they wait on disk) and say why, once.
   * `retryAfterMs`: the service's Retry-After on the answer that made this hold (429, 503): the
   * next try is not before it (up to RETRY_AFTER_MAX_MS), whatever the back-off says.
   */
  hold(domain: string, strings: number, reason: string, cause: HoldCause = 'disconnected', retryAfterMs = 0, organizations: Iterable<string> = []): void {
    const e = this.entry(domain, reason, cause)
    e.strings += strings
    for (const id of organizations) if (id && e.organizations.size < ORGANIZATIONS_KEPT) e.organizations.add(id)
    if (retryAfterMs > 0 && e.nextTryAt !== undefined) e.nextTryAt = Math.max(e.nextTryAt, this.now() + Math.min(retryAfterMs, RETRY_AFTER_MAX_MS))
  }

  holdJobs(jobs: Job[], reason: string, cause: HoldCause = 'disconnected', retryAfterMs = 0): void {
    if (jobs.length) this.hold(jobs[0]!.domain, jobs.length, reason, cause, retryAfterMs, organizationsOf(jobs))
  }

  holdDecisions(decisions: Decision[], reason: string, cause: HoldCause, retryAfterMs = 0): void {
    if (decisions.length) this.hold(decisions[0]!.job.domain, decisions.length, reason, cause, retryAfterMs, organizationsOf(decisions.map(jobOf)))
  }

  private entry(domain: string, reason: string, cause: HoldCause): Entry {
    let e = this.entries.get(domain)
    if (!e || e.nextTryAt === undefined) {
      const failures = (this.failures.get(domain) ?? 0) + 1
      this.failures.set(domain, failures)
      const delay = this.delay(failures, cause)
      const now = this.now()
      // Since: the first hold with no status update gone through after it (succeeded() forgets it).
      if (!this.firstHeld.has(domain)) this.firstHeld.set(domain, now)
      const since = this.firstHeld.get(domain)!
      if (e) {
        // Refused again while being tried: held again, with the cause of this refusal; its own
        // count starts again (strings refused at every try are not counted once per try).
        Object.assign(e, { cause, reason, since, nextTryAt: now + delay, triedAt: undefined, strings: 0 })
      } else {
        e = { cause, reason, since, nextTryAt: now + delay, strings: 0, organizations: new Set() }
        this.entries.set(domain, e)
      }
      this.options.log.warn({ domain, cause, retryInMs: delay }, HeldOrganizations.why(cause, reason))
    } else if (cause === 'forbidden' && (e.cause === 'disconnected' || e.cause === 'unavailable')) {
      // A refusal is the more precise reason once a token was had at all, and says more than an
      // API that failed. (A token that could not be had during an outage does not: the token
      // endpoint may be down with the rest.)
      e.cause = cause
      e.reason = reason
    }
    return e
  }

  private static why(cause: HoldCause, reason: string): string {
    switch (cause) {
      case 'forbidden':
        return `the service refuses this organization's status updates (${reason}); its strings are held and tried again. Check that the app is still installed and that the connecting user may update string statuses`
      case 'unavailable':
        return `the service's API kept failing for this organization (${reason}); its strings are held and tried again until it answers. Check the service's status and the network to it`
      default:
        return `the organization has no usable token (${reason}); its strings are held until it is connected again at /oauth/start`
    }
  }

  /**
   * Back-off with jitter: 1 s, 2 s, 4 s, ... capped near a minute; for an organization whose API
   * kept failing, near UNAVAILABLE_MAX_DELAY_MS (an outage's end is found soon; a try is one
   * request per group).
   */
  private delay(failures: number, cause: HoldCause): number {
    const max = cause === 'unavailable' ? Math.min(this.maxDelayMs, UNAVAILABLE_MAX_DELAY_MS) : this.maxDelayMs
    const cap = Math.min(max, this.baseDelayMs * 2 ** Math.min(failures - 1, 20))
    return Math.round(cap / 2 + this.random() * (cap / 2))
  }

  /**
   * Strings of `organization` stamped with `domain` go under another domain now (its binding
   * changed while they waited): the domain no longer holds them. Once no organization it held
   * strings of is left, it leaves the list (held or being tried), so it neither waits for a token
   * that will not come nor shows strings that are not its own.
   */
  movedAway(domain: string, organization: string): void {
    const e = this.entries.get(domain)
    if (!e?.organizations.delete(organization) || e.organizations.size) return
    this.entries.delete(domain)
    this.failures.delete(domain)
    this.firstHeld.delete(domain)
    this.options.log.info({ domain, organization }, 'the held strings of this domain belong to an organization connected under another domain since; they go under that one')
  }

  /**
   * A status update for the organization went through: the next hold starts from a short wait and
   * a new `since`, and an organization being tried is no longer listed. One held now stays held
   * until its own try (a report sent before the hold may go through after it), and is listed with
   * a new `since` if that try is refused.
   */
  succeeded(domain: string): void {
    this.failures.delete(domain)
    this.firstHeld.delete(domain)
    if (this.entries.get(domain)?.nextTryAt === undefined) this.entries.delete(domain)
  }

  /** The backlog's counts, once per call of count(), byCause() or list() (none while nothing is listed). */
  private waitingNow(): ReadonlyMap<string, number> | undefined {
    return this.entries.size ? this.options.waiting?.() : undefined
  }

  /**
   * The strings shown for a listed organization: those it has waiting in the backlog, or those
   * held here since its last try if more (a hold the backlog's count has not caught up with yet:
   * with BullMQ it is read about once a second).
   */
  private static strings(waiting: ReadonlyMap<string, number> | undefined, domain: string, e: Entry): number {
    return Math.max(waiting?.get(domain) ?? 0, e.strings)
  }

  /** Strings held, for one organization or all listed (those being tried included). */
  count(domain?: string): number {
    const waiting = this.waitingNow()
    let n = 0
    for (const [d, e] of this.entries) if (domain === undefined || d === domain) n += HeldOrganizations.strings(waiting, d, e)
    return n
  }

  /** Strings and organizations listed, by cause (for the metrics). */
  byCause(): Record<HoldCause, { strings: number; organizations: number }> {
    const out: Record<HoldCause, { strings: number; organizations: number }> = { disconnected: { strings: 0, organizations: 0 }, forbidden: { strings: 0, organizations: 0 }, unavailable: { strings: 0, organizations: 0 } }
    const waiting = this.waitingNow()
    for (const [domain, e] of this.entries) {
      out[e.cause].strings += HeldOrganizations.strings(waiting, domain, e)
      out[e.cause].organizations++
    }
    return out
  }

  /** The organizations held now or being tried, for the operator; `nextTryAt` is undefined while a try is under way. */
  list(): HeldOrganizationView[] {
    const waiting = this.waitingNow()
    return [...this.entries].map(([domain, e]) => ({ domain, cause: e.cause, reason: e.reason, since: e.since, strings: HeldOrganizations.strings(waiting, domain, e), nextTryAt: e.nextTryAt }))
  }

  /**
   * Let go what is due: forbidden and unavailable organizations are simply tried again; disconnected ones once they
   * have a token. One let go stays listed, not held, until a status update for it goes through or
   * it is refused again; after a back-off cap (a minute) of neither it leaves the list (expire()):
   * its strings were dropped, or (with BullMQ) another instance took them and heard the answer.
   * Ticks may overlap: the tokens of disconnected ones are asked for each on its own, within
   * TOKEN_CHECK_LIMIT_MS, and the tick ends when those it asked for have answered or run out of time.
   */
  async tick(): Promise<void> {
    const checks: Array<Promise<void>> = []
    for (const [domain, e] of [...this.entries]) {
      // Changed by an earlier organization's release(): the next tick sees it as it is now.
      if (this.entries.get(domain) !== e) continue
      if (e.nextTryAt === undefined) {
        if (this.now() - (e.triedAt ?? 0) >= this.maxDelayMs) this.expire(domain)
        continue
      }
      // Due, and not still being checked (a check past its limit may not have ended).
      if (this.now() < e.nextTryAt || this.checking.has(domain)) continue
      if (e.cause === 'disconnected') checks.push(this.check(domain, e))
      else this.letGo(domain, e)
    }
    // Each on its own: one check that hangs costs the others nothing (each ends by its limit).
    await Promise.all(checks)
  }

  /** Let a disconnected organization go if it can get a token within the limit; else a failed try. */
  private async check(domain: string, e: Entry): Promise<void> {
    this.checking.add(domain)
    const answer = new Promise<boolean>((resolve) => resolve(this.options.canReport(domain, [...e.organizations])))
      .catch(() => false)
      .finally(() => this.checking.delete(domain))
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.checkLimitMs)
      timer.unref?.()
    })
    const ok = await Promise.race([answer, late]).finally(() => clearTimeout(timer))
    // Changed meanwhile (cleared for a shutdown, or gone and held anew): the next tick sees it as it is now.
    if (this.entries.get(domain) !== e || e.nextTryAt === undefined) return
    if (!ok) {
      const failures = (this.failures.get(domain) ?? 0) + 1
      this.failures.set(domain, failures)
      e.nextTryAt = this.now() + this.delay(failures, e.cause)
      return
    }
    this.letGo(domain, e)
  }

  /** Its strings go back to work: listed, no longer held, until it is reported for or refused. */
  private letGo(domain: string, e: Entry): void {
    const strings = HeldOrganizations.strings(this.options.waiting?.(), domain, e)
    e.nextTryAt = undefined
    e.triedAt = this.now()
    this.options.log.info({ domain, cause: e.cause, strings }, 'trying the held strings of the organization again')
    this.options.release(domain, strings)
  }

  /**
   * A try a minute old with no answer here leaves the list. With nothing of the organization
   * waiting either (with BullMQ: another instance took its strings and had them reported), its
   * since and back-off go too: a later hold is a new one.
   */
  private expire(domain: string): void {
    this.entries.delete(domain)
    if (this.options.waiting?.().get(domain)) return
    this.firstHeld.delete(domain)
    this.failures.delete(domain)
  }

  /** Forget the holds, for a shutdown: the strings stay in the journal and are replayed on the next start. */
  clear(): number {
    const n = this.count()
    this.entries.clear()
    this.firstHeld.clear()
    return n
  }
}

const jobOf = (d: Decision) => d.job
/** The distinct organization ids of jobs (one, almost always: a group is one domain's). */
function organizationsOf(jobs: readonly Job[]): string[] {
  const first = jobs[0]?.organizationId ?? ''
  let out: Set<string> | undefined
  for (const j of jobs) if (j.organizationId !== first) (out ??= new Set([first])).add(j.organizationId)
  return out ? [...out] : [first]
}
