// A thread of the pipeline pool (pipeline-pool.ts): loads the same pipelines as the main thread
// (same files, same plugins directory, same environment), runs one group of strings per task, and
// stamps its progress into the task's shared stamp so the main thread can stop it when a check
// runs away. Plugin caches are served by the main thread (the worker's store) over the task's
// port; plugin metrics are counted here and go back with the results.
import os from 'node:os'
import { threadId, type MessagePort } from 'node:worker_threads'
import { workerData } from 'piscina'
import { createLogger, type Logger } from '../util/logger.js'
import { loadPipelines } from './load-pipelines.js'
import { lowerOwnPriority, ownThreadId } from './thread-priority.js'
import type { PipelineSet } from './pipeline.js'
import type { Checkpoint, RunResult } from './run-pipeline.js'
import type { Item, PluginCache } from './types.js'
import { CHECKPOINT_EVERY_MS, HEARTBEAT_MS, LOADING, STAMP, type CacheRequest, type ThreadData, type ThreadResult } from './pipeline-pool.js'
import { decodeItems, encodeResults, type ItemColumns } from './thread-items.js'

const data = workerData as ThreadData
const log: Logger = createLogger({ level: data.logLevel }).child({ part: 'engine', thread: true })
/** This thread's kernel id: stamped into each task, so the pool can read the CPU time it used. */
const tid = ownThreadId() ?? 0

/** The port of the task running now: plugin cache calls go to the main thread through it. */
let port: MessagePort | undefined
let nextRequest = 1
const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
const counted = new Map<string, number>()

function ask(request: Omit<CacheRequest, 'id'>): Promise<unknown> {
  // Outside a task (a plugin's late write after its run ended) there is nobody to ask: a miss.
  if (!port) return Promise.resolve(undefined)
  const id = nextRequest++
  const p = new Promise<unknown>((resolve, reject) => waiting.set(id, { resolve, reject }))
  port.postMessage({ ...request, id } satisfies CacheRequest)
  return p
}

const cacheFor = (ns: string): PluginCache => ({
  get: async <T>(key: string) => (await ask({ op: 'get', ns, key })) as T | undefined,
  set: async (key, value, ttlMs) => { await ask({ op: 'set', ns, key, value, ttlMs }) },
})

let lowered = false
/**
 * A thread runs below the worker's main thread (ordinary and spare threads by PIPELINE_THREAD_NICE,
 * the long-text lane by PIPELINE_LONG_TEXT_NICE) once its first pipelines are loaded, before any
 * string is checked, and for good (an unprivileged thread cannot raise its priority again). Not
 * before: a load at low priority on a busy machine (about a second of CPU) would keep the first
 * strings waiting many times that.
 */
function lowerPriorityOnce(): void {
  if (lowered || !data.nice) return
  lowered = true
  if (lowerOwnPriority(data.nice)) return
  // Where threads have no nice value of their own (not Linux), or the worker already runs at the
  // lowest priority, there is nothing to warn about; otherwise said once per thread: it then
  // competes with the main thread at its priority.
  const expected = process.platform === 'linux' && os.getPriority(0) < 19
  log[expected ? 'warn' : 'debug']({ nice: data.nice }, 'a pipeline thread could not lower its CPU priority; checks compete with webhooks and reports for the CPU')
}

/**
 * This thread's first load is done (`ok`), or its start load failed: noted where the pool reads it
 * (PIPELINE_THREADS' threads only): ready() (/readyz) counts the loaded, the start-load watch stops
 * a thread noted neither way in time. A failure is noted as the id negated, replaced once a later
 * load succeeds.
 */
function note(ok: boolean): void {
  if (!data.loadedBy) return
  const slots = new Int32Array(data.loadedBy)
  const value = ok ? threadId : -threadId
  for (let i = 0; i < slots.length; i++) if (Atomics.compareExchange(slots, i, -threadId, value) === -threadId) return
  for (let i = 0; i < slots.length; i++) if (Atomics.compareExchange(slots, i, 0, value) === 0) return
  log.warn('no slot left to note this pipeline thread\'s load; /readyz will not count it')
}

/**
 * The logger of the loads of the pipelines here, and of the plugins they create. The main thread
 * has loaded the same files with the same plugins and environment, and logged what their creation
 * had to say (ai-proofread's "no API key"): said again by every thread, each warning came once per
 * thread more (twice on two cores), and again from each spare thread as it started. Below `error`,
 * what is logged while a load lasts is dropped; between loads, the plugins log what their runs say
 * as any other. One logger for the thread's life (each made its own stream on stdout).
 */
let loadsUnderWay = 0
const loadLog = createLogger({ level: data.logLevel, muted: () => loadsUnderWay > 0 }).child({ part: 'engine', thread: true })

let loaded: { generation: number; set: PipelineSet } | undefined
let loading: { generation: number; done: Promise<PipelineSet> } | undefined

