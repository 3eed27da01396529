// The "restart" scenario of `switchyard bench` (issue 16): a worker with a backlog of a million
// string-language pairs on disk (the API down since before the first batch) is killed without
// warning (SIGKILL, as a crash or an OOM kill would), and a new one starts on the same data. What
// counts: how long it takes to be ready and to have indexed the journal, the memory it takes to
// do so (the journal is indexed one entry at a time, not loaded), and that every pair is DONE once
// the API is back, none lost, at a drain rate given also as a ratio to the same run's baseline.
import http from 'node:http'
import { baselineRate, deliver, type BurstHost } from './burst.js'
import { memoryOf, type Child } from './processes.js'
import { perSecond, ratio, round } from './stats.js'

export interface RestartResult {
  pairs: number
  batchSize: number
  /** Pairs whose batch was refused 4 times by the first worker (the service marks them FAILED). */
  failed: number
  /** Pairs acknowledged and not done (/healthz `journal`) when the first worker was killed: on disk, some of them also in its window. */
  journalAtKill: number
  /** Backlog bytes then, as BACKLOG_MAX_MB counts them (the jobs' compact text; /metrics), not the store's file size. */
  journalMbAtKill: number
  /** From starting the new process to its /readyz answering 200 (what a load balancer waits for). */
  readySeconds: number
  /** From starting it to the journal indexed (/healthz `replaying` false). */
  replayedSeconds: number
  /**
   * Pairs the new worker holds in its journal 5 s after it was indexed (the API still down): all of
   * them, if nothing was lost. (With QUEUE=bullmq nothing is indexed: the count is Redis's, which
   * an instance refreshes every 250 ms from its start.)
   */
  journalAfterReplay: number
  /** Peak RSS (VmHWM) of the new worker from its start to 5 s after the journal was indexed (the API still down), and its RSS then. */
  startPeakRssMb: number
  rssAfterReplayMb: number
  /** The new worker's main heap used once indexed (from /metrics). */
  heapUsedAfterReplayMb: number
  baselineEventsPerSecond: number
  /** Pairs DONE per second from the API's return to the last DONE. */
  drainPerSecond: number
  drainVsBaseline: number
  /** Peak RSS (VmHWM) of the new worker from its start to the end of the drain. */
  drainPeakRssMb: number
  done: number
  notDone: number
}

export interface RestartHost extends BurstHost {
  /** Start a worker again on the data (and port) of an earlier one. */
  restartWorker(previous: { child: Child; url: string }, env: Record<string, string>): Promise<{ child: Child; url: string }>
  /** The emulator's first organization (the one seeded), whose progress alone is counted. */
  organizationDomain: string
}

export interface RestartSettings {
  pairs: number
  batchSize: number
  senders: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Health = { replaying?: boolean; journal?: number }

async function health(url: string): Promise<Health | undefined> {
  return fetch(`${url}/healthz`).then((r) => r.json() as Promise<Health>, () => undefined)
}

async function metric(url: string, pattern: RegExp): Promise<number> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text(), () => '')
  let sum = 0
  for (const m of text.matchAll(pattern)) sum += Number(m[1])
  return sum
}

export async function runRestart(host: RestartHost, s: RestartSettings): Promise<RestartResult> {
  const strings = (Math.ceil(s.pairs / s.batchSize) * s.batchSize) / 2
  const total = strings * 2
  await host.seed(strings, 'qa-gate')
  const source = host.source(strings, 'qa-gate', s.batchSize)
  const baselineEventsPerSecond = await baselineRate(host, source, s.senders)
  const env = { API_URL: host.apiUrlTemplate }
  const first = await host.startWorker(env, true)
  host.log(`restart: API down; ${total} pairs in batches of ${s.batchSize} from ${s.senders} senders, then the worker is killed (SIGKILL) and started again`)
  await host.control('/settings', { faults: { errorRate: 1 } })
  const url = new URL(`${first.url}/webhooks`)
  const agent = new http.Agent({ keepAlive: true, maxSockets: s.senders })
  const tally = { requests: 0, statuses: {} as Record<string, number> }
  let failed = 0
  let next = 0
  await Promise.all(Array.from({ length: s.senders }, async () => {
    while (next < source.count) {
      const b = source.batch(next++)
      if (!(await deliver(agent, url, b, tally))) failed += b.events
    }
  }))
  agent.destroy()
  const journalAtKill = (await health(first.url))?.journal ?? 0
  const journalMbAtKill = round((await metric(first.url, /^switchyard_backlog_bytes\{[^}]*\} (\S+)$/gm)) / 2 ** 20, 1)
  const exited = new Promise((r) => first.child.process.once('exit', r))
  first.child.process.kill('SIGKILL')
  await exited
  await host.stopChild(first.child)

  // The new worker. Its peak RSS is the kernel's high-water mark (VmHWM), which covers everything
  // from its spawn on, read once the journal is indexed (and 5 s more) and again at the end.
  const started = performance.now()
  const second = await host.restartWorker(first, env)
  const pid = second.child.pid
  const readySeconds = (performance.now() - started) / 1000
  let h = await health(second.url)
  while (h?.replaying !== false) {
    await sleep(50)
    h = await health(second.url)
  }
  const replayedSeconds = (performance.now() - started) / 1000
  await sleep(5000)
  const journalAfterReplay = (await health(second.url))?.journal ?? 0
  const startPeakRssMb = round(memoryOf(pid)?.hwmMb ?? Number.NaN, 1)
  const rssAfterReplayMb = round(memoryOf(pid)?.rssMb ?? Number.NaN, 1)
  const heapUsedAfterReplayMb = round((await metric(second.url, /^switchyard_nodejs_heap_size_used_bytes (\S+)$/gm)) / 2 ** 20, 1)

  host.log(`restart: ready after ${readySeconds.toFixed(2)} s, indexed after ${replayedSeconds.toFixed(2)} s, ${journalAfterReplay} pairs in the journal 5 s later; the API is back`)
  const progress = `/progress?organization=${encodeURIComponent(host.organizationDomain)}`
  const doneBefore = (await host.control<{ done: number }>(progress)).done
  await host.control('/settings', { faults: { errorRate: 0 } })
  const drainFrom = performance.now()
  let done = doneBefore
  const deadline = drainFrom + 30 * 60_000
  let logged = drainFrom
  while (done < total - failed && performance.now() < deadline) {
    await sleep(250)
    done = (await host.control<{ done: number }>(progress)).done
    if (performance.now() - logged > 10_000) {
      logged = performance.now()
      host.log(`restart: ${done} of ${total} DONE`)
    }
  }
  const drainMs = performance.now() - drainFrom
  const drainPeakRssMb = round(memoryOf(pid)?.hwmMb ?? Number.NaN, 1)
  await host.stopChild(second.child)
  const drainPerSecond = perSecond(done - doneBefore, drainMs)
  return {
    pairs: total, batchSize: s.batchSize, failed, journalAtKill, journalMbAtKill,
    readySeconds: round(readySeconds, 2), replayedSeconds: round(replayedSeconds, 2), journalAfterReplay,
    startPeakRssMb, rssAfterReplayMb, heapUsedAfterReplayMb,
    baselineEventsPerSecond, drainPerSecond, drainVsBaseline: ratio(drainPerSecond, baselineEventsPerSecond), drainPeakRssMb,
    done, notDone: total - done,
  }
}
