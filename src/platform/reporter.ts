// Reports outputs: decisions are coalesced per (organization, project, step, language) into one
// PATCH of up to 500 operations, sent when a group is full or has waited `lingerMs`. What each
// answer of the service means for the strings (after the API client's own retries):
// - 2XX: reported.
// - 400 (or 413): something in the request is refused; it is split in halves until the bad strings
//   are isolated, so the others still go through. A string refused alone is `rejected`. A 400 for
//   strings of one output is probed first: one string of it alone, then another; both refused and
//   none accepted, the step at the service does not declare that output (an output added to a
//   pipeline after the app was installed): the rest of the group is `rejected` at once, with one
//   warning, and the output is remembered as refused at that step (organization, project, step:
//   every language of a step has its outputs) for REFUSED_OUTPUT_MS, so that a later group of it
//   costs one probe, not a bisection. A 2XX for it there forgets it (and sends the rest of a group
//   whose probes were out meanwhile). A probe answered otherwise (429, 5XX, 403, 404) is as any
//   one string's, and the rest share its answer without a request. A 413 is halved, no probe.
// - 404: the language is no longer among the step's (or the step is gone): the service no longer
//   waits for these strings there; the group is `dropped` once, whole, without splitting.
// - 403, or 401 after one refresh: the organization's token may not update statuses (for now): its
//   strings are `held`, never dropped, and tried again later.
// - no usable token (not connected, refresh refused, the token endpoint refusing or failing): `held` as well.
// - retries spent on 429, or one 5xx/timeout/network error (a status update is not sent again as it
//   was: it may have landed; the strings are checked with the service first): the API is unavailable for the organization (for
//   now): `held` too, and tried again by itself with back-off, never left for a restart. So is
//   a 2XX whose body is not JSON (the client tries it again as a network error), and any error
//   that is no answer of the service (the token store failing, say).
// - any other refusal (a 4XX with no rule of its own): `parked`, durably.
// A group sends at most one request per attempt unless the service answers 400 (or 413), or it holds
// an output remembered as refused at its step (one more: that output's probe).
import type { Decision } from '../protocol/decision.js'
import type { Logger } from '../util/logger.js'
import { ApiError, mayHaveApplied, type ApiClient } from './api-client.js'
import { isOrganizationUnavailable } from './token-provider.js'
import { TokenEndpointError } from './token-errors.js'

/**
 * Why an organization's strings are held: kept on disk, never dropped, until it can update
 * statuses again (queue/held-organizations.ts). `disconnected`: no usable token (never connected,
 * or the refresh was refused); `forbidden`: the service answered 403, or 401 after a refresh;
 * `unavailable`: its API kept failing (429, 5XX, timeouts, network) through the request's retries.
 * Unlike a parked string (a refusal with no rule: tried again only every PARKED_RETRY_MS and at a
 * start), a held one goes back to work as soon as its organization can be reported for again.
 */
export type HoldCause = 'disconnected' | 'forbidden' | 'unavailable'

/** An answer that says nothing about the request, only that the API could not take it now (retried; then held). */
export function isTransient(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500)
}

export interface ReporterHooks {
  /**
   * The status update of these decisions goes out now (after this resolves; a failure here fails
   * the update as an error that is no answer of the service would). From here on the service may
   * apply it, and a string may come back to the step before the answer does: an arrival of the
   * same revision is then new work, no longer a repeat (queue/dedupe.ts).
   */
  sending?(decisions: Decision[]): void | Promise<void>
  /** The service accepted these outputs. */
  reported(decisions: Decision[]): void | Promise<void>
  /**
   * Another copy of the string (a newer revision) was decided before this one's update went out:
   * this one is not sent, and leaves as superseded.
   */
  superseded(decision: Decision): void | Promise<void>
  /**
   * The service refused this one string's update (400 for it alone), or its output at the step
   * (`grouped`: one warning for the whole group said so already, not a line per string).
   */
  rejected(decision: Decision, reason: string, grouped?: boolean): void | Promise<void>
  /** The service no longer waits for these strings here (404): forget them, once. */
  dropped(decisions: Decision[], reason: string): void | Promise<void>
  /** Retries ran out, or a refusal with no rule of its own: keep the decisions aside, durably. */
  parked(decisions: Decision[], reason: string): void | Promise<void>
  /**
   * The organization can't update statuses for now: keep the decisions until it can.
   * `retryAfterMs`: the Retry-After of the answer that made the hold, if it had one. `mayHaveLanded`:
   * an update sent for them may have been applied all the same (an answer lost to a 5XX or a
   * timeout, on the last attempt or an earlier one): the service is asked first when they go.
   */
  held(decisions: Decision[], reason: string, cause: HoldCause, retryAfterMs: number | undefined, mayHaveLanded: boolean): void | Promise<void>
}

