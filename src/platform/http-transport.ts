// The API client's transport: what it needs of `fetch` (status, the body as text, a header), on
// node:http and node:https with connections kept alive. The global fetch (undici) cost the worker's
// main thread about three times as much CPU per request as this, and the worker sends one to two
// requests for every string it sends back (an issue's look-up and its POST). As fetch does: bodies
// compressed with gzip, deflate or br are decoded, text is read as UTF-8 without a leading BOM, a
// User-Agent is sent. Unlike fetch: redirects are not followed (the API answers without them; one
// would be an error answer, not a hidden second request), and an answer is refused beyond
// MAX_BODY_BYTES, compressed or not (fetch would read a compression bomb until memory ran out).
import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import path from 'node:path'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { PACKAGE_ROOT } from '../config/package-root.js'

/** What the client reads of an answer. */
export interface TransportResponse {
  status: number
  headers: { get(name: string): string | null }
  text(): Promise<string>
}

export interface TransportInit {
  method?: string
  headers?: Record<string, string>
  body?: string
  signal?: AbortSignal
}

export type Transport = (url: string, init?: TransportInit) => Promise<TransportResponse>

/**
 * An idle connection is closed after this long (or sooner, if the server's Keep-Alive header says
 * so): before the server closes it (Node's default is 5 s), so that a request is seldom sent on a
 * connection the server is closing.
 */
export const IDLE_SOCKET_MS = 4000

/**
 * The longest answer read, in bytes as received and again once decompressed: far above the largest
 * the API sends (500 translations of long texts), far below what would exhaust the heap.
 */
export const MAX_BODY_BYTES = 64 * 1024 * 1024

const gunzip = promisify(zlib.gunzip)
const inflate = promisify(zlib.inflate)
const inflateRaw = promisify(zlib.inflateRaw)
const brotli = promisify(zlib.brotliDecompress)

async function decode(raw: Buffer, encoding: string, maxBytes: number): Promise<Buffer> {
  if (raw.length === 0) return raw
  const limit = { maxOutputLength: maxBytes }
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return gunzip(raw, { finishFlush: zlib.constants.Z_SYNC_FLUSH, ...limit })
    case 'deflate':
      // zlib-wrapped as the standard says, or raw as some servers send it.
      return inflate(raw, limit).catch(() => inflateRaw(raw, limit))
    case 'br':
      return brotli(raw, limit)
    default:
      return raw
  }
}

let userAgent: string | undefined
/** `switchyard/<version>`, as the package says. */
function agentName(): string {
  if (userAgent) return userAgent
  let version = 'unknown'
  try {
    version = String((JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version ?? version)
  } catch {
    // The name alone, then.
  }
  return (userAgent = `switchyard/${version}`)
}

/** A transport with its own connection pools (one per scheme). */
export function createHttpTransport(options: { maxBodyBytes?: number } = {}): Transport & { close(): void } {
  const maxBytes = options.maxBodyBytes ?? MAX_BODY_BYTES
  const utf8 = new TextDecoder()
  const agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  }
  const transport = (url: string, init: TransportInit = {}) =>
    new Promise<TransportResponse>((resolve, reject) => {
      const target = new URL(url)
      const client = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined
      if (!client) return reject(new TypeError(`unsupported protocol in ${target.origin}`))
      const { signal } = init
      if (signal?.aborted) return reject(signal.reason)
      const body = init.body === undefined ? undefined : Buffer.from(init.body)
      const req = client.request(
        target,
        {
          method: init.method ?? 'GET',
          agent: agents[target.protocol as 'http:' | 'https:'],
          headers: { 'user-agent': agentName(), 'accept-encoding': 'gzip, deflate, br', ...init.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = []
          let received = 0
          res.on('data', (chunk: Buffer) => {
            received += chunk.length
            if (received > maxBytes) return fail(new Error(`the answer is longer than ${maxBytes} bytes`))
            chunks.push(chunk)
          })
          res.on('error', fail)
          res.on('end', () => {
            if (!res.complete) return fail(new Error('the connection closed before the answer was complete'))
            const encoding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase()
            // Everything that may throw is inside the chain: whatever happens, the promise settles.
            decode(Buffer.concat(chunks), encoding, maxBytes).then((bytes) => {
              // As fetch's text(): UTF-8, a leading BOM dropped, invalid bytes replaced.
              const text = utf8.decode(bytes)
              signal?.removeEventListener('abort', onAbort)
              resolve({
                status: res.statusCode ?? 0,
                headers: {
                  get: (name) => {
                    const v = res.headers[name.toLowerCase()]
                    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v
                  },
                },
                text: () => Promise.resolve(text),
              })
            }).catch(fail)
          })
        },
      )
      function fail(error: unknown): void {
        signal?.removeEventListener('abort', onAbort)
        req.destroy()
        reject(error)
      }
      function onAbort(): void {
        fail(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      req.on('error', fail)
      req.end(body)
    })
  return Object.assign(transport, {
    close() {
      agents['http:'].destroy()
      agents['https:'].destroy()
    },
  })
}
