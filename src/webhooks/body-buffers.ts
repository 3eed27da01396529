// Webhook bodies read into memory that is used again. A 285 KB body read by raw-body is one fresh
// allocation per request (Buffer.concat of its chunks); glibc maps every allocation over 128 KB
// afresh (MALLOC_TRIM_THRESHOLD_ is fixed for the burst's memory, which fixes the mmap threshold
// too), so each body paid its page faults: the concatenation alone about 1.1 ms per 285 KB body,
// against 0.03 ms to copy the same chunks into memory already mapped; reading a whole body costs
// 0.71-0.79 ms of CPU into this pool against 1.03-1.23 with raw-body (docs/performance.md). So a
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
  /** Buffers kept are let go after this long without one taken or given back (ms; 0: never). */
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
  /** The buffers this pool gave out or took back (a body in one is moved to its thread). */
  private readonly mine = new WeakSet<ArrayBuffer>()
  private keptBytes = 0
  private idle: NodeJS.Timeout | undefined
  private closed = false
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

  /** Is a body of this size read into the pool? */
  fits(size: number): boolean {
    return Number.isSafeInteger(size) && size >= this.minBytes && size <= this.maxBytes
  }

  /**
   * A Buffer of exactly `size` bytes over memory of this pool (a free buffer of its size class,
   * the next power of two, else a new one), or undefined when a body of that size is not read
   * into the pool.
   */
  take(size: number): Buffer | undefined {
    if (!this.fits(size)) return undefined
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
   * range). Ignored if detached, of another size, or after `clear()`. Over the pool's keep,
   * larger free buffers make room for it (bodies are mostly of one usual size; a few large ones
   * must not leave every usual body a fresh allocation), else it goes.
   */
  give(memory: ArrayBuffer): void {
    const capacity = memory.byteLength
    if (this.closed || capacity === 0) return
    if (!this.mine.has(memory) && !this.isClass(capacity)) return
    const list = this.free.get(capacity)
    if (list?.includes(memory)) return
    if (!this.makeRoom(capacity)) return
    if (list) list.push(memory)
    else this.free.set(capacity, [memory])
    this.keptBytes += capacity
    this.mine.add(memory)
    // Given back after the timer let the others go (a slow or aborted body): it goes in its turn.
    this.touch()
  }

  /** Drop free buffers larger than `capacity` until it fits under the keep; false if it can't. */
  private makeRoom(capacity: number): boolean {
    if (this.keptBytes + capacity <= this.keepBytes) return true
    for (const size of [...this.free.keys()].sort((a, b) => b - a)) {
      if (size <= capacity) break
      const list = this.free.get(size)!
      while (list.length && this.keptBytes + capacity > this.keepBytes) {
        list.pop()
        this.keptBytes -= size
      }
      if (!list.length) this.free.delete(size)
      if (this.keptBytes + capacity <= this.keepBytes) return true
    }
    return false
  }

  private isClass(size: number): boolean {
    return size > 0 && Number.isInteger(Math.log2(size)) && size >= this.capacity(this.minBytes) && size <= this.capacity(this.maxBytes)
  }

  private capacity(size: number): number {
    return 2 ** Math.ceil(Math.log2(size))
  }

  /** Let every free buffer go, and take none back (the pool closes). */
  clear(): void {
    this.closed = true
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
  if (!buffers || !(declared <= limit) || !req.readable || !buffers.fits(declared)) return getRawBody(req, { limit })
  return new Promise<Buffer>((resolve, reject) => {
    // Taken with the first bytes: a client that sends headers only holds no memory of the pool.
    let target: Buffer | undefined
    let at = 0
    const finish = (error?: Error) => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('aborted', onAborted)
      req.off('close', onClose)
      req.off('error', finish)
      if (!error) return resolve(target ?? Buffer.alloc(0))
      if (target) buffers.give(target.buffer as ArrayBuffer)
      req.pause()
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      if (at + chunk.length > declared) {
        // Node's parser never reads past Content-Length; kept for a stream that would.
        return finish(createHttpError(400, 'request size did not match content length', { type: 'request.size.invalid', expected: declared, received: at + chunk.length }))
      }
      target ??= buffers.take(declared)!
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
