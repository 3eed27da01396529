// The shape of `bench/results.json` and the table printed on stdout (pure; tested in test/bench).
import type { BurstResult } from './burst.js'
import type { RestartResult } from './restart.js'
import type { LatencySummary } from './stats.js'

export interface IngestResult {
  batchSize: number
  concurrency: number
  durationMs: number
  worker: { batchesPerSecond: number; eventsPerSecond: number; latencyMs: LatencySummary; statuses: Record<string, number> }
  baseline: { batchesPerSecond: number; eventsPerSecond: number; latencyMs: LatencySummary; statuses: Record<string, number> }
  /** Worker throughput / baseline throughput. */
  ratio: number
}

export interface EndToEndResult {
  strings: number
  seconds: number
  stringsPerSecond: number
  patchRequests: number
  translationRequests: number
  patchesPerString: number
  translationFetchesPerString: number
  /** Strings per pipeline run (one run per group of a step and language: what a translation fetch and a crossing to the pipeline thread are shared by). */
  stringsPerPipelineRun?: number
  notDone: number
  /**
   * CPU each process used from the first batch sent to the last string DONE, in ms per 1,000
   * strings (Linux /proc; absent elsewhere). The three share the machine's cores, so what one
   * saves the others can use: steadier than the rate for comparing two versions of the worker.
   */
  cpuMsPerThousand?: { worker?: number; workerMainThread?: number; emulator?: number; sender: number }
  /**
   * What the worker did after the run's last string was DONE (its issue work still queued: each
   * run waits for its own before the next begins), until it was nearly idle: how
   * long, its CPU in ms per 1,000 strings of the run, and the comment requests it made meanwhile;
   * `stillBusy` when it was not idle after 30 s.
   */
  afterDone?: { seconds: number; workerCpuMsPerThousand: number; commentRequests: number; stillBusy?: boolean }
  /**
   * The same number of other strings right after, on the same worker, now warm (its code
   * optimized, its caches filled): how it runs in production after its first minutes.
   */
  warm?: EndToEndResult
}

export interface AiRun {
  strings: number
  seconds: number
  stringsPerSecond: number
  modelRequests: number
  modelRequestsPerString: number
  notDone: number
}

export interface AiResult {
  latencyMs: number
  first: AiRun
  cached: AiRun
}

export interface FloodResult {
  strings: number
  queueLimit: number
  seconds: number
  stringsPerSecond: number
  acknowledged: number
  busy503: number
  requests: number
  done: number
  lost: number
  peakRssMb: number
  /** VmHWM at the end: the kernel's own peak. */
  vmHwmMb: number
  journalLeft: number | null
  samples: Array<{ t: number; rssMb: number; donePerSecond: number }>
}

export interface AdversarialRun {
  normalStrings: number
  adversarialStrings: number
  seconds: number
  normalStringsPerSecond: number
  /** The worker main thread's event-loop delay over the run (monitorEventLoopDelay, 10 ms resolution). */
  eventLoopDelayP99Ms: number
  eventLoopDelayMaxMs: number
  /** /healthz answer times as the sender saw them, one probe every 100 ms. */
  healthzP99Ms: number
  healthzMaxMs: number
  checksStopped: number
  /** Each adversarial string: seconds from its batch being sent to an outcome for every language (null: none). */
  outcomes: Array<{ name: string; chars: number; seconds: number | null }>
  /** Runs handed to a spare pipeline thread while long runs held the others (PIPELINE_SPARE_THREADS). */
  spareRuns: number
}

/** One round of the adversarial scenario: its three runs, one after the other. */
export interface AdversarialRound {
  without: AdversarialRun
  /** With the slow texts (issue 17's and the same shapes under maxTextLength). */
  with: AdversarialRun
  /** Normal strings/s with the slow texts / without, in this round. */
  rateRatio: number
  /** With the slow texts and two strings a plugin spins on forever (not run inline). */
  withRunaway?: AdversarialRun
  runawayRateRatio?: number
}