async function pipelinesOf(generation: number): Promise<PipelineSet> {
  if (loaded && loaded.generation >= generation) return loaded.set
  // A load of an older generation under way: wait for it, then load this one.
  if (loading && loading.generation < generation) {
    await loading.done.catch(() => undefined)
    return pipelinesOf(generation)
  }
  if (loading) return loading.done
  const done = (async () => {
    loadsUnderWay++
    try {
      const result = await loadPipelines(data.source, {
        pluginsDir: data.pluginsDir,
        log: loadLog,
        cacheFor,
        env: data.env,
        metrics: { add: (name, value = 1) => { counted.set(name, (counted.get(name) ?? 0) + value) } },
      })
      if (!result.ok) throw new Error(`the pipeline thread could not load the pipelines: ${result.errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.message}`).join('; ')}`)
      const old = loaded?.set
      if (!old) note(true)
      loaded = { generation, set: result.set }
      lowerPriorityOnce()
      if (old) void old.close().catch((e: unknown) => log.warn({ err: (e as Error).message }, 'closing old pipelines failed'))
      return result.set
    } finally {
      loadsUnderWay--
      loading = undefined
    }
  })()
  loading = { generation, done }
  return done
}

// Loaded as the thread starts: the generation the host has now (a thread that replaces a stopped
// one, after a reload, loads the current pipelines at once rather than the ones of the pool's start
// and then again). The load is asynchronous (plugin imports, file reads), and piscina parks an idle
// thread in Atomics.wait, where its event loop does not turn: there the load goes on only when a
// run wakes the thread, and that run waits for it (the e2e bench's first strings: DONE 0.88 s after
// the first batch). So a thread of PIPELINE_THREADS (`loadedBy`) is ready only once this has
// settled: its entry (pipeline-thread-entry.cts) waits for `startLoad`. Spare and lane threads,
// started for a run, load with it, under the pool's watchdog (LOADING, LOAD_LIMIT_MS).
const firstLoad = pipelinesOf(Math.max(data.generation, Atomics.load(new Int32Array(data.current), 0))).then(
  () => undefined,
  (e: unknown) => {
    log.error({ err: (e as Error).message }, 'pipelines not loaded in a pipeline thread')
    if (!loaded) note(false)
  },
)
/** What the thread's entry waits for before the thread is ready (settles, never rejects). */
export const startLoad: Promise<void> = data.loadedBy ? firstLoad : Promise.resolve()

/** An answer of the main thread to a cache request (made at module level: see run's finally). */
function answered(m: { id: number; value?: unknown; error?: string }): void {
  const w = waiting.get(m.id)
  if (!w) return
  waiting.delete(m.id)
  if (m.error !== undefined) w.reject(new Error(m.error))
  else w.resolve(m.value)
}

export interface RunTask {
  generation: number
  key: string
  /** The run's strings, a column per field (thread-items.ts). */
  items: ItemColumns
  stamp: SharedArrayBuffer
  port: MessagePort
  /** Go on from where a stopped run stood (the culprit taken out), if the pipelines are the same. */
  resume?: Checkpoint & { generation: number }
}

export default async function run(task: RunTask): Promise<ThreadResult> {
  const stamp = new Int32Array(task.stamp)
  Atomics.store(stamp, STAMP.thread, tid)
  // The heartbeat: beats while this thread's event loop is free (an awaited AI call keeps it
  // alive); a synchronous check stops it, and the watchdog sees the stamp stand still.
  const beat = () => { Atomics.add(stamp, STAMP.beat, 1) }
  // Loading first, then the first beat: the watchdog never sees a started run that is not loading
  // before its pipelines are there (a run's length counts from then).
  Atomics.store(stamp, STAMP.check, LOADING)
  beat()
  const heartbeat = setInterval(beat, HEARTBEAT_MS)
  port = task.port
  port.on('message', answered)
  try {
    const set = await pipelinesOf(task.generation)
    Atomics.store(stamp, STAMP.check, -1)
    const pipeline = set.get(task.key)
    if (!pipeline) throw new Error(`no pipeline declares module key "${task.key}" in the pipeline thread`)
    const signal = new AbortController().signal
    // One logger per run, as on the main thread: a run's strings share organization, project and
    // step (a pino child per string would cost more than some checks).
    const items: Item[] = decodeItems(task.items, log, signal)
    const first = items[0]
    if (first) {
      const runLog = log.child({ organization: first.organizationId, project: first.projectId, step: first.stepId })
      for (const item of items) item.log = runLog
    }
    const generation = loaded?.generation ?? task.generation
    // A run that has taken a while sends where it stands after a check (at most every
    // CHECKPOINT_EVERY_MS): if a later check runs away, the others go on from there.
    let sent = Date.now()
    const results: RunResult[] = await pipeline.run(items, {
      progress: (item, check) => {
        Atomics.store(stamp, STAMP.item, item)
        Atomics.store(stamp, STAMP.check, check)
        beat()
      },
      ...(task.resume && task.resume.generation === generation ? { resume: task.resume } : {}),
      checkpoint: (next, save) => {
        const now = Date.now()
        if (now - sent < CHECKPOINT_EVERY_MS || items.length === 0) return
        sent = now
        task.port.postMessage({ checkpoint: { ...save(), generation } })
      },
    })
    const metrics = [...counted]
    counted.clear()
    return { results: encodeResults(results), metrics }
  } finally {
    clearInterval(heartbeat)
    for (const w of waiting.values()) w.reject(new Error('the run ended'))
    waiting.clear()
    // Without its listener a closed port holds nothing of the run. (A listener made in here kept
    // every run's items alive: 250 MB in the million-pair burst's thread.)
    port.off('message', answered)
    port.close()
    port = undefined
    // A closed port is let go only as the thread's event loop passes its close phase. Piscina
    // waits for the next run in Atomics.wait, which blocks that loop, and runs that never await
    // (qa-gate's checks) came one after the other without a turn: every run's port stayed, in
    // the thread and its native memory in the process, 25 MB per million strings drained (bench
    // restart, 3,000,000 pairs: 195 to 272 MB, rising). Two immediates: the first may run in the
    // check phase of the loop turn the run is in, before that turn's close phase; the second runs
    // in a later turn, so a close phase has passed since the close, whatever phase the run ended
    // in. The watchdog still watches the run meanwhile. (Piscina's `atomics: 'async'` turns the
    // loop too, but cost 10-15% of the warm e2e rate, and lets a plugin's leftover timer spin
    // while the thread is idle, where no watchdog sees it: docs/performance.md.)
    await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))
  }
}
