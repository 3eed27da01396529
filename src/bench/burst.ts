// The "burst" scenario of `switchyard bench` (issue 16): a large burst of string-language pairs in
// batches of 1,000, offered by senders that behave like the service (3 retries, 1 s apart,
// Retry-After ignored) while the API is down (every answer a 500) for the first part of it. What
// counts: no batch refused for good (the service would mark its strings FAILED), peak memory,
// every string DONE at the end, how fast the backlog drains once the API is back, and whether a
// second organization's small batches, sent while the backlog is deep, are DONE quickly.
// Rates are also given as ratios to the same run's baseline (a plain node:http server taking the
// same batches), since machines differ by 40% in absolute rates.
import http from 'node:http'
import { signBody } from '../protocol/webhook-signature.js'
import type { Batch } from './load-generator.js'
import { runLoad } from './load-generator.js'
import { memoryOf, type Child } from './processes.js'
import { perSecond, ratio, round } from './stats.js'
import type { BatchSource } from './webhook-bodies.js'

export interface BurstResult {
  pairs: number
  batchSize: number
  senders: number
  outageSeconds: number
  /** Baseline server, same batches: events/s. */
  baselineEventsPerSecond: number
  seconds: number
  /** Pairs DONE per second, from the first POST to the last DONE (outage included). */
  endToEndPerSecond: number
  endToEndVsBaseline: number
  /** Pairs DONE per second from the end of the outage (or the last acknowledgement, if later) to the last DONE. */
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
  /** Most strings waiting on disk, and most journal bytes, seen on /healthz. */
  peakWaiting: number
  peakJournalMb: number
  second: { batches: number; pairsEach: number; maxSecondsToDone: number; medianSecondsToDone: number }
}

export interface BurstHost {
  control<T>(route: string, body?: unknown): Promise<T>
  seed(strings: number, moduleKey: string): Promise<void>
  source(strings: number, moduleKey: string, batchSize?: number): BatchSource
  startWorker(env: Record<string, string>, connect: boolean): Promise<{ child: Child; url: string }>
  stopChild(child: Child): Promise<void>
  startBaseline(): Promise<{ child: Child; url: string }>
  appSecret: string
  log(message: string): void
}

