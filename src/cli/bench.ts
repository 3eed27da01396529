// `switchyard bench`: the emulator, the worker and a baseline server as separate processes on
// loopback, driven by a load generator in this process (which does nothing else while it sends,
// so on a 2-core machine the worker gets one core and the sender the other; the emulator only
// answers API calls). Measurements in one run: ingest vs a plain node:http baseline, end to end
// through qa-gate, AI proofreading with a slow fake model and its cached rerun, a flood, a burst
// during an API outage (src/bench/burst.ts), a restart with a backlog of a million pairs
// (src/bench/restart.ts), and adversarial texts mixed into the load.
// Results: a table on stdout, bench/results.json and bench/flood.svg.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PACKAGE_ROOT } from '../config/load-config.js'
import { runBurst, type BurstFault } from '../bench/burst.js'
import { runRestart } from '../bench/restart.js'
import { runLoad } from '../bench/load-generator.js'
import { cpuMsOf, memoryOf, startChild, stopChildrenOnSignal, waitFor, type Child } from '../bench/processes.js'
import { checkTargets, formatTable, resultRows, summarizeAdversarial, type AdversarialResult, type AdversarialRound, type AdversarialRun, type AiRun, type BenchResults, type EndToEndResult, type FloodResult, type IngestResult } from '../bench/report.js'
import { adversarialTexts, RUNAWAY_MARKER, RUNAWAY_PLUGIN } from '../bench/adversarial-texts.js'
import { perSecond, ratio, round, summarizeLatencies } from '../bench/stats.js'
import { renderFloodChart, type FloodSample } from '../bench/svg-chart.js'
import { batchSource, bumpRevisions, underOtherOrganizations, type BatchSource } from '../bench/webhook-bodies.js'
import type { Batch } from '../bench/load-generator.js'
import type { SeedOptions } from '../emulator/sample-project.js'
import { connectThroughBrowser } from './demo.js'
import { freePort } from '../util/free-port.js'

const STATUS_ENDPOINT = 'PATCH /api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status'
const TRANSLATIONS_ENDPOINT = 'GET /api/v2/projects/:projectId/languages/:languageId/translations'
const LANGUAGES = ['de', 'fr']
/** The end-to-end scenario's second run: another project, so that none of its strings is a repeat of the first run's. */
const WARM_PROJECT = 43

interface Settings {
  quick: boolean
  concurrency: number
  batchSize: number
  ingestSeconds: number
  ingestPool: number
  e2eStrings: number
  aiStrings: number
  aiLatencyMs: number
  floodStrings: number
  floodQueueLimit: number
  burstPairs: number
  burstOutageSeconds: number
  /** What the burst's first `burstOutageSeconds` are: the API down, or the first organization forbidden. */
  burstFault: BurstFault
  restartPairs: number
  /** A postgres:// STORE_URL for the workers instead of a SQLite file each (a table per worker). */
  storeUrl: string | undefined
  /** A redis:// URL: the workers run QUEUE=bullmq there, each on a queue of its own. */
  queueUrl: string | undefined
  workerConcurrency: number | undefined
  pipelineThreads: number | undefined
  adversarialStrings: number
  adversarialRounds: number
  /** The source of the adversarial strings; undefined: the adversarial text itself. */
  adversarialSource: string | undefined
  only: Set<string>
  profile: boolean
  out: string
}

const USAGE = `switchyard bench [options]

  --quick               small counts and a short model latency (a few minutes)
  --only LIST           run only some of: ingest,e2e,ai,flood,burst,restart,adversarial
  --concurrency N       sender connections (default 16)
  --ai-latency MS       latency of the fake model (default 800; quick 100)
  --flood N             strings offered in the flood (default 200000)
  --burst N             string-language pairs of the burst (default 1000000; quick 20000)
  --outage S            seconds the burst's fault lasts at its start (default 60; quick 5)
  --burst-fault F       the fault: outage (the API down, every answer a 500; the default) or
                        forbidden (the first organization's token may not update
                        statuses: 403, its strings held on disk until it may again)
  --restart N           string-language pairs left on disk, in batches of 100, by a worker then
                        killed and started again (default 1000000; quick 20000)
  --worker-concurrency N  CONCURRENCY of the worker (default: the worker's own default)
  --store-url URL       a postgres:// STORE_URL for the workers instead of a SQLite file each:
                        each worker gets its own table there (switchyard_bench_*), dropped at
                        the end (a bench stopped by a signal leaves them)
  --queue-url URL       a redis:// Redis for the workers: QUEUE=bullmq, each worker on a queue of
                        its own (QUEUE_NAME switchyard_bench_*), whose keys are deleted at the end
                        (a bench stopped by a signal leaves them); the burst then also reports
                        Redis's used memory
  --pipeline-threads N  PIPELINE_THREADS of the worker (default: the worker's own; 0: inline)
  --adversarial N       normal strings of the adversarial scenario (default 20000; quick 6000)
  --adversarial-rounds N  rounds of the adversarial scenario (default 3; quick 1): the rate
                        ratio is the median round's, outcomes and delays the worst round's
  --adversarial-source TEXT  the adversarial strings' source (default: the adversarial text
                        itself, as source and translation); a plain sentence here puts the
                        text only in the translations, as a translator would
  --profile             run the worker with --cpu-prof (profiles in bench/profiles/)
  --out DIR             where results.json and flood.svg go (default bench/)

Environment: BENCH_WORKER_NODE_ARGS sets the worker's node flags (default --max-old-space-size=512
--max-semi-space-size=8, as npm start runs it).`

