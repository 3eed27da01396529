// Running a compiled pipeline over a batch of strings: checks in order, each over the strings its
// `if` selects; batching plugins once per run; a plugin that throws, rejects or hangs becomes an
// `engine` finding (src/engine/engine-findings.ts has their codes), and `on-error` decides where
// that string goes. Routing: first match wins.
import type { Condition, EvalState } from './conditions.js'
import { ENGINE_CHECK, engineFinding, type FailureCode } from './engine-findings.js'
import { interpolateSettings } from './interpolate.js'
import { resolvePluginOptions, thrownText } from './instantiate-plugin.js'
import type { Finding, FindingInput, Item, PluginContext, PluginDefinition, PluginInstance, Severity, Span } from './types.js'

export const DEFAULT_TIMEOUT_MS = 30_000
/**
 * Longest text (source, translation or plural form, in UTF-16 code units) a check reads unless
 * the pipeline says otherwise. Checks are linear, but they run on the main thread: a longer text
 * gets a finding "too long to check" instead of holding up every other string.
 */
export const DEFAULT_MAX_TEXT_LENGTH = 50_000
/**
 * Findings of one check kept per string; the rest are counted (routing and conditions see every
 * one) and summed up in one `more-findings` finding. A translation of 49,000 `)` made 49,000
 * bracket findings, 8 MB of JSON for one string to hand between threads, log and quote (issue 17).
 */
export const MAX_FINDINGS_PER_CHECK = 20

export interface CompiledCheck {
  id: string
  /** Index in EvalState.byCheck. */
  index: number
  plugin: string
  definition: PluginDefinition
  /** Options as written (may hold ${settings.x}); undefined when `fixed` is set. */
  options: unknown
  /** The instance when the options take no setting. */
  fixed?: PluginInstance
  /** Instances by resolved options (JSON), when the options take settings. */
  bySettings: Map<string, Promise<PluginInstance>>
  context: PluginContext
  severity?: Severity
  condition?: Condition
  timeoutMs: number
  /** Longest text the check reads (DEFAULT_MAX_TEXT_LENGTH when not set); 0: no limit. */
  maxTextLength?: number
  needsTranslation: boolean
}

export interface CompiledRoute { condition?: Condition; output: string | null; port: string }

export type OnError = { kind: 'park' } | { kind: 'retry' } | { kind: 'output'; output: string; port: string }

export interface RunResult {
  id: number
  /** Output name; null when parked. */
  output: string | null
  /** The value for the status PATCH: the output's port, '' when parked. */
  port: string
  findings: Finding[]
  /** Set when a plugin failed and on-error is `retry`: run the string again later. */
  retry?: boolean
}

interface State extends EvalState {
  findings: Finding[]
  failed: boolean
  /** Index of the item in the run. */
  at: number
  /** Length of its longest text (source, translation, plural forms), measured at its first check. */
  longest?: number
}

/**
 * Told which string and check run next: the item's index in the run (-1: several at once, a
 * batching check or the async tail of a check) and the check's index (-1: the engine itself). The
 * pipeline pool's watchdog uses it to stop a runaway check and name its string.
 */
export type Progress = (item: number, check: number) => void

/** One string's state between checks, as it can cross threads. */
export interface SavedState {
  sev: number[]
  byCheck: number[]
  findings: Finding[]
  failed: boolean
}

/**
 * Where a run stands after its first `next` checks: each string's state, in the run's order. The
 * pipeline pool keeps the latest one a thread sends; when it stops a runaway check it runs the
 * other strings on from there instead of from the first check.
 */
export interface Checkpoint {
  next: number
  states: SavedState[]
}

export interface RunMore {
  /** Start after `next` checks, from these states (one per item, in order). */
  resume?: Checkpoint
  /** Called after each check with how many are done and a way to copy the states (only if asked). */
  checkpoint?(next: number, save: () => Checkpoint): void
}

const SEV_INDEX: Record<Severity, number> = { error: 0, warning: 1, info: 2 }

/** The indexes of the `n` most severe findings (errors, then warnings, then infos; earlier first on a tie). */
function mostSevere(severities: Severity[], n: number): Set<number> {
  const order = severities.map((_, k) => k).sort((a, b) => SEV_INDEX[severities[a]!] - SEV_INDEX[severities[b]!] || a - b)
  return new Set(order.slice(0, n))
}