export interface ReporterOptions {
  api: ApiClient
  log: Logger
  lingerMs: number
  maxBatch?: number
  hooks: ReporterHooks
  /** Is this organization held now? Its decisions then go straight to `held`, with no request. */
  holding?(domain: string): HoldCause | undefined
  /** The clock of the memory of refused outputs (tests). */
  now?: () => number
}

/**
 * How long an output refused at a step is taken as not declared there. An operator who fixes the
 * step's outputs at the service (or reinstalls the app) waits at most this long, and each group
 * of the output sends one probe meanwhile: an accepted probe ends it at once.
 */
export const REFUSED_OUTPUT_MS = 10 * 60_000
/** Outputs remembered as refused, at most (the oldest goes first): a bound, not a cache to tune. */
export const REFUSED_OUTPUTS_KEPT = 1000
/** Strings of one output refused alone, none accepted, that show the step does not declare it. */
const PROBES = 2

interface Group {
  domain: string
  projectId: number
  stepId: number
  languageId: string
  decisions: Map<number, Decision>
  timer?: NodeJS.Timeout
}

type Verdict = { kind: 'split' } | { kind: 'drop' } | { kind: 'hold'; cause: HoldCause } | { kind: 'park' }

/** What a failed status update means for its strings (see the file's header). */
export function verdictOf(error: unknown): Verdict {
  if (isOrganizationUnavailable(error)) return { kind: 'hold', cause: 'disconnected' }
  // The token could not be refreshed. Failing (5XX, network) it is held above, as not connected
  // for now; refusing in a way that is no dead grant (a client secret it no longer takes, a bare
  // 400) it is too: no usable token until someone looks, and never parked.
  if (error instanceof TokenEndpointError) return { kind: 'hold', cause: 'disconnected' }
  // Anything else (the token store failing, say) says nothing about the strings: they are held
  // and tried again with back-off, never parked until a restart.
  // An error of the code itself (a TypeError, say) would fail every try alike: parked, as before.
  if (!(error instanceof ApiError)) return codeError(error) ? { kind: 'park' } : { kind: 'hold', cause: 'unavailable' }
  switch (error.status) {
    case 400:
    case 413:
      return { kind: 'split' }
    case 404:
      return { kind: 'drop' }
    case 401:
    case 403:
      return { kind: 'hold', cause: 'forbidden' }
    default:
      return isTransient(error) ? { kind: 'hold', cause: 'unavailable' } : { kind: 'park' }
  }
}

/** The service's answer as a reason for the hooks and the log. */
const reasonOf = (error: unknown): string =>
  error instanceof ApiError ? `${error.status}: ${error.body.slice(0, 300) || 'refused'}` : error instanceof Error ? error.message : String(error)

/** A refusal that may be about the output port (platform notes: 400 for a port the step does not declare); a 413 is about size. */
const portRefusal = (error: unknown): boolean => error instanceof ApiError && error.status === 400

/** A step's outputs are the same in every language: the memory of refused ones is per step, not per group. */
const outputKey = (group: Group, port: string): string => `${group.domain}|${group.projectId}|${group.stepId}|${port}`

const codeError = (error: unknown): boolean => error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || error instanceof SyntaxError

/** The updates under way for strings of `chunk`, if any (none in the common case: no array made). */
function earlierUpdates(flying: Map<number, Promise<void>>, chunk: Decision[]): Array<Promise<void>> | undefined {
  if (flying.size === 0) return undefined
  let out: Set<Promise<void>> | undefined
  for (const d of chunk) {
    const p = flying.get(d.job.stringId)
    if (p) (out ??= new Set()).add(p)
  }
  return out && [...out]
}