function parseArgs(args: string[]): Settings | string {
  const quick = args.includes('--quick')
  const s: Settings = {
    quick,
    concurrency: 16,
    batchSize: 100,
    ingestSeconds: quick ? 3 : 8,
    ingestPool: quick ? 50 : 100,
    e2eStrings: quick ? 10_000 : 30_000,
    aiStrings: quick ? 300 : 1000,
    aiLatencyMs: quick ? 100 : 800,
    floodStrings: quick ? 40_000 : 200_000,
    floodQueueLimit: quick ? 1000 : 2000,
    burstPairs: quick ? 20_000 : 1_000_000,
    burstOutageSeconds: quick ? 5 : 60,
    burstFault: 'outage',
    restartPairs: quick ? 20_000 : 1_000_000,
    storeUrl: undefined,
    queueUrl: undefined,
    workerConcurrency: undefined,
    pipelineThreads: undefined,
    adversarialStrings: quick ? 6000 : 20_000,
    adversarialRounds: quick ? 1 : 3,
    adversarialSource: undefined,
    only: new Set(['ingest', 'e2e', 'ai', 'flood', 'burst', 'restart', 'adversarial']),
    profile: false,
    out: path.join(PACKAGE_ROOT, 'bench'),
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const num = () => {
      const v = Number(args[++i])
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${a} takes a positive number`)
      return v
    }
    try {
      if (a === '--quick') continue
      else if (a === '--only') s.only = new Set((args[++i] ?? '').split(',').filter(Boolean))
      else if (a === '--concurrency') s.concurrency = num()
      else if (a === '--ai-latency') s.aiLatencyMs = num()
      else if (a === '--flood') s.floodStrings = num()
      else if (a === '--burst') s.burstPairs = num()
      else if (a === '--outage') s.burstOutageSeconds = num()
      else if (a === '--burst-fault') {
        const f = args[++i]
        if (f !== 'outage' && f !== 'forbidden') return '--burst-fault takes outage or forbidden'
        s.burstFault = f
      }
      else if (a === '--restart') s.restartPairs = num()
      else if (a === '--store-url') {
        s.storeUrl = args[++i]
        if (!/^postgres(ql)?:\/\//.test(s.storeUrl ?? '')) return '--store-url takes a postgres:// URL (each worker gets its own table in it)'
        if (/[?&](table|schema)=/.test(s.storeUrl!)) return '--store-url: leave out ?table= and ?schema= (each worker gets its own table)'
      }
      else if (a === '--queue-url') {
        s.queueUrl = args[++i]
        if (!/^rediss?:\/\//.test(s.queueUrl ?? '')) return '--queue-url takes a redis:// URL (each worker gets its own queue in it)'
      }
      else if (a === '--worker-concurrency') s.workerConcurrency = num()
      else if (a === '--pipeline-threads') {
        s.pipelineThreads = Number(args[++i])
        if (!Number.isInteger(s.pipelineThreads) || s.pipelineThreads < 0) return '--pipeline-threads takes a whole number >= 0'
      } else if (a === '--adversarial') s.adversarialStrings = num()
      else if (a === '--adversarial-rounds') s.adversarialRounds = Math.round(num())
      else if (a === '--adversarial-source') {
        s.adversarialSource = args[++i]
        if (!s.adversarialSource) return '--adversarial-source takes a text'
      }
      else if (a === '--profile') s.profile = true
      else if (a === '--out') s.out = path.resolve(args[++i] ?? '.')
      else return `unknown option ${a}`
    } catch (error) {
      return (error as Error).message
    }
  }
  for (const o of s.only) if (!['ingest', 'e2e', 'ai', 'flood', 'burst', 'restart', 'adversarial'].includes(o)) return `--only: unknown part "${o}"`
  return s
}


async function json<T>(url: string, body?: unknown): Promise<T> {
  const response = await fetch(url, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`)
  return (await response.json()) as T
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Pipeline runs so far, from the worker's /metrics (every pipeline's). */
async function pipelineRuns(workerUrl: string): Promise<number> {
  const text = await fetch(`${workerUrl}/metrics`).then((r) => r.text(), () => '')
  let sum = 0
  for (const m of text.matchAll(/^switchyard_pipeline_runs_total\{[^}]*\} (\S+)$/gm)) sum += Number(m[1])
  return sum
}
// The worker runs as `npm start` and the Dockerfile run it (package.json, Dockerfile): with a heap
// limit, and a young generation of 16 MB instead of the 32 V8 sizes from the host's memory (the
// burst's peak, issue 16). BENCH_WORKER_NODE_ARGS overrides them, e.g. to measure without.
export const SERVE_NODE_ARGS = '--max-old-space-size=512 --max-semi-space-size=8'
// ...and with glibc's trim threshold fixed (issue 16: freed memory goes back to the system instead
// of staying in malloc's arenas); a value in the bench's own environment wins.
export const SERVE_ENV = { MALLOC_TRIM_THRESHOLD_: '131072' }
const BIN = path.join(PACKAGE_ROOT, 'bin', 'switchyard.js')

interface EmulatorInfo {
  url: string
  controlUrl: string
  clientId: string
  clientSecret: string
  appSecret: string
  organization: { id: string; domain: string }
  /** API_URL for a worker serving several organizations. */
  apiUrlTemplate: string
}

interface Progress { total: number; done: number; patchOperations: number }

