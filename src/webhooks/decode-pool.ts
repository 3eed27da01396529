// Where webhook bodies are decoded: in a small pool of threads (piscina), so that checking the
// signature and parsing hundreds of kilobytes of JSON per batch does not hold up the event loop
// that answers webhooks, runs the pipelines and reports; or inline (INGEST_THREADS=0, or a body
// too small to be worth the hop). Same bytes, same answer, either way (decode-batch.ts); `count`
// tells which way each body went (switchyard_webhook_decodes_total{where}).
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { PACKAGE_ROOT } from '../config/load-config.js'
import { letThreadsSizeTheirYoungGeneration } from '../config/thread-heap.js'
import { decodeBatch, type DecodeResult } from './decode-batch.js'
import { BodyBuffers } from './body-buffers.js'
import type { PooledAnswer } from './decode-thread.js'

export interface DecodePool {
  /**
   * `organization`: the X-…-Id header ('' when absent); `first`: the index of the body's first
   * event in its delivery (a slice of a large one, event-slices.ts).
   */
  decode(raw: Buffer, signature: string, organization?: string, first?: number): Promise<DecodeResult>
  /** Threads in the pool (0: everything inline). */
  readonly threads: number
  /** Threads running now: started by a large body, stopped after `idleMs` without one. */
  readonly running: number
  /**
   * Buffers to read large bodies into (body-buffers.ts): a body in one is moved to its thread and
   * moved back with the answer. Only with threads (inline, a fresh allocation costs the same).
   */
  readonly buffers?: BodyBuffers
  close(): Promise<void>
}

export interface DecodePoolOptions {
  threads: number
  secrets: readonly string[]
  /** Bodies smaller than this are decoded inline: the hop costs more than it saves. */
  inlineBelow?: number
  /**
   * A thread with no body to decode for this long is stopped (the next large body starts one
   * again); 0 keeps every thread started until the pool closes. Default DEFAULT_INGEST_IDLE_MS.
   */
  idleMs?: number
  /** Called once if the pool can't be used and decoding falls back to inline. */
  warn?(message: string): void
  /** Called for each body, with where it is decoded: in a thread of the pool, or inline. */
  count?(where: DecodedWhere): void
}

export type DecodedWhere = 'thread' | 'inline'

/**
 * How long an ingest thread may sit idle before it is stopped (INGEST_THREAD_IDLE_MS). An idle
 * thread waits in Atomics.wait, where V8 never collects: it kept its heap, its young generation
 * and the last bodies it decoded (their ArrayBuffers) for as long as the worker ran. In the burst
 * (issue 16) every batch is journaled within the outage and the peak comes later, while the
 * backlog drains with no body arriving: the two idle threads held about 55 MB of it then.
 */
export const DEFAULT_INGEST_IDLE_MS = 10_000


/**
 * The built file a thread starts with (a CommonJS entry that import()s the thread module, see
 * decode-thread-entry.cts); under vitest (TypeScript sources) the build's copy in dist/.
 */
export function decodeThreadFile(): string | undefined {
  const here = fileURLToPath(import.meta.url)
  const file = here.endsWith('.ts') ? path.join(PACKAGE_ROOT, 'dist', 'src', 'webhooks', 'decode-thread-entry.cjs') : path.join(path.dirname(here), 'decode-thread-entry.cjs')
  return existsSync(file) ? file : undefined
}

export function createDecodePool(options: DecodePoolOptions): DecodePool {
  const secrets = [...options.secrets]
  const count = options.count ?? (() => undefined)
  const inline = (raw: Buffer, signature: string, organization = '', first = 0) => {
    count('inline')
    return Promise.resolve(decodeBatch(raw, signature, secrets, organization, first))
  }
  const file = options.threads > 0 ? decodeThreadFile() : undefined
  if (options.threads > 0 && !file) options.warn?.('the ingest thread module is missing (run the build); webhooks are decoded on the main thread')
  if (!file || secrets.length === 0) return { decode: inline, threads: 0, running: 0, close: async () => undefined }
  const idleMs = options.idleMs ?? DEFAULT_INGEST_IDLE_MS

  letThreadsSizeTheirYoungGeneration()
  const pool = new Piscina({
    filename: file,
    // Started by the first large batch and stopped after idleMs without one: a worker that only
    // ever sees single strings (or a test) runs no threads at all, and one whose bodies stopped
    // coming (a burst journaled, its backlog draining) gives their memory back.
    minThreads: 0,
    maxThreads: options.threads,
    idleTimeout: idleMs > 0 ? idleMs : Number.POSITIVE_INFINITY,
    workerData: { secrets },
    // A thread's young generation is sized from the host's memory by default; a batch's parse
    // tree dies at once, so 8 MB does the same work (bench flood: 9,970 strings/s either way)
    // and keeps the process's peak at 265 MB instead of 350 (4 MB cost 15% of the throughput).
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  })
  const inlineBelow = options.inlineBelow ?? 16 * 1024
  // Only bodies that go to a thread are read into the pool's buffers; they let their buffers go
  // when the threads have been idle as long (a burst's bodies journaled, its backlog draining).
  const buffers = new BodyBuffers({ minBytes: Math.max(inlineBelow, 64 * 1024), idleMs })
  return {
    threads: options.threads,
    buffers,
    get running() {
      return pool.threads.length
    },
    async decode(raw, signature, organization = '', first = 0) {
      if (raw.length < inlineBelow) return inline(raw, signature, organization, first)
      if (buffers.owns(raw.buffer)) {
        const memory = raw.buffer as ArrayBuffer
        const bytes = new Uint8Array(memory, raw.byteOffset, raw.byteLength)
        count('thread')
        const answer = (await pool.run({ raw: bytes, signature, organization, pooled: true, first }, { transferList: [memory] })) as PooledAnswer | DecodeResult
        // A thread module older than the pool (a build left half done) answers without the memory.
        if (!('memory' in answer)) return answer
        buffers.give(answer.memory)
        return answer.result
      }
      // Move the bytes rather than copy them when the Buffer owns its memory (a large body read
      // by raw-body does; small ones may share Node's pool, which must not be detached).
      const own = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength
      const bytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength)
      count('thread')
      return pool.run({ raw: bytes, signature, organization, first }, own ? { transferList: [raw.buffer as ArrayBuffer] } : {}) as Promise<DecodeResult>
    },
    close: () => {
      buffers.clear()
      return pool.destroy()
    },
  }
}