export interface AdversarialResult extends AdversarialRound {
  /** PIPELINE_THREADS of the workers (null: the worker's default). */
  pipelineThreads: number | null
  /** Every round; the runs above are those of the round with the median rate ratio. */
  rounds: AdversarialRound[]
  /** The worst round's event-loop delay p99 and slowest outcome: with the slow texts, and with the runaway strings too. */
  worst: { eventLoopDelayP99Ms: number; slowestOutcomeSeconds: number; runaway?: { eventLoopDelayP99Ms: number; slowestOutcomeSeconds: number } }
}

/** A run's slowest adversarial outcome; infinite when a string had none. */
export function slowestOutcome(run: AdversarialRun): number {
  return run.outcomes.some((o) => o.seconds === null) ? Number.POSITIVE_INFINITY : Math.max(0, ...run.outcomes.map((o) => o.seconds ?? 0))
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The rounds summed up: the median rate ratios, the worst delays and outcomes. */
export function summarizeAdversarial(pipelineThreads: number | null, rounds: AdversarialRound[]): AdversarialResult {
  if (rounds.length === 0) throw new Error('no adversarial round')
  const byRatio = [...rounds].sort((a, b) => a.rateRatio - b.rateRatio)
  const middle = byRatio[Math.floor((byRatio.length - 1) / 2)]!
  const runaway = rounds.flatMap((r) => (r.withRunaway ? [r.withRunaway] : []))
  const runawayRatios = rounds.flatMap((r) => (r.runawayRateRatio !== undefined ? [r.runawayRateRatio] : []))
  return {
    pipelineThreads,
    rounds,
    without: middle.without,
    with: middle.with,
    rateRatio: median(rounds.map((r) => r.rateRatio)),
    ...(middle.withRunaway ? { withRunaway: middle.withRunaway } : {}),
    ...(runawayRatios.length ? { runawayRateRatio: median(runawayRatios) } : {}),
    worst: {
      eventLoopDelayP99Ms: Math.max(...rounds.map((r) => r.with.eventLoopDelayP99Ms)),
      slowestOutcomeSeconds: Math.max(...rounds.map((r) => slowestOutcome(r.with))),
      ...(runaway.length ? { runaway: { eventLoopDelayP99Ms: Math.max(...runaway.map((r) => r.eventLoopDelayP99Ms)), slowestOutcomeSeconds: Math.max(...runaway.map(slowestOutcome)) } } : {}),
    },
  }
}

export interface BenchResults {
  date: string
  mode: 'quick' | 'full'
  machine: { cpus: number; cpuModel: string; node: string; platform: string }
  settings: Record<string, unknown>
  ingest?: IngestResult
  endToEnd?: EndToEndResult
  ai?: AiResult
  flood?: FloodResult
  adversarial?: AdversarialResult
  burst?: BurstResult
  restart?: RestartResult
  targets: Array<{ what: string; target: string; measured: string; met: boolean }>
}

/** Targets of issue 9 checked against the results (reported, never asserted). */
export function checkTargets(r: Pick<BenchResults, 'ingest' | 'endToEnd' | 'ai' | 'flood' | 'adversarial' | 'burst' | 'restart'>): BenchResults['targets'] {
  const t: BenchResults['targets'] = []
  const fmt = (n: number, d = 3) => (Number.isFinite(n) ? String(Number(n.toFixed(d))) : 'n/a')
  if (r.ingest) t.push({ what: 'ingest vs baseline', target: '>= 0.8', measured: fmt(r.ingest.ratio), met: r.ingest.ratio >= 0.8 })
  if (r.ingest) {
    const refused = Object.entries(r.ingest.worker.statuses).filter(([s]) => !s.startsWith('2')).reduce((a, [, c]) => a + c, 0)
    t.push({ what: 'ingest: worker non-2XX', target: '0', measured: String(refused), met: refused === 0 })
  }
  if (r.endToEnd) {
    t.push({ what: 'end to end strings/s', target: '>= 10000', measured: fmt(r.endToEnd.stringsPerSecond, 0), met: r.endToEnd.stringsPerSecond >= 10_000 })
    t.push({ what: 'status PATCH per string', target: '<= 0.01', measured: fmt(r.endToEnd.patchesPerString, 4), met: r.endToEnd.patchesPerString <= 0.01 })
    t.push({ what: 'translation fetches per string', target: '<= 0.01', measured: fmt(r.endToEnd.translationFetchesPerString, 4), met: r.endToEnd.translationFetchesPerString <= 0.01 })
  }
  if (r.endToEnd && r.ingest) {
    // Issue 16 states the end-to-end goal as a ratio to the same run's baseline (0.23-0.24 when it
    // was written): machines differ by 40% in absolute rates, the ratio carries over.
    const e2eVsBaseline = r.endToEnd.stringsPerSecond / r.ingest.baseline.eventsPerSecond
    t.push({ what: 'end to end / ingest baseline events/s', target: '>= 0.30 (goal)', measured: fmt(e2eVsBaseline), met: e2eVsBaseline >= 0.3 })
    // The baseline is measured after a warm-up; so is this one.
    if (r.endToEnd.warm) {
      const warmVsBaseline = r.endToEnd.warm.stringsPerSecond / r.ingest.baseline.eventsPerSecond
      t.push({ what: 'end to end, warm worker / ingest baseline events/s', target: '>= 0.30 (goal)', measured: fmt(warmVsBaseline), met: warmVsBaseline >= 0.3 })
    }
  }
  if (r.ai) {
    t.push({ what: 'model requests per string', target: '<= 0.05', measured: fmt(r.ai.first.modelRequestsPerString, 4), met: r.ai.first.modelRequestsPerString <= 0.05 })
    t.push({ what: 'model requests, cached rerun', target: '0', measured: String(r.ai.cached.modelRequests), met: r.ai.cached.modelRequests === 0 })
  }
  if (r.flood) {
    t.push({ what: 'flood peak RSS (MB)', target: '< 300', measured: fmt(r.flood.peakRssMb, 0), met: r.flood.peakRssMb < 300 })
    t.push({ what: 'flood strings lost', target: '0', measured: String(r.flood.lost), met: r.flood.lost === 0 })
  }
  if (r.adversarial) {
    const a = r.adversarial
    // Issue 17: the worst round's delays and outcomes, the median round's rate.
    const rounds = a.rounds.length > 1 ? ` (worst of ${a.rounds.length} rounds)` : ''
    const median = a.rounds.length > 1 ? ` (median of ${a.rounds.length} rounds)` : ''
    const slowest = a.worst.slowestOutcomeSeconds
    t.push({ what: `adversarial: event-loop delay p99 (ms)${rounds}`, target: '<= 50', measured: fmt(a.worst.eventLoopDelayP99Ms, 1), met: a.worst.eventLoopDelayP99Ms <= 50 })
    t.push({ what: `adversarial: slowest outcome (s)${rounds}`, target: '<= 5', measured: Number.isFinite(slowest) ? fmt(slowest, 2) : 'missing', met: slowest <= 5 })
    t.push({ what: `adversarial: normal rate with / without${median}`, target: '>= 0.9', measured: fmt(a.rateRatio), met: a.rateRatio >= 0.9 })
    if (a.worst.runaway) {
      // Not issue 17's targets (those are for texts built to be slow): two strings a plugin spins
      // on for ever, each pair stopped only after CHECK_TIME_BUDGET_MS of CPU and its thread then
      // replaced. Four such pairs burn about 8 s of CPU in a round whose normal work is about 7.6:
      // the rate cannot come near 0.9 on two cores, and the last outcome, waiting behind the
      // other pairs' budgets, came after 10-14 s in every run so far.
      const w = a.worst.runaway
      const slowestR = w.slowestOutcomeSeconds
      t.push({ what: `adversarial + runaway (beyond issue 17): event-loop delay p99 (ms)${rounds}`, target: '<= 50', measured: fmt(w.eventLoopDelayP99Ms, 1), met: w.eventLoopDelayP99Ms <= 50 })
      t.push({ what: `adversarial + runaway (beyond issue 17): slowest outcome (s)${rounds}`, target: '<= 5', measured: Number.isFinite(slowestR) ? fmt(slowestR, 2) : 'missing', met: slowestR <= 5 })
      t.push({ what: `adversarial + runaway (beyond issue 17): normal rate with / without${median}`, target: '>= 0.9', measured: fmt(a.runawayRateRatio ?? Number.NaN), met: (a.runawayRateRatio ?? 0) >= 0.9 })
    }
  }
  if (r.burst) t.push(...burstTargets(r.burst, fmt))
  if (r.restart) {
    // Issue 16: a restart with a backlog of a million strings. Its start-up is to stay bounded (the
    // journal indexed, not loaded), and nothing acknowledged is lost; memory as the burst's.
    const x = r.restart
    t.push({ what: 'restart: pairs lost (not DONE at the end)', target: '0', measured: String(x.notDone), met: x.notDone === 0 })
    t.push({ what: 'restart: peak RSS from start to drained (MB)', target: '<= 300', measured: fmt(x.drainPeakRssMb, 0), met: x.drainPeakRssMb <= 300 })
  }
  return t
}

/** Issue 16's targets for the burst during an outage. */
function burstTargets(b: BurstResult, fmt: (n: number, d?: number) => string): BenchResults['targets'] {
  const t: BenchResults['targets'] = [
    { what: 'burst: strings FAILED (refused 4 times)', target: '0', measured: String(b.failed), met: b.failed === 0 },
    { what: 'burst: 503 answers', target: '0', measured: String(b.busy503), met: b.busy503 === 0 },
    { what: 'burst: peak RSS (MB)', target: '<= 300', measured: fmt(b.peakRssMb, 0), met: b.peakRssMb <= 300 },
    { what: 'burst: not DONE at the end', target: '0', measured: String(b.notDone), met: b.notDone === 0 },
    { what: 'burst: end to end / baseline events/s', target: '>= 0.30 (goal)', measured: fmt(b.endToEndVsBaseline), met: b.endToEndVsBaseline >= 0.3 },
  ]
  if (b.second.batches > 0) t.push({ what: "burst: second organization's batches DONE (s, max)", target: '<= 10', measured: fmt(b.second.maxSecondsToDone, 2), met: b.second.maxSecondsToDone <= 10 })
  if (b.drainVsEndToEndScenario !== null) t.push({ what: 'burst: drain rate / e2e scenario rate', target: '>= 0.8', measured: fmt(b.drainVsEndToEndScenario), met: b.drainVsEndToEndScenario >= 0.8 })
  return t
}

export function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)))
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n')
}