class Bench {
  private readonly children: Child[] = []
  private readonly dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-bench-'))
  emulator!: EmulatorInfo
  private emulatorPid?: number
  readonly appSecret = 'bench-app-secret'
  private readonly clientSecret = 'bench-client-secret'
  private workerPorts: number[] = []
  private workers = 0
  /** Each worker's port and data directory, by its URL. */
  private readonly places = new Map<string, { port: number; dir: string }>()
  /** Tables made in --store-url's database, dropped at the end. */
  private readonly tables = new Set<string>()
  /** BullMQ queues made in --queue-url's Redis, whose keys are deleted at the end. */
  private readonly queues = new Set<string>()
  private redis?: import('ioredis').Redis

  constructor(readonly s: Settings) {}

  async startEmulator(): Promise<void> {
    this.workerPorts = [await freePort(), await freePort(), await freePort()]
    const { child, line } = await startChild(
      [BIN, 'emulate', '--port', '0', '--json', '--quiet', '--strings', '10', '--app-secret', this.appSecret, '--client-secret', this.clientSecret,
        ...this.workerPorts.flatMap((p) => ['--redirect-uri', `http://127.0.0.1:${p}/oauth/callback`])],
      { ...process.env, LOG_LEVEL: 'warn' },
      (l) => typeof l.controlUrl === 'string',
    )
    this.children.push(child)
    this.emulatorPid = child.pid
    this.emulator = line as unknown as EmulatorInfo
  }

  control<T>(route: string, body?: unknown): Promise<T> {
    return json<T>(`${this.emulator.controlUrl}${route}`, body)
  }

  // Each module key is its own workflow step (as in a real workflow), so the AI step's strings
  // are not repeats of the QA step's in the worker's de-duplication.
  private stepOf(moduleKey: string): number {
    return moduleKey === 'ai-proofread' ? 7002 : 7001
  }

  async seed(strings: number, moduleKey: string): Promise<void> {
    await this.control('/seed', { seed: 9, strings, languages: LANGUAGES, moduleKey, stepId: this.stepOf(moduleKey) })
    await this.control('/reset-counters', {})
  }

  source(strings: number, moduleKey: string, batchSize = this.s.batchSize, seed?: SeedOptions): BatchSource {
    return batchSource(seed ?? { seed: 9, strings, languages: LANGUAGES, moduleKey, stepId: this.stepOf(moduleKey) }, { appSecret: this.appSecret, batchSize })
  }

  get apiUrlTemplate(): string {
    return this.emulator.apiUrlTemplate
  }

  /**
   * Connect an organization other than the emulator's first: the worker's AUTH_URL is the
   * emulator's root, where the user approves in the first organization unless the authorization
   * request names one (`organization=`), as a user choosing their organization would.
   */
  async connect(workerUrl: string, domain: string): Promise<void> {
    const start = await fetch(`${workerUrl}/oauth/start?domain=${encodeURIComponent(domain)}`, { redirect: 'manual' })
    const cookie = (start.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ')
    const authorize = start.headers.get('location')
    if (start.status !== 302 || !authorize) throw new Error(`/oauth/start answered ${start.status}`)
    const consent = await fetch(`${authorize}&organization=${encodeURIComponent(domain)}`, { redirect: 'manual' })
    const callback = consent.headers.get('location')
    if (!callback) throw new Error(`the authorization server answered ${consent.status} without a redirect`)
    const done = await fetch(callback, { headers: { cookie }, redirect: 'manual' })
    if (done.status >= 400) throw new Error(`/oauth/callback answered ${done.status} for ${domain}: ${(await done.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(0, 200)}`)
  }

  /** The plain node:http server the ingest is measured against. */
  async startBaseline(): Promise<{ child: Child; url: string }> {
    const { child, line } = await startChild([path.join(PACKAGE_ROOT, 'dist', 'src', 'bench', 'baseline-server.js')], { ...process.env, APP_SECRET: this.appSecret }, (l) => typeof l.url === 'string')
    this.children.push(child)
    return { child, url: line!.url as string }
  }

  /** A worker process; `connect` runs the OAuth flow through its routes, as a browser would. `at`: the port and data of an earlier one. */
  async startWorker(env: Record<string, string>, connect: boolean, at?: { port: number; dir: string }): Promise<{ child: Child; url: string }> {
    const index = this.workers++
    const port = at?.port ?? (connect ? this.workerPorts[index % this.workerPorts.length]! : await freePort())
    const url = `http://127.0.0.1:${port}`
    const dir = at?.dir ?? path.join(this.dataDir, `worker-${index}`)
    mkdirSync(dir, { recursive: true })
    this.places.set(url, { port, dir })
    const nodeArgs = [...(this.s.profile ? ['--cpu-prof', '--cpu-prof-dir', path.join(this.s.out, 'profiles')] : []), ...(process.env.BENCH_WORKER_NODE_ARGS ?? SERVE_NODE_ARGS).split(' ').filter(Boolean)]
    const { child } = await startChild([...nodeArgs, BIN, 'serve'], {
      ...SERVE_ENV,
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: url,
      APP_SECRET: this.appSecret,
      CLIENT_ID: this.emulator.clientId,
      CLIENT_SECRET: this.emulator.clientSecret,
      AUTH_URL: this.emulator.url,
      API_URL: this.emulator.url,
      DATA_DIR: dir,
      STORE_URL: this.storeUrlOf(dir),
      ...this.queueEnvOf(dir),
      PIPELINES_DIR: path.join(PACKAGE_ROOT, 'pipelines'),
      OPENAI_API_KEY: 'bench-key',
      OPENAI_BASE_URL: `${this.emulator.url}/v1`,
      LOG_LEVEL: 'warn',
      RECONCILE_INTERVAL_MS: '0',
      ...(this.s.workerConcurrency ? { CONCURRENCY: String(this.s.workerConcurrency) } : {}),
      ...(this.s.pipelineThreads !== undefined ? { PIPELINE_THREADS: String(this.s.pipelineThreads) } : {}),
      ...env,
    })
    this.children.push(child)
    // Ready as a load balancer would see it (/readyz): the store answers and the pipeline threads
    // have loaded the pipelines, so that no scenario's first strings wait for that load.
    await waitFor(async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined), 30_000, 100, `the worker at ${url}: ${child.tail()}`)
    if (connect) await connectThroughBrowser(url, this.emulator.organization.domain)
    return { child, url }
  }