/**
 * A finding as plain data, whatever the plugin put in it: only fields of the types the API names
 * are kept (a `check` that is no text is the check's id; a `span` without numeric ends is left
 * out, as is a `suggestion` that is no text), copied rather than shared. A function or a symbol
 * left in a field could not cross from a pipeline thread: the whole run failed, every string of it.
 */
function findingOf(f: FindingInput, checkId: string, severity: Severity): Finding {
  const finding: Finding = { check: typeof f.check === 'string' && f.check !== '' ? f.check : checkId, severity, message: f.message }
  if (typeof f.code === 'string') finding.code = f.code
  const span = f.span as Partial<Span> | undefined
  if (span && typeof span === 'object' && typeof span.start === 'number' && typeof span.end === 'number') {
    finding.span = { start: span.start, end: span.end }
    if (span.in === 'source' || span.in === 'translation') finding.span.in = span.in
  }
  if (typeof f.suggestion === 'string') finding.suggestion = f.suggestion
  return finding
}

/** Why a check failed: the finding's code and the end of its message. */
interface Failure { code: FailureCode; error: string }

/** Await promises for at most `ms`; those still pending then are reported as timed out. */
export async function settleWithin<T>(promises: Array<Promise<T>>, ms: number): Promise<Array<{ value: T } | Failure>> {
  const results: Array<{ value: T } | Failure | undefined> = Array.from({ length: promises.length }, () => undefined)
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<void>((resolve) => { timer = setTimeout(resolve, ms) })
  const all = Promise.all(promises.map((p, i) => p.then(
    (value) => { results[i] = { value } },
    (e: unknown) => { results[i] = { code: 'plugin-threw', error: thrownText(e) } },
  )))
  try {
    await Promise.race([all, deadline])
  } finally {
    clearTimeout(timer)
  }
  return results.map((r) => r ?? { code: 'plugin-timed-out', error: `timed out after ${ms} ms` })
}

/** Instances whose create() has ended, by its promise: a run does not wait on those again. */
const STARTED = new WeakMap<Promise<PluginInstance>, PluginInstance>()
/** create()s that timed out, by promise: until when runs fail at once instead of waiting again. */
const STUCK = new WeakMap<Promise<PluginInstance>, number>()
/** How long runs fail at once after a create() timed out, before one is tried again (ms). */
const STUCK_RETRY_MS = 60_000

/** Freeze a value and what it holds (once: a frozen value is taken as done). */
function freezeDeep(v: unknown): void {
  if (!v || typeof v !== 'object' || Object.isFrozen(v)) return
  Object.freeze(v)
  for (const k of Object.keys(v)) freezeDeep((v as Record<string, unknown>)[k])
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return !!v && typeof (v as { then?: unknown }).then === 'function'
}

export class PipelineRunner {
  constructor(
    private readonly checks: CompiledCheck[],
    private readonly routes: CompiledRoute[],
    private readonly onError: OnError,
  ) {}

  /**
   * The check's instance for these settings (made once per distinct options). A create() that
   * fails is forgotten, so the next run tries again (a failure may be passing: a network call).
   */
  instanceFor(check: CompiledCheck, settings: Record<string, unknown>): Promise<PluginInstance> {
    if (check.fixed) return Promise.resolve(check.fixed)
    let resolved: unknown
    try {
      resolved = resolvePluginOptions(check.definition, interpolateSettings(check.options, settings))
    } catch (e) {
      return Promise.reject(e)
    }
    const key = JSON.stringify(resolved)
    let p = check.bySettings.get(key)
    if (!p) {
      const made = Promise.resolve().then(() => check.definition.create(resolved as never, check.context))
      made.then(
        (instance) => void STARTED.set(made, instance),
        () => {
          if (check.bySettings.get(key) === made) check.bySettings.delete(key)
        },
      )
      check.bySettings.set(key, (p = made))
    }
    return p
  }

  /**
   * The instance, waited for at most the check's timeout: a create() that never ends must not
   * hold the run (nor, its promise kept, every later run with those settings) for ever.
   */
  private async started(check: CompiledCheck, settings: Record<string, unknown>): Promise<{ value: PluginInstance } | Failure> {
    if (check.fixed) return { value: check.fixed }
    // The same promise for the same options (cached): once it has ended, no wait and no timer.
    let p = this.instanceFor(check, settings)
    const ready = STARTED.get(p)
    if (ready) return { value: ready }
    const stuck = STUCK.get(p)
    if (stuck !== undefined) {
      // It timed out before: runs fail at once for a while, then a new create() is tried (the
      // late one is closed if it ever ends).
      if (Date.now() < stuck) return { code: 'plugin-timed-out', error: `timed out after ${check.timeoutMs} ms` }
      for (const [key, value] of check.bySettings) if (value === p) check.bySettings.delete(key)
      void p.then((instance) => instance?.close?.(), () => undefined).catch(() => undefined)
      p = this.instanceFor(check, settings)
    }
    const r = (await settleWithin([p], check.timeoutMs))[0]!
    if ('value' in r) STARTED.set(p, r.value)
    else if (r.code === 'plugin-timed-out') STUCK.set(p, Date.now() + Math.max(STUCK_RETRY_MS, check.timeoutMs))
    return r
  }

