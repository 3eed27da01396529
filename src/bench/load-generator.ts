// The benchmark's webhook sender: a fixed number of keep-alive connections, each posting the
// next signed batch as soon as the previous one is answered. Latency is the time to the answer's
// status line (the 2XX is what the service waits for). With `honourRetryAfter`, a 503 is retried
// after its Retry-After, as the service does; otherwise it is counted and the batch skipped.
import http from 'node:http'

export interface Batch {
  body: Buffer
  headers: Record<string, string>
  /** Events in the batch. */
  events: number
}

export interface LoadOptions {
  url: string
  concurrency: number
  /** How many batches there are; `batch(i)` builds the i-th (lazily: a flood doesn't fit in memory prebuilt). */
  count: number
  batch(index: number): Batch
  /** Stop taking new batches after this long (ms). */
  durationMs?: number
  honourRetryAfter?: boolean
  /** Called after each acknowledged batch. */
  onAck?(events: number): void
}

export interface LoadReport {
  /** Batches answered 2XX, and their events. */
  acked: number
  ackedEvents: number
  /** Requests made (retries included). */
  requests: number
  statuses: Record<string, number>
  /** ms from the request to the 2XX, per acknowledged request. */
  latencies: number[]
  durationMs: number
}

function post(agent: http.Agent, url: URL, batch: Batch): Promise<{ status: number; retryAfter: string | undefined; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.request(
      { agent, method: 'POST', hostname: url.hostname, port: url.port, path: url.pathname, headers: { ...batch.headers, 'content-length': String(batch.body.length) } },
      (res) => {
        const ms = performance.now() - started
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], ms }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(batch.body)
  })
}

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const url = new URL(options.url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency })
  const report: LoadReport = { acked: 0, ackedEvents: 0, requests: 0, statuses: {}, latencies: [], durationMs: 0 }
  const started = performance.now()
  const deadline = options.durationMs === undefined ? Number.POSITIVE_INFINITY : started + options.durationMs
  let next = 0
  const connection = async () => {
    while (next < options.count && performance.now() < deadline) {
      const batch = options.batch(next++)
      for (;;) {
        report.requests++
        let answer
        try {
          answer = await post(agent, url, batch)
        } catch {
          report.statuses.network = (report.statuses.network ?? 0) + 1
          await new Promise((r) => setTimeout(r, 200))
          if (options.honourRetryAfter) continue
          break
        }
        report.statuses[answer.status] = (report.statuses[answer.status] ?? 0) + 1
        if (answer.status >= 200 && answer.status < 300) {
          report.acked++
          report.ackedEvents += batch.events
          report.latencies.push(answer.ms)
          options.onAck?.(batch.events)
          break
        }
        if (!options.honourRetryAfter || (answer.status !== 503 && answer.status !== 429)) break
        const seconds = Number(answer.retryAfter ?? '1')
        await new Promise((r) => setTimeout(r, Number.isFinite(seconds) ? Math.max(0, seconds * 1000) : 1000))
      }
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, connection))
  report.durationMs = performance.now() - started
  agent.destroy()
  return report
}