/**
 * One string's status change. Module-level, as every callback on a hot path: V8 holds a function's
 * optimized code only weakly once no closure of it is alive, so a callback made anew for each call
 * loses its code at each full GC (every half second under load) and is compiled again.
 */
const statusOp = (d: Decision) => ({ op: 'replace' as const, path: `/${d.job.stringId}/output`, value: d.port })

export class Reporter {
  private readonly groups = new Map<string, Group>()
  /**
   * Per group key, the strings whose update is under way (retries included), with its promise: a
   * later decision of one of them (a newer revision) goes only after it, so that the service
   * receives the newest output last, never an older one's retry after it.
   */
  private readonly flying = new Map<string, Map<number, Promise<void>>>()
  private readonly inFlight = new Set<Promise<void>>()
  /** `domain|project|step|output` -> until when the output is taken as not declared at that step. */
  private readonly refusedOutputs = new Map<string, number>()
  /**
   * `domain|project|step|output` -> the probes of it under way, each marked when a 2XX for that
   * output at that step (another group's, another language's) comes meanwhile: the step declares
   * it now (just updated), and refusals answered to probes sent before say nothing of the rest.
   */
  private readonly probing = new Map<string, Set<{ accepted: boolean }>>()
  private readonly maxBatch: number
  private readonly now: () => number
  patches = 0

  constructor(private readonly options: ReporterOptions) {
    this.maxBatch = options.maxBatch ?? 500
    this.now = options.now ?? Date.now
  }

  /** Decisions waiting to be sent. */
  get pending(): number {
    let n = 0
    for (const g of this.groups.values()) n += g.decisions.size
    return n
  }

  add(decision: Decision): void {
    const j = decision.job
    const cause = this.options.holding?.(j.domain)
    if (cause) {
      void Promise.resolve(this.options.hooks.held([decision], 'the organization is held', cause, undefined, false)).catch((error) => this.options.log.error({ err: error }, 'holding a decision failed'))
      return
    }
    const key = `${j.domain}|${j.projectId}|${j.stepId}|${j.languageId}`
    let group = this.groups.get(key)
    if (!group) {
      group = { domain: j.domain, projectId: j.projectId, stepId: j.stepId, languageId: j.languageId, decisions: new Map() }
      this.groups.set(key, group)
    }
    // A repeat of the same string in one PATCH would be the same string reported twice: one
    // decision per string goes, that of the newest revision (the latest of equal ones: a retry).
    // The other copy leaves as superseded, not forgotten: it holds its place in the queue until
    // it is accounted for.
    const before = group.decisions.get(j.stringId)
    if (before && before.job !== j) {
      const [kept, gone] = before.job.revision > j.revision ? [before, decision] : [decision, before]
      this.supersede(gone)
      if (kept === before) return
    }
    group.decisions.set(j.stringId, decision)
    if (group.decisions.size >= this.maxBatch) this.send(key, group)
    else if (!group.timer) group.timer = setTimeout(() => this.send(key, group), this.options.lingerMs)
  }

  private supersede(decision: Decision): void {
    void Promise.resolve(this.options.hooks.superseded(decision)).catch((error) => this.options.log.error({ err: error }, 'finishing a superseded decision failed'))
  }

  private send(key: string, group: Group): void {
    if (group.timer) clearTimeout(group.timer)
    this.groups.delete(key)
    const decisions = [...group.decisions.values()]
    let flying = this.flying.get(key)
    if (!flying) this.flying.set(key, (flying = new Map()))
    for (let i = 0; i < decisions.length; i += this.maxBatch) {
      const chunk = decisions.slice(i, i + this.maxBatch)
      const before = earlierUpdates(flying, chunk)
      if (!before) {
        this.track(key, flying, chunk, this.post(group, chunk))
        continue
      }
      // Only those with an earlier update under way wait for it; then they go as if decided now
      // (their organization may be held by then).
      const waiting = chunk.filter((d) => flying.has(d.job.stringId))
      const free = chunk.filter((d) => !flying.has(d.job.stringId))
      if (free.length) this.track(key, flying, free, this.post(group, free))
      const wait: Promise<void> = this.track(key, flying, waiting, Promise.allSettled(before).then(() => {
        // Their wait is over: it no longer stands for an update under way. Left in `flying`, it
        // would be found by the send its own re-adding makes (a group filled by them goes at
        // once, before this promise settles): they would wait for themselves, for ever, in
        // microtasks (the event loop starved), as a whole PATCH of outputs refused and sent
        // again as "" did.
        for (const d of waiting) if (flying.get(d.job.stringId) === wait) flying.delete(d.job.stringId)
        for (const d of waiting) this.add(d)
      }))
    }
  }