  async run(items: Item[], signal?: AbortSignal, progress?: Progress, more?: RunMore): Promise<RunResult[]> {
    const n = this.checks.length + 1 // + the engine's own findings
    const resume = more?.resume && more.resume.states.length === items.length && more.resume.next <= this.checks.length ? more.resume : undefined
    // Loops over a run's strings stay in the engine's methods, not in callbacks made for each run:
    // V8 holds a function's optimized code only weakly once no closure of it is alive, so such a
    // callback is compiled again after each full GC.
    const states: State[] = []
    for (let at = 0; at < items.length; at++) {
      const item = items[at]!
      // What the run's strings share (their step's settings, their languages) is read-only to the
      // checks: a plugin that wrote into it changed every later check and route of the other
      // strings (and the options of the checks after it); now the write throws, on its own string.
      freezeDeep(item.settings)
      freezeDeep(item.sourceLanguage)
      freezeDeep(item.targetLanguage)
      const saved = resume?.states[at]
      if (saved && saved.byCheck.length === n * 3) states.push({ item, sev: Int32Array.from(saved.sev), byCheck: Int32Array.from(saved.byCheck), findings: saved.findings, failed: saved.failed, at })
      else states.push({ item, sev: new Int32Array(3), byCheck: new Int32Array(n * 3), findings: [], failed: false, at })
    }
    const settings = items[0]?.settings ?? {}
    const save = (next: number) => (): Checkpoint => ({ next, states: states.map((s) => ({ sev: Array.from(s.sev), byCheck: Array.from(s.byCheck), findings: s.findings.slice(), failed: s.failed })) })
    for (let c = resume?.next ?? 0; c < this.checks.length; c++) {
      await this.runCheck(this.checks[c]!, states, settings, signal, progress)
      more?.checkpoint?.(c + 1, save(c + 1))
    }
    progress?.(-1, -1)
    const results: RunResult[] = []
    for (const s of states) results.push(this.route(s))
    return results
  }

  private async runCheck(check: CompiledCheck, states: State[], settings: Record<string, unknown>, signal?: AbortSignal, progress?: Progress): Promise<void> {
    signal?.throwIfAborted()
    const active: State[] = []
    for (const s of states) {
      if (s.failed) continue
      if (check.needsTranslation && s.item.translation === undefined) continue
      if (check.condition && !check.condition(s)) continue
      const tooLong = this.tooLong(check, s)
      if (tooLong) this.apply(s, check, [tooLong])
      else active.push(s)
    }
    if (active.length === 0) return
    progress?.(-1, check.index)
    const started = await this.started(check, settings)
    if (!('value' in started)) {
      const why = started.code === 'plugin-timed-out' ? `create() did not finish within ${check.timeoutMs} ms` : started.error
      for (const s of active) this.fail(s, check, 'plugin-not-started', `could not start with these settings: ${why}`)
      return
    }
    const instance = started.value
    if (instance.checkBatch) await this.runBatch(check, instance, active, progress)
    else if (instance.check) await this.runEach(check, instance, active, progress)
    else for (const s of active) this.fail(s, check, 'plugin-bad-result', 'has neither check() nor checkBatch()')
  }

  /**
   * The outcome of a string whose check was stopped (the pool's time budget): an engine finding
   * "check timed out" (`time-budget-exceeded`), routed by `on-error` exactly like a check that threw.
   */
  timedOut(id: number, checkIndex: number, budgetMs: number): RunResult {
    const n = this.checks.length + 1
    const s: State = { item: { id } as Item, sev: new Int32Array(3), byCheck: new Int32Array(n * 3), findings: [], failed: false, at: -1 }
    const why = `check timed out: still running after ${budgetMs} ms (CHECK_TIME_BUDGET_MS); the thread running it was stopped`
    this.fail(s, this.checks[checkIndex], 'time-budget-exceeded', why, false)
    return this.route(s)
  }

