// Pipelines run off the main thread: a pool of threads (piscina), each loading the same pipelines
// as the main thread's PipelineHost, so that no string's checks can hold up the event loop that
// answers webhooks, /healthz and reports. Wraps the host as the worker's PipelineSource: the
// worker asks `current.get(key).run(items)` as before and gets the same results; everything else
// (manifest, settings, event handlers) stays with the host on the main thread.
//
// The time budget: each task gets a small shared stamp (string index, check index, a beat counter)
// that the thread moves before every check of every string and on a heartbeat while its event loop
// is free. A watchdog on the main thread stops a thread whose stamp stood still for longer than the
// budget (a synchronous check that runs away: piscina terminates the thread and starts another),
// gives that string an engine finding "check timed out" (the pipeline's `on-error` decides where it
// goes, as for a check that throws) and runs the other strings of the task again on a thread.
// An awaited call (an AI request) keeps the heartbeat going and is bounded by its plugin's own
// timeoutMs, as on the main thread.
//
// Stuck and long runs do not hold up the rest: a run whose check has stood still for STALL_MS while
// its thread computed (a check running away until the budget stops it; Linux: not a thread that
// only waits for a core on a starved machine), or that has kept its thread for LONG_RUN_MS in
// all (awaited AI calls), no longer counts against PIPELINE_THREADS, and the next run may start
// a spare thread (at most `spareThreads` of them) that leaves again after SPARE_IDLE_MS without
// work. Ordinary runs take 10-40 ms and a check of a 50,000-character text tens of ms, so they
// never start one: a new thread's load (a few hundred ms of CPU) would cost a busy machine more
// than the wait it saves. The spare threads' memory is spent only while something is stuck.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { PACKAGE_ROOT } from '../config/load-config.js'
import { letThreadsSizeTheirYoungGeneration } from '../config/thread-heap.js'
import type { Logger } from '../util/logger.js'
import { textChars } from './build-item.js'
import type { Pipeline, PipelineSet } from './pipeline.js'
import type { PipelineHost } from './pipeline-host.js'
import type { Checkpoint, RunResult } from './run-pipeline.js'
import { threadCpuMs } from './thread-priority.js'
import { decodeResults, encodeItems, type ResultColumns } from './thread-items.js'
import type { Item, PluginCache, PluginMetrics } from './types.js'

/** How often an idle thread's event loop beats. */
export const HEARTBEAT_MS = 50
/** Slots of a task's stamp. */
export const STAMP = { beat: 0, item: 1, check: 2, thread: 3 } as const
/** The `check` slot while the thread loads its pipelines: not a check, not under the budget. */
export const LOADING = -2
/** Longest a thread may take to load its pipelines (its import and compile work is synchronous). */
export const LOAD_LIMIT_MS = 60_000
export const DEFAULT_CHECK_TIME_BUDGET_MS = 2000
/**
 * A run that has lasted this long sends where it stands after each check (at most this often):
 * small next to the budget, and never for an ordinary run (500 strings of qa-gate take 10-20 ms).
 */
export const CHECKPOINT_EVERY_MS = 100
/**
 * A run whose current check has stood still this long (no beat: a synchronous check) stops
 * counting against the pool's threads: the next run may go to a spare thread. One check of one
 * 48,000-character text through qa-gate takes at most tens of ms.
 */
export const STALL_MS = 250
/**
 * A run that has kept its thread this long in all (loading the pipelines not counted; awaited AI
 * calls, many long texts) stops counting too. An ordinary run of 500 strings through qa-gate
 * takes 10-40 ms; ten 48,000-character texts about 300 ms.
 */
export const LONG_RUN_MS = 1000
/** How long a spare thread stays without work before it leaves. */
export const SPARE_IDLE_MS = 30_000
export const DEFAULT_SPARE_THREADS = 2
/**
 * A string whose texts (source, translation, plural forms) hold more characters than this together
 * runs on the long-text lane. An ordinary string through qa-gate takes 20-80 us; one of 5,000
 * characters a few ms, of 50,000 tens of ms.
 */
export const DEFAULT_LONG_TEXT_CHARS = 5000
/**
 * How long a lane thread stays without work before it leaves: long texts come in series (a
 * document's paragraphs, one delivery after another), and a new thread's start (loading the
 * pipelines, compiling the checks again) costs about a second of CPU.
 */