/** Everything measured, one row per number, for stdout. */
export function resultRows(r: BenchResults): string[][] {
  const rows: string[][] = [['measure', 'value']]
  const n = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : 'n/a')
  if (r.ingest) {
    const i = r.ingest
    rows.push(['ingest: worker batches/s', n(i.worker.batchesPerSecond)])
    rows.push(['ingest: baseline batches/s', n(i.baseline.batchesPerSecond)])
    rows.push(['ingest: worker / baseline', n(i.ratio, 3)])
    rows.push(['ingest: worker p50 / p99 ms', `${n(i.worker.latencyMs.p50, 2)} / ${n(i.worker.latencyMs.p99, 2)}`])
    rows.push(['ingest: baseline p50 / p99 ms', `${n(i.baseline.latencyMs.p50, 2)} / ${n(i.baseline.latencyMs.p99, 2)}`])
    rows.push(['ingest: worker non-2XX', String(Object.entries(i.worker.statuses).filter(([s]) => !s.startsWith('2')).reduce((a, [, c]) => a + c, 0))])
  }
  if (r.endToEnd) {
    const e = r.endToEnd
    rows.push(['e2e: strings', String(e.strings)])
    rows.push(['e2e: strings/s', n(e.stringsPerSecond, 0)])
    rows.push(['e2e: status PATCH per string', n(e.patchesPerString, 4)])
    rows.push(['e2e: translation fetches per string', n(e.translationFetchesPerString, 4)])
    if (e.stringsPerPipelineRun !== undefined) rows.push(['e2e: strings per pipeline run', n(e.stringsPerPipelineRun, 1)])
    rows.push(['e2e: not DONE at the end', String(e.notDone)])
    const cpuRows = (label: string, c: NonNullable<EndToEndResult['cpuMsPerThousand']>) => {
      rows.push([`${label}: CPU ms per 1,000 strings: worker / emulator / sender`, `${n(c.worker ?? Number.NaN, 0)} / ${n(c.emulator ?? Number.NaN, 0)} / ${n(c.sender, 0)}`])
      rows.push([`${label}: the worker's main thread, CPU ms per 1,000 strings`, n(c.workerMainThread ?? Number.NaN, 0)])
    }
    if (e.cpuMsPerThousand) cpuRows('e2e', e.cpuMsPerThousand)
    const afterRow = (label: string, a: EndToEndResult['afterDone']) => {
      if (a) rows.push([`${label}: after the last DONE (issue work): s / worker CPU ms per 1,000 strings / comment requests`, `${a.stillBusy ? '> ' : ''}${n(a.seconds, 1)} / ${n(a.workerCpuMsPerThousand, 0)} / ${a.commentRequests}`])
    }
    afterRow('e2e', e.afterDone)
    if (e.warm) {
      rows.push(['e2e, warm worker (a second run): strings/s', n(e.warm.stringsPerSecond, 0)])
      rows.push(['e2e, warm worker: not DONE at the end', String(e.warm.notDone)])
      if (e.warm.cpuMsPerThousand) cpuRows('e2e, warm worker', e.warm.cpuMsPerThousand)
      afterRow('e2e, warm worker', e.warm.afterDone)
    }
  }
  if (r.ai) {
    rows.push([`ai (${r.ai.latencyMs} ms model): strings/s`, n(r.ai.first.stringsPerSecond)])
    rows.push(['ai: model requests per string', n(r.ai.first.modelRequestsPerString, 4)])
    rows.push(['ai cached rerun: strings/s', n(r.ai.cached.stringsPerSecond)])
    rows.push(['ai cached rerun: model requests', String(r.ai.cached.modelRequests)])
  }
  if (r.flood) {
    const f = r.flood
    rows.push(['flood: strings offered', String(f.strings)])
    rows.push(['flood: strings/s (QUEUE_LIMIT ' + f.queueLimit + ')', n(f.stringsPerSecond, 0)])
    rows.push(['flood: 503 answers', String(f.busy503)])
    rows.push(['flood: peak RSS MB (sampled / VmHWM)', `${n(f.peakRssMb, 0)} / ${n(f.vmHwmMb, 0)}`])
    rows.push(['flood: acknowledged / DONE / lost', `${f.acknowledged} / ${f.done} / ${f.lost}`])
  }
  if (r.adversarial) {
    const a = r.adversarial
    const runs: Array<[string, AdversarialRun]> = [['without', a.without], ['with', a.with]]
    if (a.withRunaway) runs.push(['+ runaway', a.withRunaway])
    for (const [label, x] of runs) {
      rows.push([`adversarial ${label}: normal strings/s`, n(x.normalStringsPerSecond, 0)])
      rows.push([`adversarial ${label}: event-loop delay p99 / max ms`, `${n(x.eventLoopDelayP99Ms)} / ${n(x.eventLoopDelayMaxMs)}`])
      rows.push([`adversarial ${label}: /healthz p99 / max ms`, `${n(x.healthzP99Ms)} / ${n(x.healthzMaxMs)}`])
      if (x.outcomes.length) {
        rows.push([`adversarial ${label}: checks stopped by the budget`, String(x.checksStopped)])
        rows.push([`adversarial ${label}: runs on spare threads`, String(x.spareRuns)])
        rows.push([`adversarial ${label}: slowest outcome s`, n(Math.max(0, ...x.outcomes.map((o) => o.seconds ?? Number.POSITIVE_INFINITY)), 2)])
      }
    }
    if (a.rounds.length > 1) {
      rows.push(['adversarial: rounds (runs above: the median round)', String(a.rounds.length)])
      rows.push(['adversarial: normal rate with / without, each round', a.rounds.map((x) => n(x.rateRatio, 3)).join(' ')])
      if (a.runawayRateRatio !== undefined) rows.push(['adversarial + runaway: normal rate / without, each round', a.rounds.map((x) => n(x.runawayRateRatio ?? Number.NaN, 3)).join(' ')])
    }
    rows.push(['adversarial: normal rate with / without', n(a.rateRatio, 3)])
    if (a.runawayRateRatio !== undefined) rows.push(['adversarial + runaway: normal rate / without', n(a.runawayRateRatio, 3)])
  }
  if (r.burst) {
    const b = r.burst
    const fault = b.fault === 'forbidden' ? `first organization forbidden (403) for ${b.outageSeconds} s` : `${b.outageSeconds} s outage`
    rows.push([`burst: pairs (batches of ${b.batchSize}, ${fault})`, String(b.pairs)])
    rows.push(['burst: baseline events/s', n(b.baselineEventsPerSecond, 0)])
    rows.push(['burst: end to end pairs/s (/ baseline)', `${n(b.endToEndPerSecond, 0)} (${n(b.endToEndVsBaseline, 3)})`])
    if (b.doneDuringFault !== undefined) rows.push(["burst: the first organization's pairs DONE during the fault / most strings held", `${b.doneDuringFault} / ${b.peakHeld ?? 0}`])
    if (b.resumedAfterSeconds !== undefined) rows.push(["burst: the first organization's strings DONE again after the fault (s)", b.resumedAfterSeconds === null ? 'never' : n(b.resumedAfterSeconds, 2)])
    rows.push([b.fault === 'forbidden' ? 'burst: drain pairs/s from then (/ baseline)' : 'burst: drain pairs/s (/ baseline)', `${n(b.drainPerSecond, 0)} (${n(b.drainVsBaseline, 3)})`])
    rows.push(['burst: requests / 503 / non-2XX / FAILED', `${b.requests} / ${b.busy503} / ${b.non2xx} / ${b.failed}`])
    rows.push(['burst: peak RSS MB (sampled / VmHWM)', `${n(b.peakRssMb, 0)} / ${n(b.vmHwmMb, 0)}`])
    if (b.mainHeapMb) rows.push(['burst: main thread heap MB at peak (allocated / used / external)', `${n(b.mainHeapMb.total, 0)} / ${n(b.mainHeapMb.used, 0)} / ${n(b.mainHeapMb.external, 0)}`])
    if (b.pipelineThreadsMax) rows.push(['burst: pipeline threads at most (spare ones included)', String(b.pipelineThreadsMax)])
    rows.push([b.redisMb ? 'burst: peak waiting in Redis / its estimate in MB (BACKLOG_MAX_MB)' : 'burst: peak waiting on disk / journal MB', `${b.peakWaiting} / ${n(b.peakJournalMb, 1)}`])
    if (b.redisMb) rows.push(['burst: Redis used memory MB (before / peak; QUEUE=bullmq)', `${n(b.redisMb.start, 0)} / ${n(b.redisMb.peak, 0)}`])
    if (b.second.batches > 0) rows.push([`burst: second organization DONE after (s, median / max; ${b.second.batches} batches of ${b.second.pairsEach})`, `${n(b.second.medianSecondsToDone, 2)} / ${n(b.second.maxSecondsToDone, 2)}`])
    if (b.second.batches > 0) rows.push(['burst: first organization waiting on disk as the second sends', String(b.second.waitingAtFirstSend)])
    rows.push(['burst: DONE / not DONE', `${b.done} / ${b.notDone}`])
  }
  if (r.restart) {
    const x = r.restart
    rows.push([`restart: pairs (batches of ${x.batchSize}) / FAILED`, `${x.pairs} / ${x.failed}`])
    rows.push(['restart: pairs in the journal / backlog MB as BACKLOG_MAX_MB counts it, when killed', `${x.journalAtKill} / ${n(x.journalMbAtKill, 1)}`])
    rows.push(['restart: s to /readyz / to the journal indexed', `${n(x.readySeconds, 2)} / ${n(x.replayedSeconds, 2)}`])
    rows.push(['restart: pairs in the journal 5 s after indexed', String(x.journalAfterReplay)])
    rows.push(['restart: peak RSS MB to 5 s after indexed / RSS then / main heap used', `${n(x.startPeakRssMb, 0)} / ${n(x.rssAfterReplayMb, 0)} / ${n(x.heapUsedAfterReplayMb, 0)}`])
    rows.push(['restart: drain pairs/s (/ baseline)', `${n(x.drainPerSecond, 0)} (${n(x.drainVsBaseline, 3)})`])
    rows.push(['restart: peak RSS MB, start to drained', n(x.drainPeakRssMb, 0)])
    rows.push(['restart: DONE / not DONE', `${x.done} / ${x.notDone}`])
  }
  return rows
}