  /**
   * The outcome of a string not run because its step's saved settings do not pass the pipeline's
   * settings schema (`settings-invalid`), routed by `on-error` like a check that failed: it is
   * never checked with settings nobody chose for the step.
   */
  settingsInvalid(id: number, errors: string[]): RunResult {
    const n = this.checks.length + 1
    const s: State = { item: { id } as Item, sev: new Int32Array(3), byCheck: new Int32Array(n * 3), findings: [], failed: false, at: -1 }
    this.fail(s, undefined, 'settings-invalid', errors.join('; '), false)
    return this.route(s)
  }

  private async runBatch(check: CompiledCheck, instance: PluginInstance, active: State[], progress?: Progress): Promise<void> {
    progress?.(active.length === 1 ? active[0]!.at : -1, check.index)
    let p: Promise<Array<FindingInput[] | Error>>
    try {
      p = Promise.resolve(instance.checkBatch!(active.map((s) => s.item)))
    } catch (e) {
      p = Promise.reject(e)
    }
    const r = (await settleWithin([p], check.timeoutMs))[0]!
    if ('error' in r) {
      for (const s of active) this.fail(s, check, r.code, r.error)
      return
    }
    let batch: unknown[]
    try {
      // Copied once: a list whose reads throw (a revoked proxy, a getter) fails the batch, not the run.
      const value = r.value as unknown
      batch = Array.isArray(value) ? Array.from(value as unknown[]) : (value as unknown[])
    } catch (e) {
      for (const s of active) this.fail(s, check, 'plugin-bad-result', `checkBatch() returned a list that could not be read: ${thrownText(e)}`)
      return
    }
    if (!Array.isArray(batch) || batch.length !== active.length) {
      for (const s of active) this.fail(s, check, 'plugin-bad-result', `checkBatch() returned ${Array.isArray(batch) ? `${batch.length} results for ${active.length} strings` : 'no array'}`)
      return
    }
    for (let i = 0; i < active.length; i++) {
      // An Error in a string's place fails that string alone (its batch's others stand), as a
      // check() that throws fails its own string.
      if (batch[i] instanceof Error) this.fail(active[i]!, check, 'plugin-threw', thrownText(batch[i]))
      else this.apply(active[i]!, check, batch[i])
    }
  }