export const LANE_IDLE_MS = 5 * 60_000
/**
 * Young generation of an ordinary or spare thread (MB): a run's garbage dies young either way, and
 * these threads live as long as the worker (quick flood bench, 2 threads: peak RSS 326 MB with
 * V8's default, 280 with 8 MB, 300 with 16; rate within noise).
 */
export const THREAD_YOUNG_GENERATION_MB = 8
/**
 * Young generation of a long-text lane thread (MB). A check of a 50 KB text keeps thousands of
 * objects alive while it runs (segments, placeholders), and each scavenge of a small young
 * generation copies them again: with 8 MB the lane spent 513 ms in 104 scavenges on the
 * adversarial scenario's slow texts (of about 0.75 s of CPU for the thread in all, its start
 * included); with 32 MB 254 ms in 35 (64 MB: 205 ms in 28). A thread churning through 60,000 live objects peaked 24-26 MB higher with 32 MB than
 * with 8. The lane lives only while long texts come (LANE_IDLE_MS), so the memory is spent then.
 */
export const LANE_YOUNG_GENERATION_MB = 32
/** How many nice values the long-text lane's threads run below the worker (Linux), never fewer than threadNice: at 10, under load they get about a tenth of the main thread's CPU and a fifth of the ordinary threads' at nice 3. */
export const DEFAULT_LONG_TEXT_NICE = 10
/**
 * The ordinary and spare threads, niced by threadNice, count the budget as the lane does (the CPU
 * the thread got), with the elapsed-time cap stretched as their share of a busy core shrinks: 2
 * budgets at nice 1-3, about 1.25 times more per nice value past that. At nice 0: elapsed time
 * alone, one budget.
 */
export const threadElapsedFactor = (nice: number): number => (nice > 0 ? Math.max(1, Math.ceil(1.25 ** nice)) : 1)
/**
 * On the long-text lane the budget counts the CPU its thread got (a niced thread may wait for a
 * core); past this many times the budget in elapsed time the check is stopped all the same: at
 * least 10, and as much as the lane's share of a busy core shrinks (each nice value is about 1.25
 * times less CPU: 10 at nice 10, 70 at nice 19).
 */
export const LANE_ELAPSED_FACTOR = 10
export const laneElapsedFactor = (nice: number): number => Math.max(LANE_ELAPSED_FACTOR, Math.ceil(1.25 ** nice))

/** What a thread sends back for a run: its results as columns (thread-items.ts), and the plugin metrics it counted. */
export interface ThreadResult { results: ResultColumns; metrics: Array<[string, number]> }
export interface ThreadData {
  source: string[] | { dir: string }
  pluginsDir?: string
  env: Record<string, string | undefined>
  logLevel: string
  generation: number
  /** Lower the thread's priority by this many nice values once its pipelines are loaded (the ordinary threads by threadNice, the long-text lane by longTextNice). */
  nice?: number
  /** The host's generation now (one Int32, updated before every task): what a new thread loads as it starts. */
  current: SharedArrayBuffer
  /**
   * PIPELINE_THREADS' threads only (not spare or lane ones): Int32 slots where each writes its
   * threadId once it has loaded the pipelines (negated if its start load failed); the pool clears a
   * thread's slot when it leaves. What
   * ready() (/readyz) reads. Such a thread loads before it tells piscina it is ready (see
   * pipeline-thread-entry.cts); spare and lane threads load with their first run.
   */
  loadedBy?: SharedArrayBuffer
}
export interface CacheRequest { id: number; op: 'get' | 'set'; ns: string; key: string; value?: unknown; ttlMs?: number }

