// Organizations that cannot update statuses now: not connected (no usable token), or forbidden
// (the service answered 403, or 401 after a refresh). Their strings are held, never dropped: they
// wait on disk, in the backlog (backlog.ts), and only counts are kept here. The organization is
// tried again with back-off (capped near a minute) until it can be reported for again; then its
// line of the backlog is served again (decisions held after their pipeline ran go straight back
// to the reporter, so no check runs twice).
import type { HoldCause } from '../platform/reporter.js'
import type { Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import type { Job } from '../protocol/job.js'

export interface HeldOrganizationView {
  domain: string
  cause: HoldCause
  reason: string
  /** When its strings were first held (ms). */
  since: number
  strings: number
  /** When they will be tried again (ms). */
  nextTryAt: number
}

export interface HeldOrganizationsOptions {
  log: Logger
  /** Can the organization get a token now? Asked before strings held for `disconnected` are let go. */
  canReport(domain: string): Promise<boolean>
  /** The organization's held strings may go back to work (its line of the backlog is served again). */
  release(domain: string, strings: number): void
  now?(): number
  random?(): number
  baseDelayMs?: number
  maxDelayMs?: number
}

interface Entry {
  cause: HoldCause
  reason: string
  since: number
  nextTryAt: number
  strings: number
}

export class HeldOrganizations {
  private readonly entries = new Map<string, Entry>()
  /** Failed tries in a row per organization; forgotten when a status update goes through. */
  private readonly failures = new Map<string, number>()
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

  /** Why the organization's strings are held now, if they are. */
  cause(domain: string): HoldCause | undefined {
    return this.entries.get(domain)?.cause
  }

  /** When the organization's held strings are tried again (ms), if it is held. */
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
    if (!e) {
      const failures = (this.failures.get(domain) ?? 0) + 1
      this.failures.set(domain, failures)
      const delay = this.delay(failures)
      e = { cause, reason, since: this.now(), nextTryAt: this.now() + delay, strings: 0 }
      this.entries.set(domain, e)
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

  /** A status update for the organization went through: the next hold starts from a short wait. */
  succeeded(domain: string): void {
    this.failures.delete(domain)
  }

  /** Strings held, for one organization or all. */
  count(domain?: string): number {
    if (domain !== undefined) {
      const e = this.entries.get(domain)
      return e ? e.strings : 0
    }
    let n = 0
    for (const e of this.entries.values()) n += e.strings
    return n
  }

  /** Strings and organizations held, by cause (for the metrics). */
  byCause(): Record<HoldCause, { strings: number; organizations: number }> {
    const out: Record<HoldCause, { strings: number; organizations: number }> = { disconnected: { strings: 0, organizations: 0 }, forbidden: { strings: 0, organizations: 0 } }
    for (const e of this.entries.values()) {
      out[e.cause].strings += e.strings
      out[e.cause].organizations++
    }
    return out
  }

  list(): HeldOrganizationView[] {
    return [...this.entries].map(([domain, e]) => ({ domain, cause: e.cause, reason: e.reason, since: e.since, strings: e.strings, nextTryAt: e.nextTryAt }))
  }

  /** Let go what is due: forbidden organizations are simply tried again; disconnected ones once they have a token. */
  async tick(): Promise<void> {
    if (this.ticking) return
    this.ticking = true
    try {
      for (const [domain, e] of [...this.entries]) {
        if (this.now() < e.nextTryAt) continue
        if (e.cause === 'disconnected' && !(await this.options.canReport(domain).catch(() => false))) {
          const failures = (this.failures.get(domain) ?? 0) + 1
          this.failures.set(domain, failures)
          e.nextTryAt = this.now() + this.delay(failures)
          continue
        }
        this.entries.delete(domain)
        this.options.log.info({ domain, cause: e.cause, strings: e.strings }, 'trying the held strings of the organization again')
        this.options.release(domain, e.strings)
      }
    } finally {
      this.ticking = false
    }
  }

  /** Forget the holds, for a shutdown: the strings stay in the journal and are replayed on the next start. */
  clear(): number {
    const n = this.count()
    this.entries.clear()
    return n
  }
}
