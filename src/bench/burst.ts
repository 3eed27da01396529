// The "burst" scenario of `switchyard bench` (issue 16): a large burst of string-language pairs in
// batches of 1,000, offered by senders that behave like the service (3 retries, 1 s apart,
// Retry-After ignored) during a fault for the first part of it: the API down (every answer a 500),
// or the first organization forbidden (its token may not update statuses: 403, so its strings are
// held on disk until it may again). What counts: no batch refused for good (the service would mark
// its strings FAILED), peak memory, every string DONE at the end, how fast the backlog drains once
// the fault is over, and whether a second organization's small batches, sent while the backlog is
// deep, are DONE quickly.
// Rates are also given as ratios to the same run's baseline (a plain node:http server taking the
// same batches), since machines differ by 40% in absolute rates.
import http from 'node:http'
import { signBody } from '../protocol/webhook-signature.js'
import type { Batch } from './load-generator.js'
import { runLoad } from './load-generator.js'
import { memoryOf, type Child } from './processes.js'
import { perSecond, ratio, round } from './stats.js'
import type { SeedOptions } from '../emulator/sample-project.js'
import type { BatchSource } from './webhook-bodies.js'

/**
 * `outage`: every API answer a 500 (the service down). `forbidden`: the first organization's token
 * may not update statuses (403; a right taken away for a while); the second's is not touched.
 */
export type BurstFault = 'outage' | 'forbidden'

export interface BurstResult {
  pairs: number
  batchSize: number
  senders: number
  outageSeconds: number
  /** What the first outageSeconds were (older results have none: an outage). */
  fault?: BurstFault
  /**
   * Seconds from the fault's end to the first of the first organization's strings DONE after it:
   * how long the worker took to find out (a held organization is tried again with back-off capped
   * near a minute). null: none DONE after it.
   */
  resumedAfterSeconds?: number | null
  /** The first organization's pairs DONE by the fault's end: 0 (nothing can be reported during it). */
  doneDuringFault?: number
  /** Most strings held at once (/healthz `held`: their organization forbidden or not connected). */
  peakHeld?: number
  /** Baseline server, same batches: events/s. */
  baselineEventsPerSecond: number
  seconds: number
  /** Pairs DONE per second, from the first POST to the last DONE (outage included). */
  endToEndPerSecond: number
  endToEndVsBaseline: number
  /**
   * Pairs DONE per second from the end of the outage (or the last acknowledgement, if later) to the
   * last DONE; with `forbidden`, from when the first organization's strings were DONE again.
   */
  drainPerSecond: number
  drainVsBaseline: number
  /** Drain rate over the end-to-end rate of the e2e scenario of the same run, when it ran. */
  drainVsEndToEndScenario: number | null
  requests: number
  busy503: number
  non2xx: number
  /** Pairs whose batch was refused 4 times (the service marks them FAILED). */
  failed: number
  done: number
  notDone: number
  peakRssMb: number
  vmHwmMb: number
  /** The main thread's V8 heap (allocated, used) and external memory at their peaks, MB (from /metrics, once a second). */
  mainHeapMb: { total: number; used: number; external: number }
  /** Most pipeline threads alive at once, spare ones included (from /metrics, once a second). */
  pipelineThreadsMax: number
  /** Most strings waiting on disk, and most journal bytes, seen on /healthz. */
  peakWaiting: number
  peakJournalMb: number
  /** With QUEUE=bullmq: Redis's used memory before the first batch and at its peak (sampled once a second), MB; null otherwise. */
  redisMb: { start: number; peak: number } | null
  /**
   * A second organization's small batches, sent every 2 s from when the API is back while the
   * first's backlog is deep: how long after sending each was DONE (null: not DONE within 5 min),
   * and how many of the first organization's strings waited on disk when the first was sent.
   */
  second: { batches: number; pairsEach: number; maxSecondsToDone: number; medianSecondsToDone: number; waitingAtFirstSend: number; secondsToDone: Array<number | null> }
}

