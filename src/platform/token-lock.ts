// The lock hook of the token manager: runs `fn` while holding a named lock. The default is an
// in-process keyed mutex; with several worker instances on one shared store, plug in a Redis
// (SET NX PX) or PostgreSQL (pg_advisory_xact_lock) lock with the same signature so that only one
// instance refreshes an organization's tokens at a time.

export type LockFn = <T>(key: string, fn: () => Promise<T>) => Promise<T>

/**
 * A keyed mutex for one process: callers of one key run one after another, other keys don't wait.
 * `tails` holds the last caller of each key that is held or waited for; pass your own map to see
 * which keys those are (the default is a fresh map only this lock sees).
 */
export function createLocalLock(tails: Map<string, Promise<unknown>> = new Map()): LockFn {
  return async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve()
    const run = previous.then(fn, fn)
    const tail = run.catch(() => undefined)
    tails.set(key, tail)
    try {
      return await run
    } finally {
      // Forget the key once nobody queued behind us, so the map doesn't grow with every domain ever seen.
      if (tails.get(key) === tail) tails.delete(key)
    }
  }
}