  /** A worker again on the port and the data (store, journal, tokens) of an earlier one, not connected again. */
  restartWorker(previous: { url: string }, env: Record<string, string>): Promise<{ child: Child; url: string }> {
    const at = this.places.get(previous.url)
    if (!at) throw new Error(`no worker was started at ${previous.url}`)
    return this.startWorker(env, false, at)
  }

  get organizationDomain(): string {
    return this.emulator.organization.domain
  }

  async stopChild(child: Child): Promise<void> {
    await child.stop()
    this.children.splice(this.children.indexOf(child), 1)
  }

  /** A worker's store: a SQLite file in its data directory, or its own table of --store-url. */
  private storeUrlOf(dir: string): string {
    const url = this.s.storeUrl
    if (!url) return `sqlite://${path.join(dir, 'switchyard.sqlite')}`
    const table = this.tableOf(dir)
    this.tables.add(table)
    return `${url}${url.includes('?') ? '&' : '?'}table=${table}`
  }

  /** With --queue-url, QUEUE=bullmq on a queue of the worker's own (the same again for a restart on its data). */
  private queueEnvOf(dir: string): Record<string, string> {
    if (!this.s.queueUrl) return {}
    const name = this.tableOf(dir)
    this.queues.add(name)
    return { QUEUE: 'bullmq', QUEUE_REDIS_URL: this.s.queueUrl, QUEUE_NAME: name }
  }

  /**
   * The bench's own client of --queue-url's Redis, made once: commands fail after 2 s or a
   * reconnection instead of waiting for Redis forever (as the workers' clients do).
   */
  private async queueRedis(): Promise<import('ioredis').Redis> {
    const { Redis } = await import('ioredis')
    // Its failures are reported where a command fails; the client's own error events would only repeat them.
    this.redis ??= new Redis(this.s.queueUrl!, { maxRetriesPerRequest: 1, commandTimeout: 2000, connectTimeout: 2000 }).on('error', () => undefined)
    return this.redis
  }

  /** Redis's used memory in MB (all of it: other databases and queues count too), with --queue-url. */
  async queueMemoryMb(): Promise<number | undefined> {
    if (!this.s.queueUrl) return undefined
    try {
      const used = /^used_memory:(\d+)/m.exec(await (await this.queueRedis()).info('memory'))?.[1]
      return used === undefined ? undefined : Number(used) / 2 ** 20
    } catch {
      return undefined
    }
  }

  private tableOf(dir: string): string {
    // switchyard-bench-<random>/worker-<n> -> switchyard_bench_<random>_worker_<n>
    return `${path.basename(this.dataDir)}_${path.basename(dir)}`.replace(/[^A-Za-z0-9]/g, '_').toLowerCase()
  }

