// Tests that need a real Redis or PostgreSQL: they run when the service answers, are skipped
// with a visible reason when it doesn't, and fail instead of skipping when CI is set (a CI run
// that silently skipped the back-end tests would pass for the wrong reason).
//
// Where the services are looked for (override to point elsewhere, or at a closed port to try the
// skip path):
//   SWITCHYARD_TEST_REDIS_URL     default redis://127.0.0.1:6379
//   SWITCHYARD_TEST_POSTGRES_URL  default postgres://postgres@127.0.0.1:5432/test
import net from 'node:net'
import { describe, it } from 'vitest'

export type ServiceName = 'redis' | 'postgres'

const SERVICES: Record<ServiceName, { env: string; defaultUrl: string; defaultPort: number; howToStart: string }> = {
  redis: {
    env: 'SWITCHYARD_TEST_REDIS_URL',
    defaultUrl: 'redis://127.0.0.1:6379',
    defaultPort: 6379,
    howToStart: 'start one with `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save ""` or run .ci/run',
  },
  postgres: {
    env: 'SWITCHYARD_TEST_POSTGRES_URL',
    defaultUrl: 'postgres://postgres@127.0.0.1:5432/test',
    defaultPort: 5432,
    howToStart: 'start the cluster with `pg_ctlcluster <version> main start`, create the database with `createdb test` (trust auth for user postgres), or run .ci/run',
  },
}

export interface ServiceStatus {
  name: ServiceName
  url: string
  host: string
  port: number
  /** available: run the tests; skip: service down outside CI; fail: service down and CI is set. */
  decision: 'available' | 'skip' | 'fail'
  /** Why the tests are skipped or fail (empty when available). */
  reason: string
}

/** The URL tests use for the service (the env override, else the local default). */
export function serviceUrl(name: ServiceName, env: NodeJS.ProcessEnv = process.env): string {
  const s = SERVICES[name]
  return env[s.env] || s.defaultUrl
}

/** Does something accept TCP connections at host:port within `timeoutMs`? */
export function probeTcp(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** Probe the service and decide what its tests do. */
export async function serviceStatus(name: ServiceName, env: NodeJS.ProcessEnv = process.env): Promise<ServiceStatus> {
  const s = SERVICES[name]
  const url = serviceUrl(name, env)
  const parsed = new URL(url)
  const host = (parsed.hostname || '127.0.0.1').replace(/^\[|\]$/g, '')
  const port = Number(parsed.port) || s.defaultPort
  if (await probeTcp(host, port)) return { name, url, host, port, decision: 'available', reason: '' }
  const where = `${host}:${port}`
  if (env.CI) {
    return { name, url, host, port, decision: 'fail', reason: `${name} is not reachable at ${where} and CI is set: the ${name} tests must run in CI (${s.howToStart})` }
  }
  return { name, url, host, port, decision: 'skip', reason: `${name} is not reachable at ${where}: skipping the ${name} tests; ${s.howToStart} (or set ${s.env})` }
}

const probes = new Map<ServiceName, Promise<ServiceStatus>>()
const warned = new Set<ServiceName>()

/** True when the service answers; probed once per test file. */
export async function serviceAvailable(name: ServiceName): Promise<boolean> {
  return (await cachedStatus(name)).decision === 'available'
}

function cachedStatus(name: ServiceName): Promise<ServiceStatus> {
  let p = probes.get(name)
  if (!p) probes.set(name, (p = serviceStatus(name)))
  return p
}

/**
 * `describe(title, () => fn(url))` when the service answers. Otherwise a skipped suite (plus a
 * warning naming the service and how to start it), or, with CI set, a suite whose one test fails
 * with that reason. Await it at the top level of a test file:
 *
 *   await describeWithService('redis', 'journal on redis', (url) => { it(...) })
 */
export async function describeWithService(name: ServiceName, title: string, fn: (url: string) => void): Promise<void> {
  const status = await cachedStatus(name)
  switch (status.decision) {
    case 'available':
      describe(title, () => fn(status.url))
      return
    case 'skip':
      if (!warned.has(name)) console.warn(`[switchyard tests] ${status.reason}`)
      warned.add(name)
      describe.skip(`${title} (skipped: ${name} not reachable at ${status.host}:${status.port})`, () => fn(status.url))
      return
    case 'fail':
      describe(title, () => {
        it(`needs ${name}`, () => {
          throw new Error(status.reason)
        })
      })
      return
    default: {
      const never: never = status.decision
      throw new Error(`unknown decision ${String(never)}`)
    }
  }
}

/** Empty one Redis database (each BullMQ test file has a database of its own, emptied around its tests). */
export async function flushRedis(url: string): Promise<void> {
  const { redisClient } = await import('../../src/queue/bullmq-journal.js')
  const client = redisClient(url)
  try {
    await client.flushdb()
  } finally {
    client.disconnect()
  }
}

/**
 * Remove a BullMQ journal's queue from Redis, every key of it: BullMQ's (obliterate) and the
 * journal's own beside them (fairness, the filter of finished strings, held strings), which
 * obliterate leaves. For test files that share a database and tell their queues apart by name.
 */
export async function forgetJournalQueue(journal: unknown): Promise<void> {
  const { queue, queueClient } = journal as { queue: { obliterate(o: { force: boolean }): Promise<void>; toKey(name: string): string }; queueClient: { scan(cursor: string, ...args: string[]): Promise<[string, string[]]>; del(...keys: string[]): Promise<number> } }
  await queue.obliterate({ force: true }).catch(() => undefined)
  let cursor = '0'
  do {
    const [next, keys] = await queueClient.scan(cursor, 'MATCH', `${queue.toKey('')}*`, 'COUNT', '500').catch((): [string, string[]] => ['0', []])
    cursor = next
    if (keys.length) await queueClient.del(...keys).catch(() => undefined)
  } while (cursor !== '0')
}