  /** An update under way for `decisions` (or their wait for an earlier one), until it settles. */
  private track(key: string, flying: Map<number, Promise<void>>, decisions: Decision[], work: Promise<void>): Promise<void> {
    const p = work.catch((error) => {
      this.options.log.error({ err: error }, 'reporter failed unexpectedly')
    })
    for (const d of decisions) flying.set(d.job.stringId, p)
    this.inFlight.add(p)
    void p.finally(() => {
      this.inFlight.delete(p)
      for (const d of decisions) if (flying.get(d.job.stringId) === p) flying.delete(d.job.stringId)
      if (flying.size === 0 && this.flying.get(key) === flying) this.flying.delete(key)
    })
    return p
  }

  /**
   * A group's first request. Decisions of an output refused at this step a short while ago go
   * behind one probe of theirs (see `probe`) rather than into the others' PATCH, which that output
   * would have the service refuse whole.
   */
  private post(group: Group, decisions: Decision[]): Promise<void> {
    if (this.refusedOutputs.size === 0) return this.deliver(group, decisions)
    const refused = new Map<string, Decision[]>()
    const others: Decision[] = []
    const known = new Map<string, boolean>()
    for (const d of decisions) {
      let isRefused = known.get(d.port)
      if (isRefused === undefined) known.set(d.port, (isRefused = this.isRefused(group, d.port)))
      if (!isRefused) others.push(d)
      else {
        const list = refused.get(d.port)
        if (list) list.push(d)
        else refused.set(d.port, [d])
      }
    }
    if (refused.size === 0) return this.deliver(group, decisions)
    const work = [...refused.values()].map((ds) => this.probe(group, ds, 1, (rest, accepted) => this.deliver(group, rest, accepted)))
    if (others.length) work.push(this.deliver(group, others))
    return Promise.all(work).then(() => undefined)
  }

  /**
   * `declared`: a string of this output was accepted at this step within this bisection, so a 400
   * for its strings is about the strings, and is only halved (no probe).
   */
  private async deliver(group: Group, decisions: Decision[], declared = false): Promise<void> {
    const failure = await this.patch(group, decisions)
    if (failure) return this.failed(group, decisions, failure.error, declared)
    await this.options.hooks.reported(decisions)
  }

  /** One PATCH: undefined when the service accepted it, else what failed it (wrapped: anything may be thrown). */
  private async patch(group: Group, decisions: Decision[]): Promise<{ error: unknown } | undefined> {
    const { api, hooks, log } = this.options
    const ops = decisions.map(statusOp)
    const where = { domain: group.domain, projectId: group.projectId, stepId: group.stepId, languageId: group.languageId }
    try {
      await hooks.sending?.(decisions)
      this.patches++
      await api.patchStatuses(group.domain, group.projectId, group.stepId, group.languageId, ops)
      log.debug({ ...where, organization: decisions[0]?.job.organizationId, strings: decisions.length }, 'statuses reported')
    } catch (error) {
      return { error }
    }
    if (this.refusedOutputs.size || this.probing.size) this.forget(group, decisions)
    return undefined
  }

  /**
   * A 400 (or 413) for several strings. The service refuses an output its step does not declare
   * (platform notes): decisions of several outputs are sent again one output at a time, so that a
   * refused output costs the others nothing. Those of one output are halved until the refused
   * string is alone (a 400 may also be about one string, or the size of the request: two refused
   * halves do not prove that their output is); after a 400, though, the output is probed first,
   * as halving a whole output that is refused costs 2n-1 requests.
   */
  private async split(group: Group, decisions: Decision[], error: unknown, declared: boolean): Promise<void> {
    const byPort = new Map<string, Decision[]>()
    for (const d of decisions) {
      const list = byPort.get(d.port)
      if (list) list.push(d)
      else byPort.set(d.port, [d])
    }
    if (byPort.size > 1) {
      await Promise.all([...byPort.values()].map((ds) => this.deliver(group, ds)))
      return
    }
    // "" is never an undeclared output (it parks the string as TODO): a 400 for it is about strings.
    const port = decisions[0]!.port
    if (declared || port === '' || !portRefusal(error)) return this.halve(group, decisions, declared)
    // Remembered as refused (by a group sent before the memory was made): one probe says it again.
    return this.probe(group, decisions, this.isRefused(group, port) ? 1 : PROBES, (rest, accepted) => this.halve(group, rest, accepted))
  }