export interface BurstHost {
  control<T>(route: string, body?: unknown): Promise<T>
  /** The emulator's API address for a worker serving several organizations. */
  apiUrlTemplate: string
  /** Connect the worker to an organization (OAuth, as a browser would). */
  connect(workerUrl: string, domain: string): Promise<void>
  seed(strings: number, moduleKey: string): Promise<void>
  source(strings: number, moduleKey: string, batchSize?: number, seed?: SeedOptions): BatchSource
  startWorker(env: Record<string, string>, connect: boolean): Promise<{ child: Child; url: string }>
  stopChild(child: Child): Promise<void>
  startBaseline(): Promise<{ child: Child; url: string }>
  appSecret: string
  log(message: string): void
  /** With QUEUE=bullmq: Redis's used memory, MB (undefined: no Redis queue). */
  queueMemoryMb?(): Promise<number | undefined>
}

export interface BurstSettings {
  pairs: number
  batchSize: number
  senders: number
  outageSeconds: number
  secondBatches: number
  secondPairs: number
  /** Default `outage`. */
  fault?: BurstFault
  endToEndScenarioPerSecond?: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** POST a batch as the service does: 1 + 3 tries, 1 s apart, whatever Retry-After says. */
export async function deliver(agent: http.Agent, url: URL, batch: Batch, tally: { requests: number; statuses: Record<string, number> }): Promise<boolean> {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt) await sleep(1000)
    tally.requests++
    const status = await new Promise<number>((resolve) => {
      const req = http.request({ agent, method: 'POST', hostname: url.hostname, port: url.port, path: url.pathname, headers: { ...batch.headers, 'content-length': String(batch.body.length) }, timeout: 30_000 }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.on('error', () => resolve(0))
      })
      req.on('error', () => resolve(0))
      req.on('timeout', () => req.destroy())
      req.end(batch.body)
    })
    tally.statuses[status] = (tally.statuses[status] ?? 0) + 1
    if (status >= 200 && status < 300) return true
  }
  return false
}

/** The second organization at the emulator (same app secret as the first). */
const SECOND = { id: '300000', domain: 'globex' }

/**
 * Add the second organization with `strings` strings (once per emulator: the control API seeds
 * only the first again, so a bench runs the burst once); its seed options, to build its batches.
 */
async function secondOrganization(host: BurstHost, strings: number): Promise<SeedOptions> {
  type Org = { id: string; domain: string; projectId: number; stepId: number }
  const seed: SeedOptions = { seed: 10, strings: Math.max(1, strings), languages: ['de', 'fr'], moduleKey: 'qa-gate' }
  let org = (await host.control<Org[]>('/organizations')).find((o) => o.domain === SECOND.domain)
  org ??= await host.control<Org>('/organizations', { ...SECOND, appSecret: host.appSecret, ...seed })
  return { ...seed, projectId: org.projectId, stepId: org.stepId, organizationId: SECOND.id, domain: SECOND.domain }
}

/** Events/s of a plain node:http server taking the source's first 20 batches from the same senders, 4 s. */
export async function baselineRate(host: BurstHost, source: BatchSource, senders: number): Promise<number> {
  const baseline = await host.startBaseline()
  const pool = Array.from({ length: Math.min(20, source.count) }, (_, i) => source.batch(i))
  const r = await runLoad({ url: baseline.url, concurrency: senders, count: Number.MAX_SAFE_INTEGER, batch: (i) => pool[i % pool.length]!, durationMs: 4000 })
  await host.stopChild(baseline.child)
  return perSecond(r.ackedEvents, r.durationMs)
}