export interface PipelinePoolOptions {
  host: PipelineHost
  threads: number
  /** How long a PIPELINE_THREADS thread may take to load the pipelines as it starts before it is stopped (LOAD_LIMIT_MS). */
  loadLimitMs?: number
  /** How long one check of one string may hold its thread without a beat, in ms. */
  budgetMs?: number
  /** Threads beyond `threads` that runs may start while others are long (0: none). */
  spareThreads?: number
  /** When a run counts as long (LONG_RUN_MS). */
  longRunMs?: number
  /** When a check standing still makes its run count as long (STALL_MS). */
  stallMs?: number
  /** How long a spare thread stays idle before it leaves (SPARE_IDLE_MS). */
  spareIdleMs?: number
  /** How long a thread of the long-text lane stays idle before it leaves (LANE_IDLE_MS). */
  laneIdleMs?: number
  /** Strings longer than this (textChars) run on the long-text lane; 0: no lane (DEFAULT_LONG_TEXT_CHARS). */
  longTextChars?: number
  /** Threads of the long-text lane (default: as many as `threads`); they leave after laneIdleMs idle. */
  longTextThreads?: number
  /** Nice values the lane's threads run below the worker (DEFAULT_LONG_TEXT_NICE), never fewer than threadNice; 0: not lowered. */
  longTextNice?: number
  /** Nice values the ordinary and spare threads run below the worker once their pipelines are loaded; 0 (the default): not lowered. */
  threadNice?: number
  env: Record<string, string | undefined>
  logLevel: string
  log: Logger
  cacheFor(namespace: string): PluginCache
  metrics: PluginMetrics
  /** Called for each check stopped (for a metric). */
  onTimeout?(info: { pipeline: string; stringId: number; check: number }): void
  /** Called for each run handed to a spare thread (for a metric). */
  onSpareRun?(): void
  /** Called with the number of strings of each run sent to the long-text lane (for a metric). */
  onLongText?(strings: number): void
  /** Called with the number of threads alive whenever one starts or leaves (for a metric). */
  onThreadCount?(threads: number): void
}

/**
 * The built file a thread starts with (a CommonJS entry that import()s the thread module, see
 * pipeline-thread-entry.cts); under vitest (TypeScript sources) the build's copy in dist/.
 */
export function pipelineThreadFile(): string | undefined {
  const here = fileURLToPath(import.meta.url)
  const file = here.endsWith('.ts') ? path.join(PACKAGE_ROOT, 'dist', 'src', 'engine', 'pipeline-thread-entry.cjs') : path.join(path.dirname(here), 'pipeline-thread-entry.cjs')
  return existsSync(file) ? file : undefined
}

/** A checkpoint as a thread sends it: for the pipelines of that generation. */
export type ThreadCheckpoint = Checkpoint & { generation: number }

/** A stopped run: the string and check it was in, and where the run stood before that check. */
type Outcome = { ok: true; value: ThreadResult } | { ok: false; item: number; check: number; saved?: ThreadCheckpoint }

interface Watched {
  stamp: Int32Array
  beat: number
  since: number
  stop(): void
  stopped: boolean
  loadStuck?: boolean
  /** When the run began on its thread (its pipelines loaded); 0 before. */
  began: number
  /** Its check stood still for stallMs, or it has kept its thread for longRunMs: it no longer counts against the threads. */
  long: boolean
  /** On the long-text lane. */
  lane: boolean
  /**
   * How many budgets of elapsed time its check may stand still, as long as its thread has not used
   * a budget of CPU: 1 (elapsed time alone) on a thread at the worker's priority, more on a niced one.
   */
  elapsedFactor: number
  /** The thread's CPU time (ms) at the last beat seen, on a niced thread. */
  cpuSince?: number
  /** The thread's CPU time (ms) when its stamp was first seen standing still since the last beat (ordinary threads, for the stall). */
  standCpu?: number
}

export class PipelinePool {
  readonly threads: number
  readonly budgetMs: number
  readonly spareThreads: number
  readonly longRunMs: number
  readonly stallMs: number
  /** Strings longer than this run on the long-text lane (0: no lane). */
  readonly longTextChars: number
  private readonly laneElapsedFactor: number
  private readonly threadElapsedFactor: number
  /** PIPELINE_THREADS threads, always there. */
  private readonly pool: Piscina
  /**
   * Up to spareThreads more, started only for a run let through while every thread of `pool` is
   * held by a run, and gone after SPARE_IDLE_MS idle. A pool of their own: one piscina with a
   * larger maxThreads starts a thread for any run that finds no idle one, such as the first run
   * after a stop, while the replacement thread is still loading.
   */
  private readonly spares: Piscina | undefined
  /**
   * The long-text lane: threads niced by longTextNice (at least threadNice) once loaded, for strings whose texts
   * are longer than longTextChars, so that on a loaded machine a translator's 50 KB text takes the
   * CPU left over by ordinary strings rather than theirs. Started on demand, gone after
   * LANE_IDLE_MS idle; runs beyond its threads wait in its own queue, never for PIPELINE_THREADS.
   */
  private readonly lane: Piscina | undefined
  /** Runs on `pool`'s threads now (the rest of `running` are on spare ones). */
  private onMain = 0
  /** Runs on threads now, and how many of them are long. */
  private running = 0
  private longRuns = 0
  /** Runs waiting for a thread, first come first served. */
  private readonly waiting: Array<{ go(): void; refuse(e: Error): void }> = []
  private closed = false
  private sparesStarted = 0
  private readonly watched = new Set<Watched>()
  private watchdog: NodeJS.Timeout | undefined
  /** Watches PIPELINE_THREADS' threads as they load at start (no run is on them to watch). */
  private readonly startWatch: NodeJS.Timeout
  /** When each PIPELINE_THREADS thread not yet done with its start load was first seen, by threadId. */
  private readonly loadingSince = new Map<number, number>()
  private readonly wrapped = new WeakMap<Pipeline, Pipeline>()
  private timeouts = 0
  /** The host's pipeline generation, shared with the threads: a replacement thread loads that one. */
  private readonly generationCell: Int32Array
  /** Thread ids of PIPELINE_THREADS' threads that have loaded (ThreadData.loadedBy). */
  private readonly loadedBy: Int32Array

