// When to try a model request again: the server's own word first (retry-after-ms, Retry-After in
// seconds or as an HTTP date), else exponential back-off with jitter (half fixed, half random, so waits never collapse to 0).
import { parseRetryAfter } from '../../src/util/retry-after.js'

/** The wait a response asks for, in ms; undefined when it names none (or an unreadable one). */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms)
  return parseRetryAfter(headers.get('retry-after'), now)
}

/** Attempt n (0-based) waits a random time in [base·2ⁿ/2, base·2ⁿ], capped at `maxMs`. */
export function backoffMs(attempt: number, baseMs: number, maxMs = 30_000, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt)
  return ceiling / 2 + random() * (ceiling / 2)
}

/** setTimeout as a promise that an AbortSignal cuts short (rejecting with the signal's reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason) }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