/** What the burst samples of the worker while it runs: peaks, and the strings waiting on disk now. */
function sampleWorker(host: BurstHost, worker: { child: Child; url: string }, redisStart: number | undefined) {
  const m = { peakRss: 0, peakWaiting: 0, peakHeld: 0, waitingNow: 0, peakJournal: 0, pipelineThreadsMax: 0, redisPeak: redisStart ?? 0, peakHeap: { total: 0, used: 0, external: 0 } }
  let ticks = 0
  const timer = setInterval(() => {
    const mem = memoryOf(worker.child.pid)
    if (mem) m.peakRss = Math.max(m.peakRss, mem.rssMb)
    type Health = { backlog?: { waiting: number }; held?: number }
    void fetch(`${worker.url}/healthz`).then((r) => r.json() as Promise<Health>).then((h) => {
      m.waitingNow = h.backlog?.waiting ?? 0
      m.peakWaiting = Math.max(m.peakWaiting, m.waitingNow)
      m.peakHeld = Math.max(m.peakHeld, h.held ?? 0)
    }, () => undefined)
    // Journal bytes per organization are on /metrics (not /healthz); read once a second.
    if (ticks++ % 4 === 0) {
      void fetch(`${worker.url}/metrics`).then((r) => r.text()).then((text) => {
        let bytes = 0
        for (const b of text.matchAll(/^switchyard_backlog_bytes\{[^}]*\} (\S+)$/gm)) bytes += Number(b[1])
        m.peakJournal = Math.max(m.peakJournal, bytes)
        // Where the main thread's memory is (the threads' heaps are not in these).
        const mb = (name: string) => Number(new RegExp(`^switchyard_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0) / 2 ** 20
        m.peakHeap.total = Math.max(m.peakHeap.total, mb('nodejs_heap_size_total_bytes'))
        m.peakHeap.used = Math.max(m.peakHeap.used, mb('nodejs_heap_size_used_bytes'))
        m.peakHeap.external = Math.max(m.peakHeap.external, mb('nodejs_external_memory_bytes'))
        m.pipelineThreadsMax = Math.max(m.pipelineThreadsMax, Number(/^switchyard_pipeline_threads (\S+)$/m.exec(text)?.[1] ?? 0))
      }, () => undefined)
      if (redisStart !== undefined) void host.queueMemoryMb?.().then((mb) => (m.redisPeak = Math.max(m.redisPeak, mb ?? 0)))
    }
  }, 250)
  return Object.assign(m, { stop: () => clearInterval(timer) })
}

/**
 * Start the fault, and end it after `seconds`. `over`: when it ended (0 until then); `doneAtEnd`:
 * the first organization's pairs DONE by then; `resumed`: when its strings were DONE again after
 * it (0 until then), awaited by `watch` (polled every 250 ms until then or `stopped`).
 */
async function startFault(host: BurstHost, fault: BurstFault, seconds: number) {
  const first = (await host.control<Array<{ domain: string }>>('/organizations'))[0]!.domain
  const firstDone = async () => (await host.control<{ done: number }>(`/progress?organization=${encodeURIComponent(first)}`)).done
  const f = { fault, what: fault === 'outage' ? `API down for ${seconds} s` : `the first organization forbidden (403) for ${seconds} s`, over: 0, doneAtEnd: 0, resumed: 0, watch: Promise.resolve(), stopped: false }
  if (fault === 'outage') await host.control('/settings', { faults: { errorRate: 1 } })
  // With its length: the emulator ends it by itself should the restore below not reach it.
  else await host.control('/revoke', { organization: first, ms: seconds * 1000 })
  setTimeout(() => {
    void (async () => {
      try {
        // What the first organization had DONE before the fault ended: none of it is DONE while it lasts.
        f.doneAtEnd = await firstDone().catch(() => 0)
        if (fault === 'outage') await host.control('/settings', { faults: { errorRate: 0 } })
        else await host.control('/restore', { organization: first })
      } catch (error) {
        host.log(`burst: ending the fault failed: ${(error as Error).message}`)
      } finally {
        // Always: every wait for the fault's end goes on (a failed call shows in the results).
        f.over = performance.now()
      }
    })()
  }, seconds * 1000)
  f.watch = (async () => {
    while (!f.over) await sleep(100)
    while (!f.resumed && !f.stopped && performance.now() - f.over < 30 * 60_000) {
      if ((await firstDone().catch(() => f.doneAtEnd)) > f.doneAtEnd) f.resumed = performance.now()
      else await sleep(250)
    }
  })()
  return f
}

export async function runBurst(host: BurstHost, s: BurstSettings): Promise<BurstResult> {
  // The first organization's pairs, then the second's: strings of the same sample project.
  // Whole batches of two languages, so the last of the first organization's holds none of the second's.
  const mainStrings = (Math.ceil(s.pairs / s.batchSize) * s.batchSize) / 2
  const secondStrings = Math.ceil((s.secondBatches * s.secondPairs) / 2)
  const total = mainStrings * 2 + secondStrings * 2
  await host.seed(mainStrings, 'qa-gate')
  const source = host.source(mainStrings, 'qa-gate', s.batchSize)
  // The second organization: its own id, domain, project and step at the emulator (same app secret).
  const secondSeed = await secondOrganization(host, secondStrings)
  const secondSource = host.source(secondStrings, 'qa-gate', s.secondPairs, secondSeed)
  const baselineEventsPerSecond = await baselineRate(host, source, s.senders)
  const mainBatches = Math.ceil((mainStrings * 2) / s.batchSize)
  // API_URL with {organization_domain}: each organization is reported under its own domain.
  const worker = await host.startWorker({ API_URL: host.apiUrlTemplate }, true)
  const redisStart = await host.queueMemoryMb?.()
  if (s.secondBatches > 0) await host.connect(worker.url, SECOND.domain)
  const url = new URL(`${worker.url}/webhooks`)
  const agent = new http.Agent({ keepAlive: true, maxSockets: s.senders + 2 })
  const tally = { requests: 0, statuses: {} as Record<string, number> }
  let failed = 0
  const sampled = sampleWorker(host, worker, redisStart)
  const fault = await startFault(host, s.fault ?? 'outage', s.outageSeconds)
  host.log(`burst: ${fault.what}; ${s.pairs} pairs in batches of ${s.batchSize} from ${s.senders} senders (3 retries, 1 s apart, Retry-After ignored)`)
  const started = performance.now()
  let next = 0
  const senders = Array.from({ length: s.senders }, async () => {
    while (next < mainBatches) {
      const b = source.batch(next++)
      if (!(await deliver(agent, url, b, tally))) failed += b.events
    }
  })
  // The second organization: small batches, one every 2 s, from 2 s after the API is back (before
  // that nothing can be DONE), while the first organization's backlog is deep. With `forbidden`,
  // from 2 s after the first's strings are worked on again: its backlog, let go at once, is what the
  // second's batches must not wait behind.
  const secondTimes: Array<number | null> = Array.from({ length: s.secondBatches }, () => null)
  let waitingAtFirstSend = 0
  const second = (async () => {
    if (s.secondBatches <= 0) return
    while (!fault.over) await sleep(100)
    if (fault.fault === 'forbidden') await fault.watch
    await sleep(2000)
    waitingAtFirstSend = sampled.waitingNow
    const checks: Array<Promise<void>> = []
    for (let k = 0; k < s.secondBatches && k < secondSource.count; k++) {
      const b = secondSource.batch(k)
      const sent = performance.now()
      if (!(await deliver(agent, url, b, tally))) failed += b.events
      const ids = [...new Set(Array.from({ length: b.events }, (_, j) => secondSource.sample.strings[Math.floor((k * s.secondPairs + j) / secondSource.sample.languages.length)]!.id))]
      checks.push((async () => {
        const deadline = performance.now() + 5 * 60_000
        while (performance.now() < deadline) {
          const r = await host.control<{ total: number }>(`/statuses?status=DONE&organization=${SECOND.domain}&stringIds=${ids.join(',')}&limit=1`).catch(() => ({ total: 0 }))
          if (r.total >= b.events) {
            secondTimes[k] = (performance.now() - sent) / 1000
            return
          }
          await sleep(100)
        }
      })())
      await sleep(2000)
    }
    await Promise.all(checks)
  })()
  await Promise.all(senders)
  const lastAck = performance.now()
  // The API stays down for the whole outage, however soon every batch was acknowledged (until the
  // ninth session it came back with the last acknowledgement: 38 s into a 60 s outage on a fast
  // machine, so the window never waited out the rest of it).
  while (!fault.over) await sleep(100)
  // A forbidden organization's strings wait for the worker's next try (by design, up to about a
  // minute): its drain counts from when they are worked on again, its lag is resumedAfterSeconds.
  if (fault.fault === 'forbidden') await fault.watch
  const drainFrom = Math.max(fault.fault === 'forbidden' && fault.resumed ? fault.resumed : fault.over, lastAck)
  const doneAtDrain = (await host.control<{ done: number }>('/progress')).done
  let done = doneAtDrain
  // 30 minutes from the fault's end (or the last acknowledgement), however long the wait above.
  const deadline = Math.max(fault.over, lastAck) + 30 * 60_000
  let logged = 0
  while (done < total - failed && performance.now() < deadline) {
    await sleep(250)
    done = (await host.control<{ done: number }>('/progress')).done
    if (performance.now() - logged > 10_000) {
      logged = performance.now()
      host.log(`burst: ${done} of ${total} DONE`)
    }
  }
  const ended = performance.now()
  await second
  // Nothing more to wait for (the drain ended, or gave up): a watch still polling stops.
  fault.stopped = true
  await fault.watch
  sampled.stop()
  agent.destroy()
  const hwm = memoryOf(worker.child.pid)?.hwmMb ?? Number.NaN
  await host.stopChild(worker.child)
  const endToEndPerSecond = perSecond(done, ended - started)
  const drainPerSecond = perSecond(done - doneAtDrain, ended - drainFrom)
  // A batch never DONE counts as infinitely late.
  const sorted = secondTimes.map((t) => t ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b)
  return {
    pairs: mainStrings * 2, batchSize: s.batchSize, senders: s.senders, outageSeconds: s.outageSeconds,
    fault: fault.fault, resumedAfterSeconds: fault.resumed ? round((fault.resumed - fault.over) / 1000, 2) : null, doneDuringFault: fault.doneAtEnd, peakHeld: sampled.peakHeld,
    baselineEventsPerSecond,
    seconds: round((ended - started) / 1000, 1),
    endToEndPerSecond, endToEndVsBaseline: ratio(endToEndPerSecond, baselineEventsPerSecond),
    drainPerSecond, drainVsBaseline: ratio(drainPerSecond, baselineEventsPerSecond),
    drainVsEndToEndScenario: s.endToEndScenarioPerSecond ? ratio(drainPerSecond, s.endToEndScenarioPerSecond) : null,
    requests: tally.requests,
    busy503: tally.statuses['503'] ?? 0,
    non2xx: Object.entries(tally.statuses).filter(([k]) => !k.startsWith('2')).reduce((n, [, c]) => n + c, 0),
    failed, done, notDone: total - done,
    peakRssMb: round(sampled.peakRss, 1), vmHwmMb: round(hwm, 1),
    mainHeapMb: { total: round(sampled.peakHeap.total, 1), used: round(sampled.peakHeap.used, 1), external: round(sampled.peakHeap.external, 1) },
    pipelineThreadsMax: sampled.pipelineThreadsMax,
    peakWaiting: sampled.peakWaiting, peakJournalMb: round(sampled.peakJournal / 2 ** 20, 1),
    redisMb: redisStart === undefined ? null : { start: round(redisStart, 1), peak: round(sampled.redisPeak, 1) },
    second: {
      batches: s.secondBatches, pairsEach: s.secondPairs,
      maxSecondsToDone: round(sorted.at(-1) ?? Number.NaN, 2), medianSecondsToDone: round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, 2),
      waitingAtFirstSend, secondsToDone: secondTimes.map((t) => (t === null ? null : round(t, 2))),
    },
  }
}
