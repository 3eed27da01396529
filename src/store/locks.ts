// Named mutual exclusion across every instance sharing a store, where Keyv offers none: used for
// single-flight work such as refreshing one organization's OAuth token once, not once per replica.
//
//   redis://     SET key token NX PX ttl, retried with short jittered waits; the TTL is renewed
//                while fn runs and frees the lock of a holder that crashed; released by a Lua
//                script only if the token is still ours (a holder that overran its TTL must not
//                delete the next holder's lock).
//   postgres://  pg_try_advisory_lock on a connection held for the duration of fn; PostgreSQL
//                drops it when that session ends, so a crashed holder frees it at once.
//   sqlite://, memory://   one process: an in-process queue per key.
//
// Written by hand: the well-kept Redis lock libraries (redlock) target ioredis, while the store
// uses node-redis through @keyv/redis; the protocol above is short and tested.
import { randomBytes } from 'node:crypto'

export type LockFn = <T>(key: string, fn: () => Promise<T>) => Promise<T>

export interface Locks {
  /** Run fn while holding the lock named key; waits for it (up to `waitMs`), then throws LockTimeoutError. */
  lock: LockFn
  /** Which kind of lock: across instances (redis, postgres) or within this process (local). */
  kind: 'redis' | 'postgres' | 'local'
  /** Disconnect. Locks still held are released by their fn's end, or by TTL/session end. */
  close(): Promise<void>
}

export interface LockOptions {
  /** Longest wait for a lock before LockTimeoutError (default 30 s). Not applied to local locks. */
  waitMs?: number
  /** Redis: how long a lock outlives a holder that stops renewing it, i.e. crashed (default 30 s). */
  ttlMs?: number
  /** Put before every lock key, so deployments sharing a Redis or database don't collide (default `switchyard`). */
  prefix?: string
  /** Redis: called if renewing finds the lock gone (fn overran a stall longer than the TTL). */
  onLost?: (key: string) => void
}