  private async deleteQueues(): Promise<void> {
    const client = await this.queueRedis()
    try {
      for (const name of this.queues) {
        let cursor = '0'
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `bull:${name}:*`, 'COUNT', 10_000)
          cursor = next
          if (keys.length) await client.unlink(...keys)
        } while (cursor !== '0')
      }
    } catch (error) {
      process.stderr.write(`bench: could not delete the workers' queues (bull:${[...this.queues].join(':*, bull:')}:*): ${(error as Error).message}\n`)
    }
  }

  async close(): Promise<void> {
    for (const c of [...this.children].reverse()) await c.stop().catch(() => undefined)
    rmSync(this.dataDir, { recursive: true, force: true })
    if (this.s.queueUrl && this.queues.size) await this.deleteQueues()
    this.redis?.disconnect()
    if (this.s.storeUrl && this.tables.size) {
      const { default: pg } = await import('pg')
      const client = new pg.Pool({ connectionString: this.s.storeUrl, max: 1 })
      try {
        for (const table of this.tables) await client.query(`DROP TABLE IF EXISTS ${table}`)
      } catch (error) {
        process.stderr.write(`bench: could not drop the workers' tables (${[...this.tables].join(', ')}): ${(error as Error).message}\n`)
      } finally {
        await client.end().catch(() => undefined)
      }
    }
  }

  // ---- 1. Ingest ----
  async ingest(): Promise<IngestResult> {
    const { s } = this
    const { child: baseline, line } = await startChild([path.join(PACKAGE_ROOT, 'dist', 'src', 'bench', 'baseline-server.js')], { ...process.env, APP_SECRET: this.appSecret }, (l) => typeof l.url === 'string')
    this.children.push(baseline)
    // Not connected: its jobs are journaled, queued and then held (no token), so what is
    // measured is what the baseline does plus verification, validation, de-duplication and the
    // journal write, not the pipelines (end to end measures those).
    const worker = await this.startWorker({ QUEUE_LIMIT: String(10_000_000) }, false)
    const source = this.source((s.ingestPool * s.batchSize) / LANGUAGES.length, 'qa-gate')
    const pool = Array.from({ length: source.count }, (_, i) => source.batch(i))
    // Each pass over the pool names another organization (in the header and in every event, then
    // signed again: the worker refuses a delivery whose events name another organization than its
    // header): every string is new to the worker's de-duplication, as in a real stream.
    const passes = pool.map((b) => underOtherOrganizations(b, this.emulator.organization.id, this.appSecret))
    const nth = (i: number): Batch => passes[i % pool.length]!(Math.floor(i / pool.length))
    const measure = async (url: string) => {
      await runLoad({ url, concurrency: s.concurrency, count: 200, batch: (i) => nth(i + 1_000_000 * pool.length) }) // warm-up, separate passes
      const r = await runLoad({ url, concurrency: s.concurrency, count: Number.MAX_SAFE_INTEGER, batch: nth, durationMs: s.ingestSeconds * 1000 })
      return { batchesPerSecond: perSecond(r.acked, r.durationMs), eventsPerSecond: perSecond(r.ackedEvents, r.durationMs), latencyMs: summarizeLatencies(r.latencies), statuses: r.statuses }
    }
    const base = await measure(line!.url as string)
    const ours = await measure(`${worker.url}/webhooks`)
    await this.stopChild(baseline)
    await this.stopChild(worker.child)
    return { batchSize: s.batchSize, concurrency: s.concurrency, durationMs: s.ingestSeconds * 1000, worker: ours, baseline: base, ratio: ratio(ours.batchesPerSecond, base.batchesPerSecond) }
  }

  /** Send every batch of a source (honouring Retry-After) and wait until the emulator has them all DONE. */
  async deliverAndFinish(url: string, batches: { count: number; batch(i: number): Batch }, total: number, timeoutMs: number, onTick?: (p: Progress, t: number) => void) {
    const started = performance.now()
    let ticking = true
    let last: Progress = { total, done: 0, patchOperations: 0 }
    const ticker = (async () => {
      while (ticking) {
        last = await this.control<Progress>('/progress').catch(() => last)
        onTick?.(last, (performance.now() - started) / 1000)
        if (last.done >= total) break
        await sleep(onTick ? 250 : 50)
      }
    })()
    const load = await runLoad({ url: `${url}/webhooks`, concurrency: this.s.concurrency, count: batches.count, batch: (i) => batches.batch(i), honourRetryAfter: true })
    const deadline = performance.now() + timeoutMs
    while (last.done < total && performance.now() < deadline) await sleep(20)
    if (last.done < total) process.stderr.write(`bench: only ${last.done} of ${total} strings DONE after ${Math.round(timeoutMs / 1000)} s (load: ${JSON.stringify(load.statuses)})\n`)
    ticking = false
    await ticker
    const ms = performance.now() - started
    return { load, ms, progress: await this.control<Progress>('/progress') }
  }

  // ---- 2. End to end ----
  /**
   * The same strings twice on one worker: first as it starts (cold: its code not yet optimized,
   * its caches empty), as this scenario has always measured; then the same number of other
   * strings, of another project (so that none is a repeat), on the worker as it runs in
   * production after its first minutes. The ingest scenario warms the worker up before measuring too.
   * After each run the worker is left to finish its issue work (workAfterDone) before the next
   * begins: the cold run's issues are then raised in its own project (the warm run reseeds the
   * emulator with another), and the warm run's after-DONE figures are its own strings' alone.
   */
  async endToEnd(url: string, workerPid: number): Promise<EndToEndResult> {
    const strings = this.s.e2eStrings / LANGUAGES.length
    const cold = await this.endToEndRun(url, workerPid, { seed: 9, strings, languages: LANGUAGES, moduleKey: 'qa-gate', stepId: this.stepOf('qa-gate') })
    const warm = await this.endToEndRun(url, workerPid, { seed: 10, strings, languages: LANGUAGES, moduleKey: 'qa-gate', stepId: this.stepOf('qa-gate'), projectId: WARM_PROJECT })
    return { ...cold, warm }
  }

  private async endToEndRun(url: string, workerPid: number, seed: SeedOptions): Promise<EndToEndResult> {
    await this.control('/seed', seed)
    await this.control('/reset-counters', {})
    const source = this.source(seed.strings!, 'qa-gate', this.s.batchSize, seed)
    const pool = Array.from({ length: source.count }, (_, i) => source.batch(i))
    const cpu = () => ({ worker: cpuMsOf(workerPid), workerMainThread: cpuMsOf(workerPid, workerPid), emulator: this.emulatorPid === undefined ? undefined : cpuMsOf(this.emulatorPid), sender: process.cpuUsage() })
    const runsBefore = await pipelineRuns(url)
    const before = cpu()
    const { ms, progress } = await this.deliverAndFinish(url, { count: pool.length, batch: (i) => pool[i]! }, source.pairs, 120_000)
    const after = cpu()
    const runs = (await pipelineRuns(url)) - runsBefore
    const perThousand = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : round(((b - a) * 1000) / source.pairs, 0))
    const sender = process.cpuUsage(before.sender)
    const counts = await this.control<{ counts: Record<string, Record<string, number>> }>('/requests')
    const sum = (endpoint: string) => Object.values(counts.counts[endpoint] ?? {}).reduce((a, b) => a + b, 0)
    const patchRequests = sum(STATUS_ENDPOINT)
    const translationRequests = sum(TRANSLATIONS_ENDPOINT)
    const afterDone = after.worker !== undefined ? await this.workAfterDone(workerPid, after.worker, source.pairs, counts.counts) : undefined
    return {
      strings: source.pairs,
      seconds: round(ms / 1000, 2),
      stringsPerSecond: perSecond(progress.done, ms),
      patchRequests,
      translationRequests,
      patchesPerString: ratio(patchRequests, source.pairs, 5),
      translationFetchesPerString: ratio(translationRequests, source.pairs, 5),
      ...(runs > 0 ? { stringsPerPipelineRun: ratio(progress.done, runs, 1) } : {}),
      notDone: source.pairs - progress.done,
      cpuMsPerThousand: { worker: perThousand(before.worker, after.worker), workerMainThread: perThousand(before.workerMainThread, after.workerMainThread), emulator: perThousand(before.emulator, after.emulator), sender: round((sender.user + sender.system) / source.pairs, 0) },
      ...(afterDone ? { afterDone } : {}),
    }
  }

  /**
   * What the worker still does once the last string is DONE: the issue work still queued
   * (comments at the service, the findings log), which never holds up a status and so is outside
   * the rate. Measured until, over half a second, the worker uses under 6% of a core and makes no
   * comment request (at most 30 s: `stillBusy` then). Undefined when the CPU cannot be read.
   */
  private async workAfterDone(workerPid: number, cpuAtDone: number, strings: number, countsAtDone: Record<string, Record<string, number>>): Promise<EndToEndResult['afterDone']> {
    const commentsIn = (counts: Record<string, Record<string, number>>) =>
      Object.entries(counts)
        .filter(([endpoint]) => endpoint.includes('/comments'))
        .reduce((n, [, byStatus]) => n + Object.values(byStatus).reduce((a, b) => a + b, 0), 0)
    const comments = async () => commentsIn((await this.control<{ counts: Record<string, Record<string, number>> }>('/requests')).counts)
    const atDone = commentsIn(countsAtDone)
    const started = performance.now()
    let cpu = cpuAtDone
    let requests = atDone
    let quietAt = started
    let stillBusy = false
    for (;;) {
      await sleep(500)
      const nowCpu = cpuMsOf(workerPid)
      if (nowCpu === undefined) return undefined
      const nowRequests = await comments()
      const quiet = nowCpu - cpu < 30 && nowRequests === requests
      cpu = nowCpu
      requests = nowRequests
      if (quiet) break
      quietAt = performance.now()
      if (quietAt - started > 30_000) {
        stillBusy = true
        break
      }
    }
    return {
      seconds: round((quietAt - started) / 1000, 1),
      workerCpuMsPerThousand: round(((cpu - cpuAtDone) * 1000) / strings, 0),
      commentRequests: requests - atDone,
      ...(stillBusy ? { stillBusy } : {}),
    }
  }

  // ---- 3. AI ----
  async ai(url: string): Promise<{ latencyMs: number; first: AiRun; cached: AiRun }> {
    const strings = Math.max(1, Math.round(this.s.aiStrings / LANGUAGES.length))
    const source = this.source(strings, 'ai-proofread')
    const run = async (): Promise<AiRun> => {
      await this.seed(strings, 'ai-proofread')
      await this.control('/openai', { reset: true, faults: { latencyMs: this.s.aiLatencyMs } })
      const { ms, progress } = await this.deliverAndFinish(url, source, source.pairs, this.s.quick ? 30_000 : 300_000)
      const stats = await this.control<{ requests: number }>('/openai')
      return {
        strings: source.pairs,
        seconds: round(ms / 1000, 2),
        stringsPerSecond: perSecond(progress.done, ms),
        modelRequests: stats.requests,
        modelRequestsPerString: ratio(stats.requests, source.pairs, 5),
        notDone: source.pairs - progress.done,
      }
    }
    const first = await run()
    // The same texts again under a new revision (so the worker runs the pipeline rather than
    // absorbing a repeat): every verdict must come from the cache.
    bumpRevisions(source.sample)
    const cached = await run()
    return { latencyMs: this.s.aiLatencyMs, first, cached }
  }

  // ---- 4. Flood ----
  async flood(): Promise<FloodResult> {
    const { s } = this
    const strings = Math.ceil(s.floodStrings / LANGUAGES.length)
    await this.seed(strings, 'qa-gate')
    const worker = await this.startWorker({ QUEUE_LIMIT: String(s.floodQueueLimit) }, true)
    const source = this.source(strings, 'qa-gate')
    const samples: FloodSample[] = []
    let peak = 0
    let previous = { t: 0, done: 0 }
    const sampler = setInterval(() => {
      const m = memoryOf(worker.child.pid)
      if (m) peak = Math.max(peak, m.rssMb)
    }, 250)
    const { load, ms, progress } = await this.deliverAndFinish(worker.url, source, source.pairs, 180_000, (p, t) => {
      const m = memoryOf(worker.child.pid)
      if (!m) return
      peak = Math.max(peak, m.rssMb)
      const dt = t - previous.t
      if (dt <= 0) return
      samples.push({ t: round(t, 2), rssMb: round(m.rssMb, 1), donePerSecond: round((p.done - previous.done) / dt, 0) })
      previous = { t, done: p.done }
    })
    clearInterval(sampler)
    const hwm = memoryOf(worker.child.pid)?.hwmMb ?? Number.NaN
    const health = await json<{ journal?: number }>(`${worker.url}/healthz`).catch(() => ({ journal: undefined }))
    await this.stopChild(worker.child)
    return {
      strings: source.pairs,
      queueLimit: s.floodQueueLimit,
      seconds: round(ms / 1000, 2),
      stringsPerSecond: perSecond(progress.done, ms),
      acknowledged: load.ackedEvents,
      busy503: load.statuses['503'] ?? 0,
      requests: load.requests,
      done: progress.done,
      lost: Math.max(0, load.ackedEvents - progress.done),
      peakRssMb: round(peak, 1),
      vmHwmMb: round(hwm, 1),
      journalLeft: health.journal ?? null,
      samples,
    }
  }
  // ---- 5. Adversarial ----
  /**
   * The end-to-end load through qa-gate (plus a `runaway` test plugin that spins forever on a
   * marker) on fresh workers: without adversarial strings; with the 10 slow texts (the and
   * the same shapes under maxTextLength); with those and 2 strings the runaway plugin spins on
   * (each set in three batches, sent at a quarter, half and three quarters of the load). Measured: the
   * worker main thread's event-loop delay (prom-client's monitorEventLoopDelay, p99 and max over
   * the run, from /metrics), /healthz answer times, how long after its batch was sent each
   * adversarial string had its outcome, and the rate of the normal strings.
   */
  async adversarial(): Promise<AdversarialResult> {
    const strings = Math.round(this.s.adversarialStrings / LANGUAGES.length)
    const dir = path.join(this.dataDir, 'adversarial')
    const pipelines = path.join(dir, 'pipelines')
    const plugins = path.join(dir, 'plugins')
    mkdirSync(pipelines, { recursive: true })
    mkdirSync(plugins, { recursive: true })
    for (const f of ['qa-gate.png', 'pipeline.schema.json']) copyFileSync(path.join(PACKAGE_ROOT, 'pipelines', f), path.join(pipelines, f))
    const qa = readFileSync(path.join(PACKAGE_ROOT, 'pipelines', 'qa-gate.yaml'), 'utf8')
    if (!qa.includes('  - uses: standard\n')) throw new Error('bench: qa-gate.yaml no longer has "- uses: standard"')
    writeFileSync(path.join(pipelines, 'qa-gate.yaml'), qa.replace('  - uses: standard\n', '  - uses: standard\n  - uses: runaway\n'))
    writeFileSync(path.join(plugins, 'runaway.mjs'), RUNAWAY_PLUGIN)
    const all = adversarialTexts()
    const slow = all.filter((t) => !t.text.includes(RUNAWAY_MARKER))
    const scrape = async (url: string) => {
      const text = await (await fetch(`${url}/metrics`)).text()
      const metric = (name: string) => Number(new RegExp(`^switchyard_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0)
      return { p99: metric('p99'), max: metric('max'), timeouts: value('switchyard_check_timeouts_total'), spareRuns: value('switchyard_pipeline_spare_runs_total') }
    }
    const run = async (texts: Array<{ name: string; text: string }>): Promise<AdversarialRun> => {
      const withAdversarial = texts.length > 0
      const seed = { seed: 9, strings, languages: LANGUAGES, moduleKey: 'qa-gate', stepId: this.stepOf('qa-gate'), extraTexts: withAdversarial ? texts.map((t) => t.text) : [], ...(this.s.adversarialSource ? { extraSource: this.s.adversarialSource } : {}) }
      await this.control('/seed', seed)
      await this.control('/reset-counters', {})
      const worker = await this.startWorker({ QUEUE_LIMIT: String(1_000_000), PIPELINES_DIR: pipelines, PLUGINS_DIR: plugins }, true)
      const source = batchSource(seed, { appSecret: this.appSecret, batchSize: this.s.batchSize, strings })
      // Where the adversarial batches go among the normal ones, and which strings each holds.
      const groups = withAdversarial ? [0, 1, 2].map((g) => texts.map((_, j) => strings + j).filter((_, j) => j % 3 === g)).filter((g) => g.length) : []
      const at = new Map(groups.map((g, k) => [Math.floor((source.count * (k + 1)) / (groups.length + 1)) + k, g]))
      const sentAt = new Map<number, number>()
      const count = source.count + groups.length
      let normal = 0
      const order: Array<number | number[]> = []
      for (let i = 0; i < count; i++) order.push(at.get(i) ?? normal++)
      const batch = (i: number) => {
        const o = order[i]!
        if (typeof o === 'number') return source.batch(o)
        for (const id of o) sentAt.set(id, performance.now())
        return source.batchOf(o)
      }
      const health: number[] = []
      let probing = true
      const prober = (async () => {
        while (probing) {
          const t = performance.now()
          await fetch(`${worker.url}/healthz`).then((r) => r.arrayBuffer()).catch(() => undefined)
          health.push(performance.now() - t)
          await sleep(100)
        }
      })()
      // Outcomes of the adversarial strings: the first PATCH that names each (string, language).
      const ids = texts.map((_, j) => source.sample.strings[strings + j]?.id).filter((x): x is number => x !== undefined)
      const outcomeMs = new Map<number, number>()
      let watching = withAdversarial
      const watcher = (async () => {
        while (watching) {
          const seen = await this.control<{ data: Array<{ stringId: number; patches: number }> }>(`/statuses?stringIds=${ids.join(',')}&limit=1000`).catch(() => ({ data: [] }))
          const perString = new Map<number, number>()
          for (const st of seen.data) if (st.patches > 0) perString.set(st.stringId, (perString.get(st.stringId) ?? 0) + 1)
          ids.forEach((id, j) => {
            const sent = sentAt.get(strings + j)
            if (sent !== undefined && !outcomeMs.has(j) && perString.get(id) === LANGUAGES.length) outcomeMs.set(j, performance.now() - sent)
          })
          if (outcomeMs.size === ids.length) break
          await sleep(100)
        }
      })()
      await scrape(worker.url) // resets the event-loop histogram: what follows is this run's
      const { ms, progress } = await this.deliverAndFinish(worker.url, { count, batch }, source.pairs, 180_000)
      const loop = await scrape(worker.url)
      const deadline = performance.now() + 30_000
      while (withAdversarial && outcomeMs.size < ids.length && performance.now() < deadline) await sleep(50)
      watching = false
      probing = false
      await Promise.all([watcher, prober])
      await this.stopChild(worker.child)
      const health99 = summarizeLatencies(health)
      return {
        normalStrings: source.pairs,
        adversarialStrings: withAdversarial ? ids.length * LANGUAGES.length : 0,
        seconds: round(ms / 1000, 2),
        normalStringsPerSecond: perSecond(Math.min(progress.done, source.pairs), ms),
        eventLoopDelayP99Ms: round(loop.p99, 1),
        eventLoopDelayMaxMs: round(loop.max, 1),
        healthzP99Ms: round(health99.p99, 1),
        healthzMaxMs: round(health99.max, 1),
        checksStopped: loop.timeouts,
        spareRuns: loop.spareRuns,
        outcomes: withAdversarial ? texts.map((t, j) => ({ name: t.name, chars: t.text.length, seconds: outcomeMs.has(j) ? round(outcomeMs.get(j)! / 1000, 2) : null })) : [],
      }
    }
    // Rounds of the three runs, side by side in time: a ratio is of runs of the same round, so a
    // spell of load on the shared machine moves both sides of it.
    const rounds: AdversarialRound[] = []
    for (let k = 0; k < this.s.adversarialRounds; k++) {
      const without = await run([])
      const withSlow = await run(slow)
      // Inline (--pipeline-threads 0) nothing would stop the runaway plugin: that run is left out.
      const withRunaway = this.s.pipelineThreads === 0 ? undefined : await run(all)
      rounds.push({
        without,
        with: withSlow,
        rateRatio: ratio(withSlow.normalStringsPerSecond, without.normalStringsPerSecond),
        ...(withRunaway ? { withRunaway, runawayRateRatio: ratio(withRunaway.normalStringsPerSecond, without.normalStringsPerSecond) } : {}),
      })
    }
    return summarizeAdversarial(this.s.pipelineThreads ?? null, rounds)
  }
}

export async function runBench(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE)
    return 0
  }
  const s = parseArgs(args)
  if (typeof s === 'string') {
    console.error(`switchyard bench: ${s}\n\n${USAGE}`)
    return 2
  }
  const bench = new Bench(s)
  const results: BenchResults = {
    date: new Date().toISOString(),
    mode: s.quick ? 'quick' : 'full',
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${os.platform()} ${os.release()}` },
    settings: { ...s, only: [...s.only], out: undefined },
    targets: [],
  }
  const log = (message: string) => process.stderr.write(`bench: ${message}\n`)
  const keepSignals = stopChildrenOnSignal()
  try {
    await bench.startEmulator()
    if (s.only.has('ingest')) {
      log(`ingest: ${s.ingestSeconds} s each against the baseline and the worker, ${s.concurrency} connections`)
      results.ingest = await bench.ingest()
    }
    if (s.only.has('e2e') || s.only.has('ai')) {
      const worker = await bench.startWorker({ QUEUE_LIMIT: String(1_000_000) }, true)
      if (s.only.has('e2e')) {
        log(`end to end: ${s.e2eStrings} strings through qa-gate`)
        results.endToEnd = await bench.endToEnd(worker.url, worker.child.pid)
      }
      if (s.only.has('ai')) {
        log(`ai: ${s.aiStrings} strings through ai-proofread, model latency ${s.aiLatencyMs} ms, then the cached rerun`)
        results.ai = await bench.ai(worker.url)
      }
      await bench.stopChild(worker.child)
    }
    if (s.only.has('adversarial')) {
      log(`adversarial: ${s.adversarialStrings} strings through qa-gate, without, with 10 slow texts, and with them and 2 runaway strings mixed in`)
      results.adversarial = await bench.adversarial()
    }
    if (s.only.has('flood')) {
      log(`flood: ${s.floodStrings} strings, QUEUE_LIMIT ${s.floodQueueLimit}`)
      results.flood = await bench.flood()
    }
    if (s.only.has('burst')) {
      results.burst = await runBurst(Object.assign(bench, { log }), {
        // A second organization (its own domain at the emulator) sends 10 batches of 20 pairs,
        // every 2 s, once the first's strings are worked on again and while its backlog is deep.
        pairs: s.burstPairs, batchSize: 1000, senders: 4, outageSeconds: s.burstOutageSeconds, fault: s.burstFault, secondBatches: 10, secondPairs: 20,
        endToEndScenarioPerSecond: results.endToEnd?.stringsPerSecond,
      })
    }
    if (s.only.has('restart')) {
      results.restart = await runRestart(Object.assign(bench, { log }), { pairs: s.restartPairs, batchSize: 100, senders: 4 })
    }
  } finally {
    await bench.close()
    keepSignals()
  }
  results.targets = checkTargets(results)
  mkdirSync(s.out, { recursive: true })
  writeFileSync(path.join(s.out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`)
  if (results.flood) {
    writeFileSync(path.join(s.out, 'flood.svg'), renderFloodChart(results.flood.samples, `Flood: ${results.flood.strings} strings, QUEUE_LIMIT ${results.flood.queueLimit}`))
  }
  console.log(formatTable(resultRows(results)))
  console.log('')
  console.log(formatTable([['target', 'wanted', 'measured', 'met'], ...results.targets.map((t) => [t.what, t.target, t.measured, t.met ? 'yes' : 'NO'])]))
  console.log(`\n${results.machine.cpus} CPUs, Node ${results.machine.node}; results in ${path.relative(process.cwd(), path.join(s.out, 'results.json')) || 'results.json'}`)
  return 0
}
