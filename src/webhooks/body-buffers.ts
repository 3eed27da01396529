// Webhook bodies read into memory that is used again. A 285 KB body read by raw-body is one fresh
// allocation per request (Buffer.concat of its chunks); glibc maps every allocation over 128 KB
// afresh (MALLOC_TRIM_THRESHOLD_ is fixed for the burst's memory, which fixes the mmap threshold
// too), so each body paid its page faults: about 1.1 ms per 285 KB body on the main thread,
// against 0.03 ms to copy the same chunks into memory already mapped (docs/performance.md). So a
// body whose Content-Length is known goes into a buffer of this pool; the ingest thread that
// decodes it (decode-pool.ts) gets the memory moved, not copied, and moves it back with its answer.
// The pool holds few buffers and lets them all go once no body has come for a while, so that a
// burst journaled and then draining (issue 16) does not keep them for its peak.
import type { IncomingMessage } from 'node:http'
import createHttpError from 'http-errors'
import getRawBody from 'raw-body'

export interface BodyBuffersOptions {
  /** Bodies smaller than this are read as before (one allocation, not worth a buffer kept). */
  minBytes?: number
  /** Bodies larger than this are read as before (rare; a buffer that large is not kept). */
  maxBytes?: number
  /** The most memory the pool keeps for buffers given back (bytes). */
  keepBytes?: number
  /** Buffers kept are let go after this long without a body taking one (ms; 0: never). */
  idleMs?: number
}

export const BODY_BUFFER_MIN_BYTES = 64 * 1024
export const BODY_BUFFER_MAX_BYTES = 4 * 1024 * 1024
export const BODY_BUFFERS_KEEP_BYTES = 16 * 1024 * 1024
export const BODY_BUFFERS_IDLE_MS = 10_000

/** Buffers of power-of-two sizes, given out for one body each and given back when it is decoded. */
export class BodyBuffers {
  readonly minBytes: number
  readonly maxBytes: number
  private readonly keepBytes: number
  private readonly idleMs: number
  /** Free buffers by size (a power of two). */
  private readonly free = new Map<number, ArrayBuffer[]>()
  /** The buffers given out by this pool (only those may come back). */
  private readonly mine = new WeakSet<ArrayBuffer>()
  private keptBytes = 0
  private idle: NodeJS.Timeout | undefined
  /** Bodies read into a buffer used before (for tests and the bench). */
  reused = 0

  constructor(options: BodyBuffersOptions = {}) {
    this.minBytes = options.minBytes ?? BODY_BUFFER_MIN_BYTES
    this.maxBytes = options.maxBytes ?? BODY_BUFFER_MAX_BYTES
    this.keepBytes = options.keepBytes ?? BODY_BUFFERS_KEEP_BYTES
    this.idleMs = options.idleMs ?? BODY_BUFFERS_IDLE_MS
  }

  /** Memory held by free buffers (bytes). */
  get held(): number {
    return this.keptBytes
  }

  /**
   * A Buffer of exactly `size` bytes over memory of this pool (a free buffer when one is large
   * enough, else a new one), or undefined when a body of that size is not read into the pool.
   */
  take(size: number): Buffer | undefined {
    if (!Number.isSafeInteger(size) || size < this.minBytes || size > this.maxBytes) return undefined
    this.touch()
    const capacity = this.capacity(size)
    const list = this.free.get(capacity)
    let memory = list?.pop()
    if (memory) {
      this.keptBytes -= capacity
      this.reused++
    } else {
      memory = new ArrayBuffer(capacity)
      this.mine.add(memory)
    }
    return Buffer.from(memory, 0, size)
  }

  /** Is this memory from the pool (to be moved to a thread and given back)? */
  owns(memory: ArrayBufferLike): boolean {
    return memory instanceof ArrayBuffer && this.mine.has(memory)
  }

  /**
   * Memory taken from this pool, free again: given back here, or moved back from a thread (a new
   * ArrayBuffer object over the same memory, so known by its size: a power of two in the pool's
   * range). Ignored if detached, of another size, or over the pool's keep.
   */
  give(memory: ArrayBuffer): void {
    const capacity = memory.byteLength
    if (!this.mine.has(memory) && !this.isClass(capacity)) return
    if (capacity === 0 || this.keptBytes + capacity > this.keepBytes) return
    const list = this.free.get(capacity)
    if (list?.includes(memory)) return
    if (list) list.push(memory)
    else this.free.set(capacity, [memory])
    this.keptBytes += capacity
    this.mine.add(memory)
  }

  private isClass(size: number): boolean {
    return size > 0 && Number.isInteger(Math.log2(size)) && size >= this.capacity(this.minBytes) && size <= this.capacity(this.maxBytes)
  }

  private capacity(size: number): number {
    return 2 ** Math.ceil(Math.log2(size))
  }

  /** Let every free buffer go. */
  clear(): void {
    this.free.clear()
    this.keptBytes = 0
    if (this.idle) clearTimeout(this.idle)
    this.idle = undefined
  }

  private touch() {
    if (this.idleMs <= 0) return
    if (this.idle) this.idle.refresh()
    else {
      this.idle = setTimeout(() => {
        this.idle = undefined
        this.free.clear()
        this.keptBytes = 0
      }, this.idleMs)
      this.idle.unref()
    }
  }
}

/**
 * A request's body, whole, as raw-body reads it (the same limit and the same errors, with their
 * `type`: entity.too.large, request.size.invalid, request.aborted), into a buffer of `buffers`
 * when its Content-Length is known and in the pool's range.
 */
export function readBody(req: IncomingMessage, limit: number, buffers: BodyBuffers | undefined): Promise<Buffer> {
  const header = req.headers['content-length']
  const declared = header !== undefined && /^\d+$/.test(header) ? Number(header) : NaN
  // A stream already read or broken goes to raw-body, for its answer.
  const target = buffers && declared <= limit && req.readable ? buffers.take(declared) : undefined
  if (!target) return getRawBody(req, { limit })
  return new Promise<Buffer>((resolve, reject) => {
    let at = 0
    const finish = (error?: Error) => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('aborted', onAborted)
      req.off('close', onClose)
      req.off('error', finish)
      if (!error) return resolve(target)
      buffers!.give(target.buffer as ArrayBuffer)
      req.pause()
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      if (at + chunk.length > declared) {
        // Node's parser never reads past Content-Length; kept for a stream that would.
        return finish(createHttpError(400, 'request size did not match content length', { type: 'request.size.invalid', expected: declared, received: at + chunk.length }))
      }
      chunk.copy(target, at)
      at += chunk.length
    }
    const onEnd = () => {
      if (at === declared) finish()
      else finish(createHttpError(400, 'request size did not match content length', { type: 'request.size.invalid', expected: declared, received: at }))
    }
    const onAborted = () => finish(createHttpError(400, 'request aborted', { type: 'request.aborted', expected: declared, received: at }))
    // Closed before its end: raw-body would wait for ever; this is the same as aborted.
    const onClose = () => onAborted()
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('aborted', onAborted)
    req.on('close', onClose)
    req.on('error', finish)
  })
}
