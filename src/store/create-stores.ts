// Keyv set-up: one namespace each for settings, tokens, journal, caches and the activity log,
// all on the one back end STORE_URL names. Embedded default: SQLite in DATA_DIR.
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import Keyv, { type KeyvStoreAdapter } from 'keyv'

export type StoreName = 'settings' | 'tokens' | 'journal' | 'cache' | 'activity' | 'state'
export const STORE_NAMES: readonly StoreName[] = ['settings', 'tokens', 'journal', 'cache', 'activity', 'state']

export interface Stores {
  settings: Keyv
  tokens: Keyv
  journal: Keyv
  cache: Keyv
  activity: Keyv
  /** Small worker state: seen steps, disconnected organizations, ... */
  state: Keyv
  /** Which back end: 'sqlite' | 'redis' | 'postgres' | 'memory'. */
  kind: string
  /** Is the back end reachable? */
  ping(): Promise<boolean>
  close(): Promise<void>
}

async function adapterFor(storeUrl: string): Promise<{ kind: string; make: () => KeyvStoreAdapter | Map<unknown, unknown> }> {
  const scheme = storeUrl.slice(0, storeUrl.indexOf('://'))
  switch (scheme) {
    case 'memory':
      return { kind: 'memory', make: () => new Map() }
    case 'sqlite': {
      const file = storeUrl.slice('sqlite://'.length)
      if (file && file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
      const { default: KeyvSqlite } = await import('@keyv/sqlite')
      // WAL lets readers go on while the journal is written; it is a property of the file, so
      // setting it once holds for every connection.
      const first = new KeyvSqlite({ uri: `sqlite://${file}`, busyTimeout: 10_000 })
      await (first as unknown as { query: (sql: string) => Promise<unknown> }).query('PRAGMA journal_mode=WAL').catch(() => undefined)
      let reuse: typeof first | undefined = first
      return {
        kind: 'sqlite',
        make: () => {
          const a = reuse ?? new KeyvSqlite({ uri: `sqlite://${file}`, busyTimeout: 10_000 })
          reuse = undefined
          return a
        },
      }
    }
    case 'redis':
    case 'rediss': {
      const { default: KeyvRedis } = await import('@keyv/redis')
      return { kind: 'redis', make: () => new KeyvRedis(storeUrl) }
    }
    case 'postgres':
    case 'postgresql': {
      const { default: KeyvPostgres } = await import('@keyv/postgres')
      return { kind: 'postgres', make: () => new KeyvPostgres({ uri: storeUrl }) }
    }
    default:
      throw new Error(`STORE_URL: unsupported scheme "${scheme}"`)
  }
}

export async function createStores(storeUrl: string): Promise<Stores> {
  const { kind, make } = await adapterFor(storeUrl)
  // One adapter per namespace: Keyv sets `namespace` on its adapter, and iteration (journal
  // replay) and clear() use it, so namespaces sharing an adapter would read each other's keys.
  const adapters = STORE_NAMES.map(() => make())
  const stores = Object.fromEntries(STORE_NAMES.map((n, i) => [n, new Keyv({ store: adapters[i], namespace: n, throwOnErrors: true })])) as Record<StoreName, Keyv>
  // Errors are thrown to the caller (throwOnErrors); the listener only keeps the emitter quiet.
  for (const k of Object.values(stores)) k.on('error', () => undefined)
  return {
    ...stores,
    kind,
    async ping() {
      try {
        await stores.state.set('ping', Date.now())
        return (await stores.state.get('ping')) !== undefined
      } catch {
        return false
      }
    },
    async close() {
      for (const k of Object.values(stores)) await k.disconnect().catch(() => undefined)
    },
  }
}