  private async halve(group: Group, decisions: Decision[], declared: boolean): Promise<void> {
    if (decisions.length <= 1) {
      if (decisions.length) await this.deliver(group, decisions, declared)
      return
    }
    const half = Math.ceil(decisions.length / 2)
    await Promise.all([this.deliver(group, decisions.slice(0, half), declared), this.deliver(group, decisions.slice(half), declared)])
  }

  /**
   * Decisions of one output that the service may not declare at this step: up to `probes` of them
   * are sent alone, one after the other, while the rest wait. One accepted: the output is declared
   * (forgotten as refused), and `go` sends the rest (`accepted` true). Each refused with 400 is
   * `rejected`, as any string refused alone; all `probes` refused: the step does not declare the
   * output, and the rest are `rejected` at once, with one warning for all, and remembered. An
   * answer that says nothing of the output is the probe's own, as any one string's; then the rest
   * share it (see `unprobed`) or `go` sends them (`accepted` false).
   */
  private async probe(group: Group, decisions: Decision[], probes: number, go: (rest: Decision[], accepted: boolean) => Promise<void>): Promise<void> {
    const key = outputKey(group, decisions[0]!.port)
    const watch = { accepted: false }
    let watching = this.probing.get(key)
    if (!watching) this.probing.set(key, (watching = new Set()))
    watching.add(watch)
    try {
      return await this.probeWatched(group, decisions, probes, go, watch)
    } finally {
      watching.delete(watch)
      if (watching.size === 0 && this.probing.get(key) === watching) this.probing.delete(key)
    }
  }

  private async probeWatched(group: Group, decisions: Decision[], probes: number, go: (rest: Decision[], accepted: boolean) => Promise<void>, watch: { accepted: boolean }): Promise<void> {
    let reason = ''
    let i = 0
    for (; i < probes && i < decisions.length && !watch.accepted; i++) {
      const one = decisions.slice(i, i + 1)
      const failure = await this.patch(group, one)
      const rest = decisions.slice(i + 1)
      if (!failure) {
        await Promise.all([this.options.hooks.reported(one), rest.length ? go(rest, true) : undefined])
        return
      }
      await this.failed(group, one, failure.error, false)
      if (!portRefusal(failure.error)) return rest.length ? this.unprobed(group, rest, failure.error, go) : undefined
      reason = reasonOf(failure.error)
    }
    // Accepted at the step meanwhile: the rest go, as after an accepted probe of their own.
    if (watch.accepted) return i < decisions.length ? go(decisions.slice(i), true) : undefined
    this.remember(group, decisions[0]!.port)
    return this.undeclared(group, decisions[0]!.port, decisions.slice(i), i, reason)
  }

  /**
   * The rest of a probe answered with no refusal of its output. A hold (429 with its Retry-After,
   * a 5XX, 403, no token) is about the organization and a 404 about the language, not the string:
   * the rest share it, without a request of their own (sent, they went into the wait the service
   * asked for, the outage or the refusal just met, and after a 400 as halves, each probed again).
   * Never sent, they cannot have landed. Another answer (a refusal with no rule, 413) may be the
   * probe string's own: `go` sends them.
   */
  private async unprobed(group: Group, rest: Decision[], error: unknown, go: (rest: Decision[], accepted: boolean) => Promise<void>): Promise<void> {
    const kind = verdictOf(error).kind
    if (kind === 'hold' || kind === 'drop') return this.failed(group, rest, error, false, false)
    return go(rest, false)
  }