export interface BurstSettings {
  pairs: number
  batchSize: number
  senders: number
  outageSeconds: number
  secondBatches: number
  secondPairs: number
  endToEndScenarioPerSecond?: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** POST a batch as the service does: 1 + 3 tries, 1 s apart, whatever Retry-After says. */
async function deliver(agent: http.Agent, url: URL, batch: Batch, tally: { requests: number; statuses: Record<string, number> }): Promise<boolean> {
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

/** The same batch as another organization: its id in the events and the header, signed again. */
function asOrganization(batch: Batch, fromId: string, toId: string, appSecret: string): Batch {
  const body = Buffer.from(batch.body.toString('utf8').split(`"organizationId":${JSON.stringify(fromId)}`).join(`"organizationId":${JSON.stringify(toId)}`))
  const headers = { ...batch.headers, 'X-Service-Id': toId, 'X-Service-Signature': signBody(body, appSecret) }
  return { ...batch, body, headers }
}

async function baselineRate(host: BurstHost, source: BatchSource, senders: number): Promise<number> {
  const baseline = await host.startBaseline()
  const pool = Array.from({ length: Math.min(20, source.count) }, (_, i) => source.batch(i))
  const r = await runLoad({ url: baseline.url, concurrency: senders, count: Number.MAX_SAFE_INTEGER, batch: (i) => pool[i % pool.length]!, durationMs: 4000 })
  await host.stopChild(baseline.child)
  return perSecond(r.ackedEvents, r.durationMs)
}

export async function runBurst(host: BurstHost, s: BurstSettings): Promise<BurstResult> {
  // The first organization's pairs, then the second's: strings of the same sample project.
  // Whole batches of two languages, so the last of the first organization's holds none of the second's.
  const mainStrings = (Math.ceil(s.pairs / s.batchSize) * s.batchSize) / 2
  const secondStrings = Math.ceil((s.secondBatches * s.secondPairs) / 2)
  const total = mainStrings * 2 + s.secondBatches * s.secondPairs
  await host.seed(mainStrings + secondStrings, 'qa-gate')
  const source = host.source(mainStrings + secondStrings, 'qa-gate', s.batchSize)
  const baselineEventsPerSecond = await baselineRate(host, source, s.senders)
  const mainBatches = Math.ceil((mainStrings * 2) / s.batchSize)
  const worker = await host.startWorker({}, true)
  const url = new URL(`${worker.url}/webhooks`)
  const agent = new http.Agent({ keepAlive: true, maxSockets: s.senders + 2 })
  const tally = { requests: 0, statuses: {} as Record<string, number> }
  let failed = 0
  let peakRss = 0
  let peakWaiting = 0
  let peakJournal = 0
  const sampler = setInterval(() => {
    const m = memoryOf(worker.child.pid)
    if (m) peakRss = Math.max(peakRss, m.rssMb)
    type Health = { backlog?: { waiting: number; organizations: Array<{ bytes: number }> } }
    void fetch(`${worker.url}/healthz`).then((r) => r.json() as Promise<Health>).then((h) => {
      peakWaiting = Math.max(peakWaiting, h.backlog?.waiting ?? 0)
      peakJournal = Math.max(peakJournal, (h.backlog?.organizations ?? []).reduce((n, o) => n + o.bytes, 0))
    }, () => undefined)
  }, 250)

  host.log(`burst: API down for ${s.outageSeconds} s; ${s.pairs} pairs in batches of ${s.batchSize} from ${s.senders} senders (3 retries, 1 s apart, Retry-After ignored)`)
  await host.control('/settings', { faults: { errorRate: 1 } })
  const started = performance.now()
  let outageOver = 0
  const outage = setTimeout(() => {
    void host.control('/settings', { faults: { errorRate: 0 } }).then(() => (outageOver = performance.now()))
  }, s.outageSeconds * 1000)
  let next = 0
  const senders = Array.from({ length: s.senders }, async () => {
    while (next < mainBatches) {
      const b = source.batch(next++)
      if (!(await deliver(agent, url, b, tally))) failed += b.events
    }
  })
  // The second organization: small batches, one every 2 s, from when the backlog is deep.
  const secondId = `${source.sample.organization.id}-second`
  const secondTimes: number[] = []
  const second = (async () => {
    if (s.secondBatches <= 0) return
    await sleep(Math.min(10_000, (s.outageSeconds * 1000) / 2))
    const firstIndex = mainStrings * 2
    const checks: Array<Promise<void>> = []
    for (let k = 0; k < s.secondBatches; k++) {
      const from = firstIndex + k * s.secondPairs
      const b = asOrganization(smallBatch(source, s.batchSize, from, s.secondPairs), source.sample.organization.id, secondId, host.appSecret)
      const sent = performance.now()
      if (!(await deliver(agent, url, b, tally))) failed += b.events
      const ids = [...new Set(Array.from({ length: s.secondPairs }, (_, j) => source.sample.strings[Math.floor((from + j) / 2)]!.id))]
      checks.push((async () => {
        for (;;) {
          const r = await host.control<{ total: number }>(`/statuses?status=DONE&stringIds=${ids.join(',')}`).catch(() => ({ total: 0 }))
          if (r.total >= s.secondPairs) break
          await sleep(100)
        }
        secondTimes.push((performance.now() - sent) / 1000)
      })())
      await sleep(2000)
    }
    await Promise.all(checks)
  })()
  await Promise.all(senders)
  const lastAck = performance.now()
  clearTimeout(outage)
  if (!outageOver) {
    await host.control('/settings', { faults: { errorRate: 0 } })
    outageOver = performance.now()
  }
  const drainFrom = Math.max(outageOver, lastAck)
  const doneAtDrain = (await host.control<{ done: number }>('/progress')).done
  let done = doneAtDrain
  const deadline = performance.now() + 30 * 60_000
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
  clearInterval(sampler)
  agent.destroy()
  const hwm = memoryOf(worker.child.pid)?.hwmMb ?? Number.NaN
  await host.stopChild(worker.child)
  const endToEndPerSecond = perSecond(done, ended - started)
  const drainPerSecond = perSecond(done - doneAtDrain, ended - drainFrom)
  const sorted = [...secondTimes].sort((a, b) => a - b)
  return {
    pairs: mainStrings * 2, batchSize: s.batchSize, senders: s.senders, outageSeconds: s.outageSeconds,
    baselineEventsPerSecond,
    seconds: round((ended - started) / 1000, 1),
    endToEndPerSecond, endToEndVsBaseline: ratio(endToEndPerSecond, baselineEventsPerSecond),
    drainPerSecond, drainVsBaseline: ratio(drainPerSecond, baselineEventsPerSecond),
    drainVsEndToEndScenario: s.endToEndScenarioPerSecond ? ratio(drainPerSecond, s.endToEndScenarioPerSecond) : null,
    requests: tally.requests,
    busy503: tally.statuses['503'] ?? 0,
    non2xx: Object.entries(tally.statuses).filter(([k]) => !k.startsWith('2')).reduce((n, [, c]) => n + c, 0),
    failed, done, notDone: total - done,
    peakRssMb: round(peakRss, 1), vmHwmMb: round(hwm, 1),
    peakWaiting, peakJournalMb: round(peakJournal / 2 ** 20, 1),
    second: { batches: s.secondBatches, pairsEach: s.secondPairs, maxSecondsToDone: round(sorted.at(-1) ?? Number.NaN, 2), medianSecondsToDone: round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, 2) },
  }
}

/** A batch of `n` pairs starting at pair `from` (the source's batches are fixed-size). */
function smallBatch(source: BatchSource, size: number, from: number, n: number): Batch {
  // The source cuts batches of `size`; take the one that holds `from` and cut it down.
  const index = Math.floor(from / size)
  const b = source.batch(index)
  const events = JSON.parse(b.body.toString('utf8')) as { events: unknown[] }
  const offset = from - index * size
  const body = Buffer.from(JSON.stringify({ events: events.events.slice(offset, offset + n) }))
  return { body, events: Math.min(n, events.events.length - offset), headers: b.headers }
}
