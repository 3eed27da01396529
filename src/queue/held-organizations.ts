// Organizations that cannot update statuses now: not connected (no usable token), or forbidden
// (the service answered 403, or 401 after a refresh). Their strings are held, never dropped: they
// wait on disk, in the backlog (backlog.ts), and only counts are kept here. The organization is
// tried again with back-off (capped near a minute) until it can be reported for again; then its
// line of the backlog is served again (decisions held after their pipeline ran go straight back
// to the reporter, so no check runs twice).
//
// An organization let go for a try stays listed for the operator (its cause, reason and the time
// it was first held) until a status update for it goes through, but is not held meanwhile:
// `cause()` and `retryAt()` say nothing of it, so its strings are really tried. Refused again, it
// is held again with the same `since`.
import type { HoldCause } from '../platform/reporter.js'
import type { Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import type { Job } from '../protocol/job.js'

export interface HeldOrganizationView {
  domain: string
  cause: HoldCause
  reason: string
  /** When its strings were first held (ms), kept across tries until a status update for it goes through. */
  since: number
  /**
   * Its strings waiting in the backlog (on disk; in Redis with QUEUE=bullmq) when the backlog
   * knows them (`waiting`), else the strings that went through the hold since it was listed.
   */
  strings: number
  /** When they will be tried again (ms); undefined while a try is under way (let go, neither reported for nor refused yet). */
  nextTryAt?: number
}

export interface HeldOrganizationsOptions {
  log: Logger
  /** Can the organization get a token now? Asked before strings held for `disconnected` are let go. */
  canReport(domain: string): Promise<boolean>
  /** The organization's held strings may go back to work (its line of the backlog is served again). */
  release(domain: string, strings: number): void
  /**
   * The organization's strings waiting in the backlog (on disk; in Redis with QUEUE=bullmq), if
   * known: the count shown for it. Unknown (or no callback): the strings that went through the hold.
   */
  waiting?(domain: string): number | undefined
  now?(): number
  random?(): number
  baseDelayMs?: number
  maxDelayMs?: number
}

interface Entry {
  cause: HoldCause
  reason: string
  since: number
  /** When it is tried again (ms); undefined while a try is under way. */
  nextTryAt?: number
  /** When it was let go for the try under way (ms). */
  triedAt?: number
  /** Strings that went through the hold since it was listed (not reset by a try). */
  strings: number
}

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
  private ticking = false

  constructor(private readonly options: HeldOrganizationsOptions) {
    this.now = options.now ?? Date.now
    this.random = options.random ?? Math.random
    this.baseDelayMs = options.baseDelayMs ?? 1000
    this.maxDelayMs = options.maxDelayMs ?? 60_000
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

  /** Count `strings` of the organization as held (they wait on disk) and say why, once. */
  hold(domain: string, strings: number, reason: string, cause: HoldCause = 'disconnected'): void {
    this.entry(domain, reason, cause).strings += strings
  }

  holdJobs(jobs: Job[], reason: string, cause: HoldCause = 'disconnected'): void {
    if (jobs.length) this.hold(jobs[0]!.domain, jobs.length, reason, cause)
  }

  holdDecisions(decisions: Decision[], reason: string, cause: HoldCause): void {
    if (decisions.length) this.hold(decisions[0]!.job.domain, decisions.length, reason, cause)
  }

  private entry(domain: string, reason: string, cause: HoldCause): Entry {
    let e = this.entries.get(domain)
    if (!e || e.nextTryAt === undefined) {
      const failures = (this.failures.get(domain) ?? 0) + 1
      this.failures.set(domain, failures)
      const delay = this.delay(failures)
      const now = this.now()
      if (!this.firstHeld.has(domain)) this.firstHeld.set(domain, e ? e.since : now)
      if (e) {
        // Refused again while being tried: held again, with the cause of this refusal; its since and count stay.
        Object.assign(e, { cause, reason, nextTryAt: now + delay, triedAt: undefined })
      } else {
        e = { cause, reason, since: this.firstHeld.get(domain)!, nextTryAt: now + delay, strings: 0 }
        this.entries.set(domain, e)
      }
      this.options.log.warn(
        { domain, cause, retryInMs: delay },
        cause === 'forbidden'
          ? `the service refuses this organization's status updates (${reason}); its strings are held and tried again. Check that the app is still installed and that the connecting user may update string statuses`
          : `the organization has no usable token (${reason}); its strings are held until it is connected again at /oauth/start`,
      )
    } else if (cause === 'forbidden' && e.cause === 'disconnected') {
      // A refusal is the more precise reason once a token was had at all.
      e.cause = cause
      e.reason = reason
    }
    return e
  }

  /** Back-off with jitter: 1 s, 2 s, 4 s, ... capped near a minute. */
  private delay(failures: number): number {
    const cap = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(failures - 1, 20))
    return Math.round(cap / 2 + this.random() * (cap / 2))
  }

  /**
   * A status update for the organization went through: the next hold starts from a short wait and
   * a new `since`, and an organization being tried is no longer listed. One held now stays held
   * until its own try (a report sent before the hold may go through after it).
   */
  succeeded(domain: string): void {
    this.failures.delete(domain)
    this.firstHeld.delete(domain)
    if (this.entries.get(domain)?.nextTryAt === undefined) this.entries.delete(domain)
  }

  /** The strings shown for a listed organization: its waiting strings if the backlog knows them, else those counted through the hold. */
  private strings(domain: string, e: Entry): number {
    return this.options.waiting?.(domain) ?? e.strings
  }

  /** Strings held, for one organization or all listed (those being tried included). */
  count(domain?: string): number {
    let n = 0
    for (const [d, e] of this.entries) if (domain === undefined || d === domain) n += this.strings(d, e)
    return n
  }

  /** Strings and organizations listed, by cause (for the metrics). */
  byCause(): Record<HoldCause, { strings: number; organizations: number }> {
    const out: Record<HoldCause, { strings: number; organizations: number }> = { disconnected: { strings: 0, organizations: 0 }, forbidden: { strings: 0, organizations: 0 } }
    for (const [domain, e] of this.entries) {
      out[e.cause].strings += this.strings(domain, e)
      out[e.cause].organizations++
    }
    return out
  }

  /** The organizations held now or being tried, for the operator; `nextTryAt` is undefined while a try is under way. */
  list(): HeldOrganizationView[] {
    return [...this.entries].map(([domain, e]) => ({ domain, cause: e.cause, reason: e.reason, since: e.since, strings: this.strings(domain, e), nextTryAt: e.nextTryAt }))
  }

  /**
   * Let go what is due: forbidden organizations are simply tried again; disconnected ones once they
   * have a token. One let go stays listed, not held, until a status update for it goes through or
   * it is refused again; after a back-off cap (a minute) of neither, with no strings of it known
   * to wait (all dropped, say), it leaves the list.
   */
  async tick(): Promise<void> {
    if (this.ticking) return
    this.ticking = true
    try {
      for (const [domain, e] of [...this.entries]) {
        if (e.nextTryAt === undefined) {
          if (this.now() - (e.triedAt ?? 0) >= this.maxDelayMs && !this.options.waiting?.(domain)) this.entries.delete(domain)
          continue
        }
        if (this.now() < e.nextTryAt) continue
        if (e.cause === 'disconnected' && !(await this.options.canReport(domain).catch(() => false))) {
          const failures = (this.failures.get(domain) ?? 0) + 1
          this.failures.set(domain, failures)
          e.nextTryAt = this.now() + this.delay(failures)
          continue
        }
        // Cleared meanwhile (a shutdown): nothing to let go.
        if (this.entries.get(domain) !== e) continue
        const strings = this.strings(domain, e)
        e.nextTryAt = undefined
        e.triedAt = this.now()
        this.options.log.info({ domain, cause: e.cause, strings }, 'trying the held strings of the organization again')
        this.options.release(domain, strings)
      }
    } finally {
      this.ticking = false
    }
  }

  /** Forget the holds, for a shutdown: the strings stay in the journal and are replayed on the next start. */
  clear(): number {
    const n = this.count()
    this.entries.clear()
    this.firstHeld.clear()
    return n
  }
}