  private async runEach(check: CompiledCheck, instance: PluginInstance, active: State[], progress?: Progress): Promise<void> {
    let pending: Array<Promise<unknown>> | undefined
    let pendingStates: State[] | undefined
    for (const s of active) {
      let r: unknown
      let later: boolean
      progress?.(s.at, check.index)
      try {
        r = instance.check!(s.item)
        // Inside the try: reading `then` of what came back may throw too (a getter, a revoked proxy).
        later = isThenable(r)
      } catch (e) {
        this.fail(s, check, 'plugin-threw', thrownText(e))
        continue
      }
      if (later) {
        (pending ??= []).push(Promise.resolve(r));
        (pendingStates ??= []).push(s)
      } else {
        this.apply(s, check, r)
      }
    }
    if (!pending) return
    // What runs from here on (the checks' async tails) belongs to no one string.
    progress?.(pending.length === 1 ? pendingStates![0]!.at : -1, check.index)
    const results = await settleWithin(pending, check.timeoutMs)
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!
      const s = pendingStates![i]!
      if ('error' in r) this.fail(s, check, r.code, r.error)
      else this.apply(s, check, r.value)
    }
  }

  private apply(s: State, check: CompiledCheck, raw: unknown): void {
    // What a plugin returns is read here, on the engine's side: a getter that throws or a revoked
    // proxy must fail its own string, not throw out of the run (every string of it failed).
    const listed = s.findings.length
    let bad = -1
    try {
      if (!Array.isArray(raw)) {
        this.fail(s, check, 'plugin-bad-result', `returned ${raw === undefined ? 'nothing' : typeof raw} instead of an array of findings`)
        return
      }
      const list = raw as FindingInput[]
      if (list.length === 0) return
      for (let k = 0; k < list.length && bad === -1; k++) if (!list[k] || typeof list[k]!.message !== 'string') bad = k
      // The findings before a malformed one stand, as they came; the check then failed.
      this.add(s, check, bad === -1 ? list : list.slice(0, bad))
    } catch (e) {
      s.findings.length = listed
      this.fail(s, check, 'plugin-bad-result', `returned findings that could not be read: ${thrownText(e)}`)
      return
    }
    if (bad !== -1) this.fail(s, check, 'plugin-bad-result', 'returned a finding without a message')
  }

  /**
   * Count every finding (routing and conditions see them all); list the most severe
   * MAX_FINDINGS_PER_CHECK, in the order given, so that an error is never left out for warnings
   * that came before it, and one `more-findings` finding for the rest.
   */
  private add(s: State, check: CompiledCheck, list: FindingInput[]): void {
    // Most checks find nothing in most strings: nothing to count, and nothing allocated for it.
    if (list.length === 0) return
    const severities: Severity[] = []
    for (const f of list) severities.push(check.severity ?? (f.severity && Object.hasOwn(SEV_INDEX, f.severity) ? f.severity : 'error'))
    const keep = list.length <= MAX_FINDINGS_PER_CHECK ? undefined : mostSevere(severities, MAX_FINDINGS_PER_CHECK)
    const dropped = [0, 0, 0]
    for (let k = 0; k < list.length; k++) {
      const f = list[k]!
      const severity = severities[k]!
      const i = SEV_INDEX[severity]
      s.sev[i]!++
      s.byCheck[check.index * 3 + i]!++
      if (keep && !keep.has(k)) {
        dropped[i]!++
        continue
      }
      s.findings.push(findingOf(f, check.id, severity))
    }
    if (!keep) return
    const names = ['error', 'warning', 'info'] as const
    const worst = names.find((_, i) => dropped[i]! > 0)!
    const bySeverity = names.flatMap((sev, i) => (dropped[i] ? [`${dropped[i]} ${sev}${dropped[i] === 1 ? '' : 's'}`] : [])).join(', ')
    const { code, message } = engineFinding('more-findings', { check: check.id, more: list.length - MAX_FINDINGS_PER_CHECK, kept: MAX_FINDINGS_PER_CHECK, bySeverity }, { severity: worst })
    s.findings.push({ check: check.id, severity: worst, code: code!, message })
  }

  /**
   * The "too long to check" finding when a text the check reads is over its limit. An error
   * unless the check's `severity` says otherwise: a string nobody checked must not pass as clean.
   */
  private tooLong(check: CompiledCheck, s: State): FindingInput | undefined {
    const limit = check.maxTextLength ?? DEFAULT_MAX_TEXT_LENGTH
    if (limit <= 0) return undefined
    const item = s.item
    // Asked for every check of every string: the common answer (nothing is that long) without
    // building the list of texts each time.
    if (s.longest === undefined) {
      let longest = Math.max(item.source.length, item.translation?.length ?? 0)
      for (const p of item.plurals ?? []) longest = Math.max(longest, p.text?.length ?? 0)
      s.longest = longest
    }
    if (s.longest <= limit) return undefined
    const texts: Array<[string, string | undefined]> = [['source', item.source], ['translation', item.translation]]
    for (const p of item.plurals ?? []) texts.push([`plural form "${p.plural}"`, p.text])
    for (const [what, text] of texts) {
      if (text === undefined || text.length <= limit) continue
      return engineFinding('text-too-long', { what, length: text.length, check: check.id, limit })
    }
    return undefined
  }

  /** The string's check failed (no check: the engine's own work between checks): an engine finding; its later checks are skipped. */
  private fail(s: State, check: CompiledCheck | undefined, code: FailureCode, error: string, log = true): void {
    s.failed = true
    const { message } = engineFinding(code, { plugin: check?.plugin, check: check?.id, why: error })
    s.findings.push({ check: ENGINE_CHECK, code, severity: 'error', message })
    s.sev[0]!++
    s.byCheck[this.checks.length * 3]!++
    // `findingCode`, not `code`: the logger redacts every `code` field (OAuth codes).
    if (log && check) check.context.log.warn({ stringId: s.item.id, findingCode: code, err: error }, 'plugin failed')
  }

  private route(s: State): RunResult {
    const id = s.item.id
    if (s.failed) {
      const kind = this.onError.kind
      switch (kind) {
        case 'park': return { id, output: null, port: '', findings: s.findings }
        case 'retry': return { id, output: null, port: '', findings: s.findings, retry: true }
        case 'output': return { id, output: this.onError.output, port: this.onError.port, findings: s.findings }
        default: {
          const never: never = kind
          throw new Error(`unknown on-error ${String(never)}`)
        }
      }
    }
    for (const r of this.routes) {
      if (!r.condition || r.condition(s)) return { id, output: r.output, port: r.port, findings: s.findings }
    }
    return { id, output: null, port: '', findings: s.findings }
  }
}