export class LockTimeoutError extends Error {
  constructor(key: string, waitMs: number) {
    super(`lock "${key}" not acquired within ${waitMs} ms (another instance holds it)`)
    this.name = 'LockTimeoutError'
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
/** 20-70 ms: short enough to hand a lock over quickly, jittered so waiters don't retry in step. */
const jitter = () => 20 + Math.random() * 50

export async function createLock(storeUrl: string, options: LockOptions = {}): Promise<Locks> {
  const at = storeUrl.indexOf('://')
  const scheme = at > 0 ? storeUrl.slice(0, at) : ''
  switch (scheme) {
    case 'memory':
    case 'sqlite':
      return localLocks()
    case 'redis':
    case 'rediss':
      return redisLocks(storeUrl, options)
    case 'postgres':
    case 'postgresql':
      return postgresLocks(storeUrl, options)
    default:
      throw new Error(`STORE_URL: unsupported scheme "${scheme}" for locks`)
  }
}

/** FIFO per key within this process: each caller waits for the one before it. */
export function localLocks(): Locks {
  const tails = new Map<string, Promise<void>>()
  return {
    kind: 'local',
    async lock(key, fn) {
      const before = tails.get(key) ?? Promise.resolve()
      let release!: () => void
      const mine = new Promise<void>((r) => (release = r))
      const tail = before.then(() => mine)
      tails.set(key, tail)
      await before
      try {
        return await fn()
      } finally {
        release()
        if (tails.get(key) === tail) tails.delete(key)
      }
    },
    async close() {},
  }
}

// KEYS[1] lock key, ARGV[1] token: delete only our own lock.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`
// KEYS[1] lock key, ARGV[1] token, ARGV[2] ttl ms: renew only our own lock.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`

async function redisLocks(url: string, options: LockOptions): Promise<Locks> {
  const { createClient } = await import('@keyv/redis')
  const waitMs = options.waitMs ?? 30_000
  const ttlMs = Math.max(100, options.ttlMs ?? 30_000)
  const prefix = `${options.prefix ?? 'switchyard'}:lock:`
  const client = createClient({ url, socket: { reconnectStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2_000) } })
  // Connection errors are retried by the client and surface to callers as timeouts.
  client.on('error', () => undefined)
  let connecting: Promise<unknown> | undefined
  const connected = () => {
    if (client.isOpen) return Promise.resolve()
    connecting ??= client.connect().finally(() => (connecting = undefined))
    return connecting
  }
  /** p, or LockTimeoutError at the deadline. */
  const by = async <T>(p: Promise<T>, deadline: number, key: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LockTimeoutError(key, waitMs)), Math.max(0, deadline - Date.now()))
    })
    try {
      return await Promise.race([p, late])
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    kind: 'redis',
    async lock(key, fn) {
      const k = prefix + key
      const token = randomBytes(16).toString('hex')
      const deadline = Date.now() + waitMs
      await by(connected(), deadline, key)
      for (;;) {
        const set = client.set(k, token, { condition: 'NX', expiration: { type: 'PX', value: ttlMs } })
        // A SET that lands after we gave up would hold the lock until its TTL: release it then.
        set.catch(() => undefined)
        let ok: unknown
        try {
          ok = await by(set, deadline, key)
        } catch (err) {
          void set.then((r) => (r === 'OK' ? client.eval(RELEASE, { keys: [k], arguments: [token] }) : undefined)).catch(() => undefined)
          throw err
        }
        if (ok === 'OK') break
        if (Date.now() >= deadline) throw new LockTimeoutError(key, waitMs)
        await sleep(Math.min(jitter(), Math.max(0, deadline - Date.now())))
      }
      const renew = setInterval(() => {
        client.eval(RENEW, { keys: [k], arguments: [token, String(ttlMs)] }).then(
          (r) => {
            if (r === 0) options.onLost?.(key)
          },
          () => undefined,
        )
      }, Math.max(50, Math.floor(ttlMs / 3)))
      renew.unref()
      try {
        return await fn()
      } finally {
        clearInterval(renew)
        // If this fails (Redis down), the TTL frees the lock.
        await client.eval(RELEASE, { keys: [k], arguments: [token] }).catch(() => undefined)
      }
    },
    async close() {
      if (!client.isOpen) return
      if (client.isReady) await client.close().catch(() => client.destroy())
      else client.destroy()
    },
  }
}

async function postgresLocks(storeUrl: string, options: LockOptions): Promise<Locks> {
  const { default: pg } = await import('pg')
  const url = new URL(storeUrl)
  url.searchParams.delete('table')
  url.searchParams.delete('schema')
  const waitMs = options.waitMs ?? 30_000
  const space = options.prefix ?? 'switchyard'
  // Every held lock (and every waiter) keeps one connection: advisory locks belong to a session.
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10, connectionTimeoutMillis: waitMs, idleTimeoutMillis: 10_000 })
  pool.on('error', () => undefined)
  const quiet = () => undefined

  return {
    kind: 'postgres',
    async lock(key, fn) {
      const deadline = Date.now() + waitMs
      const client = await pool.connect()
      // A connection lost while we hold it emits 'error' on the client (the pool only listens
      // while it is idle); the query in flight or the unlock then fails and we throw.
      client.on('error', quiet)
      const release = (err?: unknown) => {
        client.removeListener('error', quiet)
        // A broken connection is destroyed, not handed back to the pool.
        client.release(err === undefined || err instanceof LockTimeoutError ? undefined : err instanceof Error ? err : true)
      }
      try {
        for (;;) {
          // Two-key form: (space, key) keeps clear of other applications' advisory locks.
          const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS ok', [space, key])
          if (rows[0]?.ok) break
          if (Date.now() >= deadline) throw new LockTimeoutError(key, waitMs)
          await sleep(Math.min(jitter(), Math.max(0, deadline - Date.now())))
        }
      } catch (err) {
        release(err)
        throw err
      }
      try {
        return await fn()
      } finally {
        try {
          await client.query('SELECT pg_advisory_unlock(hashtext($1), hashtext($2))', [space, key])
          release()
        } catch (err) {
          // Destroying the connection ends the session, which releases the lock too.
          release(err)
        }
      }
    },
    async close() {
      await pool.end().catch(() => undefined)
    },
  }
}