  constructor(private readonly options: PipelinePoolOptions, file: string) {
    this.threads = options.threads
    this.budgetMs = options.budgetMs ?? DEFAULT_CHECK_TIME_BUDGET_MS
    this.spareThreads = options.spareThreads ?? DEFAULT_SPARE_THREADS
    this.longRunMs = options.longRunMs ?? LONG_RUN_MS
    this.stallMs = options.stallMs ?? STALL_MS
    this.longTextChars = options.longTextChars ?? DEFAULT_LONG_TEXT_CHARS
    const threadNice = options.threadNice ?? 0
    // The lane runs below the ordinary threads, never above them: it is the one that gives way.
    const laneNice = Math.max(options.longTextNice ?? DEFAULT_LONG_TEXT_NICE, threadNice)
    this.laneElapsedFactor = laneElapsedFactor(laneNice)
    this.threadElapsedFactor = threadElapsedFactor(threadNice)
    const { source, pluginsDir } = options.host.origin
    this.generationCell = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT))
    Atomics.store(this.generationCell, 0, options.host.generation)
    // Room for every thread and for replacements that start before the thread they replace has gone.
    this.loadedBy = new Int32Array(new SharedArrayBuffer((options.threads + 16) * Int32Array.BYTES_PER_ELEMENT))
    const data: ThreadData = { source, pluginsDir, env: options.env, logLevel: options.logLevel, generation: options.host.generation, current: this.generationCell.buffer as SharedArrayBuffer }
    const pool = (threads: { min: number; max: number; idleMs: number; nice?: number; youngMb: number; loadedBy?: Int32Array }) => {
      letThreadsSizeTheirYoungGeneration()
      const p = new Piscina({
        filename: file,
        minThreads: threads.min,
        maxThreads: threads.max,
        idleTimeout: threads.idleMs,
        workerData: { ...data, ...(threads.nice ? { nice: threads.nice } : {}), ...(threads.loadedBy ? { loadedBy: threads.loadedBy.buffer as SharedArrayBuffer } : {}) },
        // As the ingest threads: V8 would size a thread's young generation from the host's memory.
        resourceLimits: { maxYoungGenerationSizeMb: threads.youngMb },
      })
      // A thread that cannot start (its module failed) is reported, not thrown at the process.
      p.on('error', (e: unknown) => options.log.error({ err: (e as Error).message }, 'a pipeline thread failed'))
      p.on('workerCreate', count)
      // Told before the pool forgets the thread: counted once it has.
      p.on('workerDestroy', () => {
        queueMicrotask(count)
        // A thread that leaves no longer counts as loaded (its replacement counts once it has).
        if (threads.loadedBy) queueMicrotask(() => this.forgetGoneThreads())
      })
      return p
    }
    const count = () => options.onThreadCount?.(this.threadCount)
    const youngMb = THREAD_YOUNG_GENERATION_MB
    this.pool = pool({ min: options.threads, max: options.threads, idleMs: Number.POSITIVE_INFINITY, nice: threadNice, youngMb, loadedBy: this.loadedBy })
    const loadLimitMs = options.loadLimitMs ?? LOAD_LIMIT_MS
    this.startWatch = setInterval(() => this.watchStartLoads(loadLimitMs), Math.max(10, Math.min(1000, Math.floor(loadLimitMs / 4))))
    this.startWatch.unref()
    this.spares = this.spareThreads > 0 ? pool({ min: 0, max: this.spareThreads, idleMs: options.spareIdleMs ?? SPARE_IDLE_MS, nice: threadNice, youngMb }) : undefined
    this.lane = this.longTextChars > 0 ? pool({ min: 0, max: Math.max(1, options.longTextThreads ?? options.threads), idleMs: options.laneIdleMs ?? LANE_IDLE_MS, nice: laneNice, youngMb: LANE_YOUNG_GENERATION_MB }) : undefined
  }

  /** Checks stopped by the budget so far. */
  get stopped(): number {
    return this.timeouts
  }

  /** Threads alive now (spare ones included). */
  get threadCount(): number {
    return this.pool.threads.length + (this.spares?.threads.length ?? 0) + (this.lane?.threads.length ?? 0)
  }

  /** Does this string run on the long-text lane? */
  isLong(item: Pick<Item, 'source' | 'translation' | 'plurals'>): boolean {
    return this.lane !== undefined && textChars(item) > this.longTextChars
  }

  /** Runs handed to a thread while every thread of PIPELINE_THREADS was taken by a long run. */
  get spareRuns(): number {
    return this.sparesStarted
  }

  /**
   * Are PIPELINE_THREADS threads there, each done with its first load of the pipelines (a few
   * hundred ms of CPU as it starts)? Until then a run may wait for a load. Spare and lane threads do
   * not count; a thread that replaces a stopped one counts once it has loaded. A thread whose load
   * failed (it logs why) never counts.
   */
  ready(): boolean {
    this.forgetGoneThreads()
    const threads = this.pool.threads
    if (threads.length < this.threads) return false
    const loaded = this.loadedThreadIds()
    return threads.every((t) => loaded.includes(t.threadId))
  }

  /**
   * Clear the notes of threads that are no longer the pool's. Piscina names a thread that ended by
   * itself (process.exit in a plugin, out of memory) as -1 when it tells it is gone, so its note is
   * found this way, not by that id.
   */
  private forgetGoneThreads(): void {
    const live = this.pool.threads.map((t) => t.threadId)
    for (let i = 0; i < this.loadedBy.length; i++) {
      const id = Atomics.load(this.loadedBy, i)
      if (id !== 0 && !live.includes(Math.abs(id))) Atomics.compareExchange(this.loadedBy, i, id, 0)
    }
  }

  /**
   * A PIPELINE_THREADS thread loads before piscina may give it a run, so no run's stamp shows the
   * load to the watchdog: one whose start load has neither ended nor failed within the load limit
   * is stopped here (piscina starts another), as a run's load would be.
   */
  private watchStartLoads(limitMs: number): void {
    const now = Date.now()
    const done = new Set(this.notes().map(Math.abs))
    const live = new Set<number>()
    for (const t of this.pool.threads) {
      live.add(t.threadId)
      if (done.has(t.threadId)) continue
      const since = this.loadingSince.get(t.threadId)
      if (since === undefined) this.loadingSince.set(t.threadId, now)
      else if (now - since > limitMs) {
        this.options.log.error({ limitMs }, `a pipeline thread did not load the pipelines within ${limitMs} ms as it started; it was stopped (a plugin that hangs as it is imported?)`)
        this.loadingSince.delete(t.threadId)
        void t.terminate()
      }
    }
    for (const id of this.loadingSince.keys()) if (done.has(id) || !live.has(id)) this.loadingSince.delete(id)
  }

  /** The ids of PIPELINE_THREADS' threads noted as loaded (a thread that left is not among them). */
  loadedThreadIds(): number[] {
    return this.notes().filter((id) => id > 0)
  }

  /** Every note: a thread's id once it has loaded, its id negated if its start load failed. */
  private notes(): number[] {
    const ids: number[] = []
    for (let i = 0; i < this.loadedBy.length; i++) {
      const id = Atomics.load(this.loadedBy, i)
      if (id !== 0) ids.push(id)
    }
    return ids
  }

  /** The ids of PIPELINE_THREADS' threads alive now. */
  threadIds(): number[] {
    return this.pool.threads.map((t) => t.threadId)
  }

  /** The worker's PipelineSource: the host's pipelines, with run() going to the pool. */
  get current(): PipelineSet {
    const set = this.options.host.current
    return {
      get: (key) => {
        const p = set.get(key)
        return p && this.wrap(p)
      },
      all: () => set.all().map((p) => this.wrap(p)),
      events: () => set.events(),
      dispatchEvent: (e) => set.dispatchEvent(e),
      close: (grace) => set.close(grace),
    }
  }

  reload(): Promise<{ ok: boolean; errors: unknown[] }> {
    return this.options.host.reload()
  }

  async close(): Promise<void> {
    clearInterval(this.startWatch)
    clearInterval(this.watchdog)
    this.watchdog = undefined
    // Runs still waiting for a thread get an error (their strings are tried again later), not silence.
    this.closed = true
    for (const w of this.waiting.splice(0)) w.refuse(new Error('the pipeline pool is closed'))
    await Promise.all([this.pool.destroy(), this.spares?.destroy(), this.lane?.destroy()])
  }

  private wrap(p: Pipeline): Pipeline {
    let w = this.wrapped.get(p)
    if (!w) {
      w = { ...p, run: (items, options) => this.run(p, items, options?.signal) }
      this.wrapped.set(p, w)
    }
    return w
  }

  /** Run a pipeline over items on the pool: the results of an inline run, in the same order. */
  async run(pipeline: Pipeline, items: Item[], signal?: AbortSignal): Promise<RunResult[]> {
    const out: RunResult[] = new Array(items.length)
    // The strings of `indices`, from the start or from where a stopped run stood (`resume`, one
    // state per index). What a stopped run had done before the check that ran away is not done again.
    const group = async (indices: number[], resume: ThreadCheckpoint | undefined, onLane: boolean): Promise<void> => {
      const outcome = await this.runOnThread(pipeline.key, pick(items, indices), signal, resume, onLane)
      if (outcome.ok) {
        place(out, indices, decodeResults(outcome.value.results))
        for (const [name, value] of outcome.value.metrics) this.options.metrics.add(name, value)
        return
      }
      // The latest state sent before the stop (or the one this run started from).
      const saved = outcome.saved ?? resume
      const part = (keep: number[]): ThreadCheckpoint | undefined => saved && { ...saved, states: keep.map((j) => saved.states[j]!) }
      const culprit = outcome.item >= 0 ? outcome.item : indices.length === 1 ? 0 : -1
      if (culprit < 0) {
        // Several strings were in the check at once (a batching check, or the async tail of
        // checks): each runs again alone, so that only the one that runs away is stopped.
        await Promise.all(indices.map((i, j) => group([i], part([j]), onLane)))
        return
      }
      const i = indices[culprit]!
      this.timeouts++
      this.options.onTimeout?.({ pipeline: pipeline.key, stringId: items[i]!.id, check: outcome.check })
      items[i]!.log.warn({ string: items[i]!.id, pipeline: pipeline.key, check: outcome.check, budgetMs: this.budgetMs }, 'a check ran past the time budget; its thread was replaced')
      out[i] = pipeline.timedOut(items[i]!.id, outcome.check, this.budgetMs)
      const others = indices.map((_, j) => j).filter((j) => j !== culprit)
      if (others.length) await group(others.map((j) => indices[j]!), part(others), onLane)
    }
    const long: number[] = []
    const short: number[] = []
    for (let i = 0; i < items.length; i++) (this.isLong(items[i]!) ? long : short).push(i)
    if (long.length) this.options.onLongText?.(long.length)
    await Promise.all([short.length ? group(short, undefined, false) : undefined, long.length ? group(long, undefined, true) : undefined])
    return out
  }

  /**
   * Wait for a thread: taken while fewer than `threads` runs are on threads and not long, and
   * fewer than `threads + spareThreads` in all. First come, first served.
   */
  private async acquire(signal?: AbortSignal): Promise<Piscina> {
    signal?.throwIfAborted()
    if (this.closed) throw new Error('the pipeline pool is closed')
    if (this.waiting.length === 0 && this.free()) return this.take()
    return new Promise<Piscina>((resolve, reject) => {
      const entry = {
        go: () => {
          signal?.removeEventListener('abort', onAbort)
          resolve(this.take())
        },
        refuse: (e: Error) => {
          signal?.removeEventListener('abort', onAbort)
          reject(e)
        },
      }
      const onAbort = () => {
        const at = this.waiting.indexOf(entry)
        if (at >= 0) this.waiting.splice(at, 1)
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(entry)
    })
  }

  private free(): boolean {
    return this.running - this.longRuns < this.threads && this.running < this.threads + this.spareThreads
  }

  /** Which pool the run goes to: `pool` while one of its threads is not held by a run. */
  private take(): Piscina {
    this.running++
    if (this.onMain < this.threads || !this.spares) {
      this.onMain++
      return this.pool
    }
    this.sparesStarted++
    this.options.onSpareRun?.()
    return this.spares
  }

  private release(w: Watched, on: Piscina): void {
    this.running--
    if (on === this.pool) this.onMain--
    if (w.long) this.longRuns--
    this.pump()
  }

  private pump(): void {
    while (this.waiting.length && this.free()) this.waiting.shift()!.go()
  }

  private async runOnThread(key: string, items: Item[], signal: AbortSignal | undefined, resume: ThreadCheckpoint | undefined, onLane: boolean): Promise<Outcome> {
    // The lane's runs wait in its own queue (piscina's), never for a slot of PIPELINE_THREADS.
    const on = onLane && this.lane ? this.lane : await this.acquire(signal)
    const sab = new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT)
    const stamp = new Int32Array(sab)
    const stop = new AbortController()
    const onAbort = () => stop.abort(signal?.reason)
    const { port1, port2 } = new MessageChannel()
    let saved: ThreadCheckpoint | undefined
    const w: Watched = { stamp, beat: 0, since: 0, stop: () => stop.abort(new Error('check time budget')), stopped: false, began: 0, long: false, lane: on === this.lane, elapsedFactor: on === this.lane ? this.laneElapsedFactor : this.threadElapsedFactor }
    try {
      // Inside the try: whatever happens from here, the slot taken above is given back.
      signal?.throwIfAborted()
      if (this.closed) throw new Error('the pipeline pool is closed')
      Atomics.store(this.generationCell, 0, this.options.host.generation)
      Atomics.store(stamp, STAMP.item, -1)
      Atomics.store(stamp, STAMP.check, -1)
      signal?.addEventListener('abort', onAbort, { once: true })
      this.serveCache(port1, (c) => { saved = c })
      this.watch(w)
      const value = (await on.run({ generation: this.options.host.generation, key, items: encodeItems(items), stamp: sab, port: port2, ...(resume ? { resume } : {}) }, { transferList: [port2 as never], signal: stop.signal })) as ThreadResult
      return { ok: true, value }
    } catch (error) {
      if (w.loadStuck) throw new Error(`a pipeline thread did not load the pipelines within ${LOAD_LIMIT_MS} ms; it was stopped`)
      if (w.stopped) {
        const check = Atomics.load(stamp, STAMP.check)
        // Only a state from before the check that ran away is a place to go on from.
        const usable = saved && check >= 0 && saved.next <= check ? saved : undefined
        return { ok: false, item: Atomics.load(stamp, STAMP.item), check, ...(usable ? { saved: usable } : {}) }
      }
      throw error
    } finally {
      this.watched.delete(w)
      if (on !== this.lane) this.release(w, on)
      signal?.removeEventListener('abort', onAbort)
      // Without its listener, a closed port that lingers holds nothing of this run.
      port1.removeAllListeners('message')
      port1.close()
    }
  }

  private serveCache(port: MessagePort, onCheckpoint: (c: ThreadCheckpoint) => void): void {
    port.on('message', (m: CacheRequest | { checkpoint: ThreadCheckpoint }) => {
      if ('checkpoint' in m) {
        onCheckpoint(m.checkpoint)
        return
      }
      const cache = this.options.cacheFor(m.ns)
      const answer = m.op === 'get' ? cache.get(m.key) : cache.set(m.key, m.value, m.ttlMs)
      answer.then(
        (value) => { try { port.postMessage({ id: m.id, value }) } catch { /* the run ended */ } },
        (e: unknown) => { try { port.postMessage({ id: m.id, error: (e as Error).message }) } catch { /* the run ended */ } },
      )
    })
  }

  private watch(w: Watched): void {
    this.watched.add(w)
    if (this.watchdog) return
    const every = Math.max(10, Math.min(250, Math.floor(this.budgetMs / 4), Math.floor(this.stallMs / 4), Math.floor(this.longRunMs / 4)))
    this.watchdog = setInterval(() => {
      const now = Date.now()
      let longer = false
      for (const x of this.watched) {
        const beat = Atomics.load(x.stamp, STAMP.beat)
        // 0: still queued for a thread (the thread beats as the task starts); the clock starts
        // again at every beat.
        if (beat === 0) continue
        const loading = Atomics.load(x.stamp, STAMP.check) === LOADING
        const stood = beat === x.beat
        if (!stood) {
          x.beat = beat
          x.since = now
          x.standCpu = undefined
          if (x.elapsedFactor > 1) x.cpuSince = threadCpuMs(Atomics.load(x.stamp, STAMP.thread))
        } else if (!x.stopped) {
          // Loading pipelines (a new thread's imports and compiles) is not a check: it has its
          // own, larger limit, and is never blamed on a string.
          const limit = loading ? Math.max(LOAD_LIMIT_MS, this.budgetMs) : this.budgetMs
          if (now - x.since > limit && (x.elapsedFactor <= 1 || this.ranPast(x, limit, now))) {
            x.stopped = true
            x.loadStuck = loading
            x.stop()
          }
        }
        // A run's length counts from when its pipelines were loaded (a new thread's load is not the run's).
        if (!x.long && !x.lane && this.spareThreads > 0 && !loading) {
          // Where its thread's CPU time stood as the stamp was first seen standing still.
          if (stood && x.began !== 0 && x.standCpu === undefined) x.standCpu = threadCpuMs(Atomics.load(x.stamp, STAMP.thread))
          if (x.began === 0) {
            // The clock of a stall starts again too: a beat last seen while loading is not the run's.
            x.began = now
            x.since = now
            x.beat = beat
            x.standCpu = undefined
          } else if (now - x.began >= this.longRunMs || (stood && now - x.since >= this.stallMs && this.spunFor(x, this.stallMs / 2))) {
            x.long = true
            this.longRuns++
            longer = true
          }
        }
      }
      if (longer) this.pump()
      if (this.watched.size === 0) {
        clearInterval(this.watchdog)
        this.watchdog = undefined
      }
    }, every)
    this.watchdog.unref()
  }

  /**
   * Has a run that stands still kept its thread computing (at least `ms` of CPU since it was first
   * seen standing)? A check that runs away does; a thread that merely waits for a core on a
   * starved machine does not, and a spare thread (40 MB, a load's worth of CPU) would not help it.
   * Unknown CPU time counts as computing.
   */
  private spunFor(x: Watched, ms: number): boolean {
    const cpu = threadCpuMs(Atomics.load(x.stamp, STAMP.thread))
    if (cpu === undefined || x.standCpu === undefined) return true
    return cpu - x.standCpu >= ms
  }

  /**
   * A run on a niced thread (the lane's, or an ordinary one under threadNice) past its limit in
   * elapsed time: has its thread also used that much CPU since its last beat? Elapsed time decides
   * where CPU time is unknown, and past the thread's elapsedFactor times the limit.
   */
  private ranPast(x: Watched, limit: number, now: number): boolean {
    const cpu = threadCpuMs(Atomics.load(x.stamp, STAMP.thread))
    if (cpu === undefined || x.cpuSince === undefined) return true
    return cpu - x.cpuSince > limit || now - x.since > limit * x.elapsedFactor
  }
}

/** A pool when threads are asked for and the thread module is built; otherwise undefined (inline). */
export function createPipelinePool(options: PipelinePoolOptions): PipelinePool | undefined {
  if (options.threads <= 0) return undefined
  const file = pipelineThreadFile()
  if (!file) {
    options.log.warn('the pipeline thread module is missing (run the build); pipelines run on the main thread')
    return undefined
  }
  return new PipelinePool(options, file)
}

// A run's loops over its strings live in functions made once, not in callbacks made for each run:
// see statusOp in platform/reporter.ts.

/** The items at `indices`, in that order. */
function pick<T>(items: readonly T[], indices: readonly number[]): T[] {
  const picked: T[] = []
  for (const i of indices) picked.push(items[i]!)
  return picked
}

/** Each result where its string stands in the run. */
function place<T>(out: T[], indices: readonly number[], results: readonly T[]): void {
  for (let j = 0; j < results.length; j++) out[indices[j]!] = results[j]!
}
