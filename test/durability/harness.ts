// Shared parts of the durability tests: the worker as a child process (`node bin/switchyard.js
// serve`, the built CLI), a recording proxy between the emulator's webhook sender and the worker
// (which strings got a 2XX, how many 503s), and small polling helpers.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { PipelineHost } from '../../src/engine/pipeline-host.js'
import { silentLogger } from '../../src/util/logger.js'
import type { PipelineSource } from '../../src/worker.js'

export const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'durability')
export const PAIR = (stringId: number, languageId: string) => `${stringId}|${languageId}`

export { freePort } from '../../src/util/free-port.js'

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `switchyard-${prefix}-`))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await probe()
      if (v !== undefined && v !== false) return v
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await sleep(everyMs)
  }
}

export interface ChildWorker {
  proc: ChildProcess
  url: string
  pid: number
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderr(): string
  /** VmRSS of the process in bytes (Linux), undefined once it is gone. */
  rss(): number | undefined
  health(): Promise<{ status: string; queue: { depth: number; waiting: number; limit: number }; journal: number; parked: number; held: number }>
}

/** Start `switchyard serve` as a child process and wait until /healthz answers. */
export async function spawnWorker(env: Record<string, string>, port: number): Promise<ChildWorker> {
  const proc = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'), 'serve'], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', RECONCILE_INTERVAL_MS: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-20_000)
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })))
  const url = `http://127.0.0.1:${port}`
  const child: ChildWorker = {
    proc,
    url,
    pid: proc.pid!,
    exited,
    stderr: () => err,
    rss() {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))
        return m ? Number(m[1]) * 1024 : undefined
      } catch {
        return undefined
      }
    },
    async health() {
      const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) })
      return (await r.json()) as Awaited<ReturnType<ChildWorker['health']>>
    },
  }
  let gone = false
  void exited.then(() => {
    gone = true
  })
  await waitFor(`the worker on ${url} to start (stderr: ${err.slice(-500)})`, async () => {
    if (gone) throw new Error(`worker exited during start: ${err.slice(-2000)}`)
    const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
    return r.ok
  }, 30_000, 100)
  return child
}

/** Kill a child (if still running) and wait for it to exit. */
export async function killWorker(w: ChildWorker | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!w || w.proc.exitCode !== null || w.proc.signalCode !== null) return
  w.proc.kill(signal)
  await w.exited
}

/**
 * A pass-through between the emulator's webhook sender and the worker. It records the
 * (string, language) pairs of every batch the worker acknowledged with a 2XX, and every answer by
 * status; when the worker is down the sender's connection is destroyed (a network error, as the
 * service would see it).
 */
export interface AckProxy {
  url: string
  /** Pairs acknowledged with a 2XX so far, with the time of the first acknowledgement. */
  acked: Map<string, number>
  statuses: Record<string, number>
  retryAfter: string[]
  /** The last body the worker acknowledged, with its request headers (for probes). */
  lastAcked?: { body: Buffer; headers: Record<string, string> }
  target: string
  close(): Promise<void>
}

export async function startAckProxy(target: string): Promise<AckProxy> {
  const proxy: AckProxy = { url: '', acked: new Map(), statuses: {}, retryAfter: [], target, close: async () => {} }
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length' && k !== 'connection') headers[k] = v
      fetch(`${proxy.target}${req.url ?? '/'}`, { method: req.method, headers, body, signal: AbortSignal.timeout(30_000) })
        .then(async (r) => {
          const text = await r.text()
          proxy.statuses[r.status] = (proxy.statuses[r.status] ?? 0) + 1
          const ra = r.headers.get('retry-after')
          if (r.status === 503 && ra !== null) proxy.retryAfter.push(ra)
          if (r.status >= 200 && r.status < 300) {
            const now = Date.now()
            for (const pair of pairsOf(body)) if (!proxy.acked.has(pair)) proxy.acked.set(pair, now)
            proxy.lastAcked = { body, headers }
          }
          const out: Record<string, string> = { 'content-type': r.headers.get('content-type') ?? 'text/plain' }
          if (ra !== null) out['retry-after'] = ra
          res.writeHead(r.status, out)
          res.end(text)
        })
        .catch(() => {
          proxy.statuses.network = (proxy.statuses.network ?? 0) + 1
          res.destroy()
        })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return proxy
}

/** The (string, language) pairs of a webhook batch body. */
export function pairsOf(body: Buffer | string): string[] {
  const parsed = JSON.parse(body.toString()) as { events?: Array<{ stringStatus?: { translation?: { id: number }; affectedLanguage?: { id: string } } }> }
  const out: string[] = []
  for (const e of parsed.events ?? []) {
    const s = e.stringStatus
    if (s?.translation && s.affectedLanguage) out.push(PAIR(s.translation.id, s.affectedLanguage.id))
  }
  return out
}

/** Environment for a child worker connected to an emulator. */
export function workerEnv(o: { baseUrl: string; dataDir: string; emuUrl: string; appSecret: string; clientId: string; clientSecret: string; extra?: Record<string, string> }): Record<string, string> {
  return {
    BASE_URL: o.baseUrl,
    APP_SECRET: o.appSecret,
    CLIENT_ID: o.clientId,
    CLIENT_SECRET: o.clientSecret,
    AUTH_URL: o.emuUrl,
    API_URL: o.emuUrl,
    STORE_URL: `sqlite://${path.join(o.dataDir, 's.sqlite')}`,
    DATA_DIR: o.dataDir,
    ...o.extra,
  }
}

/**
 * Wait until the worker holds nothing: queue empty and journal empty, seen on several polls in a
 * row (just after a start, replay may not have adopted the journal yet).
 */
export async function waitIdle(w: ChildWorker, timeoutMs = 60_000): Promise<void> {
  let streak = 0
  await waitFor('the worker to finish what it acknowledged', async () => {
    const h = await w.health()
    streak = h.queue.depth === 0 && h.journal === 0 ? streak + 1 : 0
    return streak >= 4
  }, timeoutMs, 200)
}

/** The shipped pipelines (or a fixture folder), loaded the way `serve` loads them. */
export async function loadPipelines(dir = path.join(PACKAGE_ROOT, 'pipelines'), pluginsDir?: string): Promise<PipelineSource> {
  const host = new PipelineHost({ dir }, { pluginsDir, log: silentLogger(), cacheFor: () => ({ get: async () => undefined, set: async () => {} }), env: {}, metrics: { add() {} } })
  const loaded = await host.load()
  if (!loaded.ok) throw new Error(`pipelines failed to load: ${JSON.stringify(loaded.errors)}`)
  return host
}

/** POST a signed body on a fresh connection (no keep-alive pool), as a new delivery would arrive. */
export function postFresh(url: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number | 'network'; retryAfter?: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { ...headers, 'content-length': String(body.length) }, timeout: 10_000 }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }))
    })
    req.on('error', () => resolve({ status: 'network' }))
    req.on('timeout', () => req.destroy())
    req.end(body)
  })
}