  /** The step does not declare `port`: one warning that says what to do, then each string `rejected`. */
  private async undeclared(group: Group, port: string, rest: Decision[], probed: number, reason: string): Promise<void> {
    const { hooks, log } = this.options
    log.warn(
      { domain: group.domain, organization: rest[0]?.job.organizationId, projectId: group.projectId, stepId: group.stepId, languageId: group.languageId, output: port, probed, strings: rest.length, status: 400 },
      `step ${group.stepId} at the service does not declare output "${port}" (${probed} of its strings refused alone, none accepted: ${reason}): update the app or the step's outputs at the service, or change the pipeline so that it does not route to "${port}". ${rest.length} more of its strings are rejected without a request of their own; the output is taken as refused at this step for ${REFUSED_OUTPUT_MS / 60_000} minutes`,
    )
    for (const d of rest) await hooks.rejected(d, reason, true)
  }

  private isRefused(group: Group, port: string): boolean {
    const key = outputKey(group, port)
    const until = this.refusedOutputs.get(key)
    if (until === undefined) return false
    if (until > this.now()) return true
    this.refusedOutputs.delete(key)
    return false
  }

  /** A 2XX for these outputs at this step: they are declared there (the step was updated, say), for its probes under way too. */
  private forget(group: Group, decisions: Decision[]): void {
    let last: string | undefined
    for (const d of decisions) {
      if (d.port === last) continue
      last = d.port
      const key = outputKey(group, d.port)
      this.refusedOutputs.delete(key)
      const watching = this.probing.get(key)
      if (watching) for (const w of watching) w.accepted = true
    }
  }

  private remember(group: Group, port: string): void {
    const key = outputKey(group, port)
    // Deleted first so that a refreshed entry is the newest in the Map's order, the last to go.
    this.refusedOutputs.delete(key)
    this.refusedOutputs.set(key, this.now() + REFUSED_OUTPUT_MS)
    if (this.refusedOutputs.size > REFUSED_OUTPUTS_KEPT) this.refusedOutputs.delete(this.refusedOutputs.keys().next().value!)
  }

  /** `sent`: false for decisions that share the answer to another's request (a probe's) without one of their own. */
  private async failed(group: Group, decisions: Decision[], error: unknown, declared: boolean, sent = true): Promise<void> {
    const { hooks, log } = this.options
    const where = { domain: group.domain, projectId: group.projectId, stepId: group.stepId, languageId: group.languageId }
    const reason = reasonOf(error)
    const verdict = verdictOf(error)
    switch (verdict.kind) {
      case 'split': {
        if (decisions.length === 1) {
          const d = decisions[0]!
          log.warn({ ...where, stringId: d.job.stringId, delivery: d.job.batchId, organization: d.job.organizationId, output: d.port, status: (error as ApiError).status }, `status update refused: ${reason}`)
          return hooks.rejected(d, reason)
        }
        return this.split(group, decisions, error, declared)
      }
      case 'drop':
        log.warn({ ...where, strings: decisions.length }, `the service no longer waits for these strings at this step and language (${reason}); they are dropped`)
        return hooks.dropped(decisions, reason)
      case 'hold':
        // The update may have landed when an attempt's answer was lost (a 5XX, a timeout, the
        // network), whatever the last one said: held as unavailable after those, or refused (403,
        // no token for the next attempt) after one. Answered 429 every time, it did not land: its
        // decided output is kept (no recheck, no second pipeline run).
        return hooks.held(decisions, reason, verdict.cause, (error as ApiError).retryAfterMs, sent && mayHaveApplied(error))
      case 'park': {
        // The whole message (method, path, status, body): it is what an operator reads later.
        const why = error instanceof Error ? error.message : reason
        log.error({ ...where, strings: decisions.length }, `status update failed, strings parked: ${why}`)
        return hooks.parked(decisions, why)
      }
      default: {
        const never: never = verdict
        throw new Error(`unknown verdict ${String(never)}`)
      }
    }
  }

  /** Send everything pending now and wait for every PATCH under way. */
  async flush(): Promise<void> {
    // Decisions that waited for an earlier update of their string come back to a group: sent too.
    while (this.groups.size || this.inFlight.size) {
      for (const [key, group] of [...this.groups]) this.send(key, group)
      if (this.inFlight.size) await Promise.allSettled([...this.inFlight])
    }
  }
}
