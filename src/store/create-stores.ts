// Keyv set-up: one namespace each for settings, tokens, journal, caches, the activity log, the
// findings log and small state, all on the one back end STORE_URL names. Embedded default: SQLite
// in DATA_DIR.
//
// STORE_URL forms:
//   memory://                               tests only: nothing survives the process
//   sqlite://./data/switchyard.sqlite       single instance (the default)
//   redis://[:password@]host:6379[/db]      scale-out (rediss:// for TLS)
//   postgres://user:pass@host:5432/db[?table=switchyard&schema=public]   scale-out
import { closeSync, mkdirSync, openSync } from 'node:fs'
import path from 'node:path'
import Keyv, { type KeyvStoreAdapter } from 'keyv'

export type StoreName = 'settings' | 'tokens' | 'journal' | 'cache' | 'activity' | 'findings' | 'state'
export const STORE_NAMES: readonly StoreName[] = ['settings', 'tokens', 'journal', 'cache', 'activity', 'findings', 'state']

export type StoreKind = 'memory' | 'sqlite' | 'redis' | 'postgres'

export interface Stores {
  settings: Keyv
  tokens: Keyv
  journal: Keyv
  cache: Keyv
  activity: Keyv
  /** Per string and language, the latest outcome and its findings (src/findings/findings-log.ts). */
  findings: Keyv
  /** Small worker state: seen steps, disconnected organizations, ... */
  state: Keyv
  /** Which back end. */
  kind: StoreKind
  /**
   * Write many keys of namespace `name` at once, each with the time to live `ttlMs`. SQLite: one
   * statement, so one commit and a lock held for that statement only, never across the event loop
   * (a transaction spanning several statements would let writers on the other connections, each
   * waiting in a thread of the pool, take every thread the transaction needs to finish).
   * PostgreSQL: one statement too; Redis: one MULTI; memory: one write per key. A key given twice
   * keeps its last value.
   */
  setMany(name: StoreName, entries: Array<{ key: string; value: unknown }>, ttlMs?: number): Promise<void>
  /**
   * Parts of one stored value, by JSON path (`$.parts[2].t`), without reading it whole: where the
   * back end can (SQLite's json_extract), else absent. Resolves with the values in the paths'
   * order (an object or array as its JSON text, a missing path as null), or undefined when the key
   * is absent or expired. The journal reads one batch of a stored group this way (issue 16).
   */
  extract?(name: StoreName, key: string, paths: string[]): Promise<unknown[] | undefined>
  /**
   * The keys of a namespace that begin with one of `prefixes`, with their values, expired ones left
   * out, by range queries on the key (SQLite: one seek on the primary key per prefix; PostgreSQL:
   * one scan of the table for all of them, in byte order whatever the database's collation);
   * absent where the back end has none (Redis, memory). With `filter`, only the rows whose stored
   * text contains `contains` are read (a test inside the database, no JSON parsed), a page of
   * SCAN_PAGE_ROWS at a time, and of those only the ones `keep` accepts are answered: memory holds
   * what is kept, not what is scanned.
   */
  scan?(name: StoreName, prefixes: string[], filter?: ScanFilter): Promise<Array<[string, unknown]>>
  /** Can the back end be written and read right now (within `timeoutMs`, default 2 s)? Never throws. */
  ping(timeoutMs?: number): Promise<boolean>
  /** Disconnects every namespace's connection (and the PostgreSQL pool) so the process can exit. */
  close(): Promise<void>
}

/** What a filtered scan reads (Stores.scan). */
export interface ScanFilter {
  /** Only rows whose stored text (the JSON of the value) contains this; tested in the database. */
  contains: string
  /** Of those, the ones to answer (the key without the namespace, the value as stored). */
  keep(key: string, value: unknown): boolean
}

/** Rows a filtered scan reads per query (Stores.scan with a filter). */
export const SCAN_PAGE_ROWS = 512

export interface CreateStoresOptions {
  /**
   * Put before every namespace name (letters, digits, `-`, `_`), so several deployments or test
   * runs can share one Redis or one database without seeing each other's keys.
   */
  prefix?: string
  /** How long an operation waits for a connection to Redis or PostgreSQL before failing (default 5 s). */
  connectTimeoutMs?: number
}

interface Backend {
  kind: StoreKind
  make: () => KeyvStoreAdapter | Map<unknown, unknown>
  /** Keyv prefixes keys with `namespace:` itself unless the adapter namespaces them (Redis). */
  keyvPrefixes: boolean
  /** Disconnect what `make` created; called once by close(). */
  end: (adapters: Array<KeyvStoreAdapter | Map<unknown, unknown>>) => Promise<void>
  /**
   * Upsert rows of [key as stored, what Keyv stores under it ({ value, expires })] in one statement,
   * where the back end can; the back end writes the second as its JSON text, as Keyv's set() would.
   */
  upsertMany?: (adapter: KeyvStoreAdapter | Map<unknown, unknown>, rows: Array<[string, { value: unknown; expires?: number }]>) => Promise<unknown>
  /** Rows whose key lies in one of the ranges [from, until), as stored (the value as Keyv's JSON text of { value, expires }). */
  scanRanges?: (adapter: KeyvStoreAdapter | Map<unknown, unknown>, ranges: Array<[from: string, until: string]>) => Promise<Array<{ key: string; value: string }>>
  /** The same, only rows whose value holds the text `contains`, in pages of SCAN_PAGE_ROWS (`page` gets each). */
  scanContaining?: (adapter: KeyvStoreAdapter | Map<unknown, unknown>, ranges: Array<[from: string, until: string]>, contains: string, page: (rows: Array<{ key: string; value: string }>) => void) => Promise<void>
  /** Values at JSON paths of the value stored under one key (as stored), where the back end can. */
  extract?: (adapter: KeyvStoreAdapter | Map<unknown, unknown>, key: string, paths: string[]) => Promise<{ expires: unknown; values: unknown[] } | undefined>
}

const utf8 = new TextEncoder()
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const PREFIX = /^[A-Za-z0-9_-]*$/

async function backendFor(storeUrl: string, connectTimeoutMs: number): Promise<Backend> {
  const at = storeUrl.indexOf('://')
  const scheme = at > 0 ? storeUrl.slice(0, at) : ''
  switch (scheme) {
    case 'memory':
      return { kind: 'memory', make: () => new Map(), keyvPrefixes: true, end: async () => undefined }
    case 'sqlite': {
      const file = storeUrl.slice('sqlite://'.length)
      // What an operator can act on: the file, and that the worker's user must be able to write
      // there (the bare SQLITE_CANTOPEN / EACCES named neither).
      const cannotOpen = (error: unknown) =>
        Object.assign(
          new Error(
            `STORE_URL: cannot open the SQLite store ${path.resolve(file)} (${(error as Error).message}); ` +
              'make its directory (DATA_DIR) exist and writable by the user the worker runs as, on a writable volume with free space, or set STORE_URL/DATA_DIR to one that is',
          ),
          { cause: error },
        )
      if (file && file !== ':memory:') {
        try {
          // The worker's user's alone, like DATA_DIR/token.key and DATA_DIR/incoming/*: the file
          // holds every journaled delivery, the settings and the findings (SQLite would create it
          // 0644, and its WAL and SHM files take the database file's mode).
          mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 })
        } catch (error) {
          throw cannotOpen(error)
        }
        try {
          closeSync(openSync(path.resolve(file), 'wx', 0o600))
        } catch {
          // It exists (left as it is), or cannot be made: SQLite says why below.
        }
      }
      const { default: BaseSqlite } = await import('@keyv/sqlite')
      const KeyvSqlite = sqliteAdapter(BaseSqlite)
      // WAL lets readers go on while the journal is written; it is a property of the file, so
      // setting it once holds for every connection.
      const open = () => {
        const a = new KeyvSqlite({ uri: `sqlite://${file}`, busyTimeout: 10_000 })
        // The page cache is per connection (seven of them): SQLite's default of 2 MB each is
        // memory the worker keeps for pages the OS's file cache holds anyway (issue 16).
        void (a as unknown as SqlQuery).query(`PRAGMA cache_size=-${SQLITE_CACHE_KIB}`).catch(() => undefined)
        return a
      }
      const first = open()
      await (first as unknown as SqlQuery).query('PRAGMA journal_mode=WAL').catch(() => undefined)
      try {
        const [version] = (await (first as unknown as SqlQuery).query('SELECT sqlite_version() AS v').catch((error: unknown) => {
          throw cannotOpen(error)
        })) as Array<{ v: string }>
        requireSqlite(String(version?.v))
        // The batch writes and reads go through SQLite's JSON functions (built in since 3.38).
        await (first as unknown as SqlQuery).query(`SELECT json_extract('{"a":1}', '$.a') AS a`).catch((error: Error) => {
          throw new Error(`STORE_URL: this SQLite has no JSON functions (${error.message}). Reinstall the sqlite3 package with its own SQLite (npm rebuild sqlite3, without --sqlite=...)`)
        })
      } catch (error) {
        await (first as unknown as KeyvStoreAdapter).disconnect?.().catch(() => undefined)
        throw error
      }
      let reuse: typeof first | undefined = first
      return {
        kind: 'sqlite',
        make: () => {
          const a = reuse ?? open()
          reuse = undefined
          return a
        },
        keyvPrefixes: true,
        end: async (adapters) => {
          for (const a of adapters) await (a as KeyvStoreAdapter).disconnect?.().catch(() => undefined)
        },
        // The same upsert as the adapter's set(), for many rows: they come as one JSON parameter, and
        // json_extract gives each row's stored object as its JSON text. The rows are serialized
        // once: as a JSON text inside JSON, each value was escaped again, a second copy the size of
        // the first (the findings log's writes: 19.7 MB of parameters for 30,000 strings). The
        // parameter goes as UTF-8 bytes, read back as text by SQLite: node-sqlite3 binds a string
        // through N-API, whose UTF-8 length is counted one character at a time (about 1 ms on the
        // main thread for a run's 180 KB, against 0.05-0.15 for TextEncoder).
        upsertMany: (adapter, rows) => {
          const a = adapter as unknown as { opts: { table: string }; query: (sql: string, ...args: unknown[]) => Promise<unknown> }
          return a.query(
            `INSERT INTO ${a.opts.table} (key, value) SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]') FROM json_each(CAST(? AS TEXT)) AS j WHERE true ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
            utf8.encode(JSON.stringify(rows)),
          )
        },
        scanRanges: async (adapter, ranges) => {
          const a = adapter as unknown as { opts: { table: string }; query: (sql: string, ...args: unknown[]) => Promise<Array<{ key: string; value: string }>> }
          const rows: Array<{ key: string; value: string }> = []
          for (const [from, until] of ranges) rows.push(...(await a.query(`SELECT key, value FROM ${a.opts.table} WHERE key >= ? AND key < ?`, from, until)))
          return rows
        },
        scanContaining: sqliteScanContaining,
        extract: async (adapter, key, paths) => {
          const a = adapter as unknown as { opts: { table: string }; query: (sql: string, ...args: unknown[]) => Promise<Array<Record<string, unknown>>> }
          const columns = paths.map((_, i) => `json_extract(value, ?) AS p${i}`).join(', ')
          const [row] = await a.query(`SELECT json_extract(value, '$.expires') AS expires${columns ? `, ${columns}` : ''} FROM ${a.opts.table} WHERE key = ?`, ...paths, key)
          return row ? { expires: row.expires, values: paths.map((_, i) => row[`p${i}`] ?? null) } : undefined
        },
      }
    }
    case 'redis':
    case 'rediss': {
      const { default: KeyvRedis } = await import('@keyv/redis')
      type Adapter = InstanceType<typeof KeyvRedis>
      return {
        kind: 'redis',
        // One client per namespace (seven connections an instance): the adapter owns its client's
        // connect/reconnect cycle, and sharing one would have adapters racing to connect it.
        // connectionTimeout bounds how long an operation waits while Redis is unreachable
        // (without it, the first command would wait for ever); the adapter then throws.
        make: () => new KeyvRedis(storeUrl, { throwOnErrors: true, throwOnConnectError: true, connectionTimeout: connectTimeoutMs }),
        keyvPrefixes: false,
        end: async (adapters) => {
          await Promise.all(
            adapters.map(async (a) => {
              const adapter = a as Adapter
              // A graceful QUIT waits for queued commands; if Redis is gone they never finish.
              if (!(adapter.client as { isReady?: boolean }).isReady) return adapter.disconnect(true).catch(() => undefined)
              const graceful = adapter.disconnect(false).then(() => true, () => false)
              if (!(await withTimeout(graceful, 2_000, false))) await adapter.disconnect(true).catch(() => undefined)
            }),
          )
        },
      }
    }
    case 'postgres':
    case 'postgresql':
      return postgresBackend(storeUrl, connectTimeoutMs)
    default:
      throw new Error(`STORE_URL: unsupported scheme "${scheme}" (use sqlite://, redis://, rediss://, postgres:// or memory://)`)
  }
}

/** PostgreSQL: a table (`?table=`, `?schema=`) on a pool of this Stores' own. */
async function postgresBackend(storeUrl: string, connectTimeoutMs: number): Promise<Backend> {
  const url = new URL(storeUrl)
  const table = url.searchParams.get('table') ?? 'switchyard'
  const schema = url.searchParams.get('schema') ?? 'public'
  for (const [what, name] of [['table', table], ['schema', schema]] as const) {
    if (!IDENTIFIER.test(name)) throw new Error(`STORE_URL: ${what} "${name}" must be letters, digits and _ (not starting with a digit)`)
  }
  url.searchParams.delete('table')
  url.searchParams.delete('schema')
  const { default: KeyvPostgres } = await import('@keyv/postgres')
  const { default: pg } = await import('pg')
  // @keyv/postgres keeps one module-wide pool per URI and each adapter's disconnect() ends it,
  // so two Stores on one database (two journals in a test, a CLI command beside the server)
  // would close each other's connections. Each Stores gets its own pool instead.
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10, connectionTimeoutMillis: connectTimeoutMs, idleTimeoutMillis: 30_000 })
  // An idle connection dropped by a server restart must not crash the process; the next
  // query opens a new one.
  pool.on('error', () => undefined)
  const createTable =
    (schema === 'public' ? '' : `CREATE SCHEMA IF NOT EXISTS ${schema}; `) +
    `CREATE TABLE IF NOT EXISTS ${schema}.${table}(key VARCHAR(255) PRIMARY KEY, value TEXT)`
  // Made before the first query and again after a failure: if the database was down at start,
  // the table is created once it is back instead of every query failing for ever.
  let ready: Promise<void> | undefined
  const ensureTable = (): Promise<void> =>
    (ready ??= pool.query(createTable).then(
      () => undefined,
      (err: Error & { code?: string }) => {
        // Another instance created it at the same moment.
        if (err.code === '23505' || err.code === '42P07') return
        ready = undefined
        throw err
      },
    ))
  class PooledPostgres extends KeyvPostgres {
    override async connect(): Promise<(sql: string, values?: unknown) => Promise<unknown[]>> {
      return async (sql, values) => {
        await ensureTable()
        return (await pool.query(sql, values as unknown[] | undefined)).rows
      }
    }
    override async disconnect(): Promise<void> {
      // The pool belongs to the Stores; close() ends it once.
    }

    // The adapter's deletes read the rows whole first (over the network: a journal entry is up to
    // 1-2 MB), only to answer whether one was there; see sqliteAdapter.
    override async delete(key: string): Promise<boolean> {
      const self = this as unknown as { query: (sql: string, values: unknown[]) => Promise<unknown[]> }
      return (await self.query(`DELETE FROM ${schema}.${table} WHERE key = $1 RETURNING 1 AS gone`, [key])).length > 0
    }

    override async deleteMany(keys: string[]): Promise<boolean> {
      const self = this as unknown as { query: (sql: string, values: unknown[]) => Promise<unknown[]> }
      return (await self.query(`DELETE FROM ${schema}.${table} WHERE key = ANY($1) RETURNING 1 AS gone`, [keys])).length > 0
    }

    /**
     * The adapter's own iterator, save that a failed query throws: the adapter's emits an
     * 'error' event and ends as if it had seen every row, so a journal replay cut short by a
     * lost connection would have indexed part of the backlog and left the rest on disk until
     * the next restart. Keyset pages in the database's order (the primary key's index), of
     * as many rows as SQLite's.
     */
    override async *iterator(namespace?: string): AsyncGenerator<[string, string], void, unknown> {
      const query = await this.connect()
      const pattern = `${namespace ? `${namespace.replace(/[%_\\]/g, '\\$&')}:` : ''}%`
      const limit = namespace?.endsWith('findings') ? SQLITE_FINDINGS_PAGE_ROWS : SQLITE_PAGE_ROWS
      const from = `SELECT key, value FROM ${schema}.${table} WHERE key LIKE $1`
      let last: string | undefined
      for (;;) {
        const rows = (last === undefined
          ? await query(`${from} ORDER BY key LIMIT ${limit}`, [pattern])
          : await query(`${from} AND key > $2 ORDER BY key LIMIT ${limit}`, [pattern, last])) as Array<{ key: string; value: string }>
        for (const row of rows) yield [row.key, row.value]
        if (rows.length < limit) return
        last = rows[rows.length - 1]!.key
      }
    }
  }
  return {
    kind: 'postgres',
    make: () => new PooledPostgres({ table, schema }),
    keyvPrefixes: true,
    scanRanges: async (_adapter, ranges) => (ranges.length ? (await ensureTable(), pgScanRanges(pool, `${schema}.${table}`, ranges)) : []),
    scanContaining: async (_adapter, ranges, contains, page) => (await ensureTable(), pgScanContaining(pool, `${schema}.${table}`, ranges, contains, page)),
    end: async () => {
      await pool.end().catch(() => undefined)
    },
  }
}

export async function createStores(storeUrl: string, options: CreateStoresOptions = {}): Promise<Stores> {
  const prefix = options.prefix ?? ''
  // Keyv strips a key's namespace up to the first ':' and Redis matches namespaces as glob
  // patterns, so the prefix stays plain.
  if (!PREFIX.test(prefix)) throw new Error(`store prefix "${prefix}" must be letters, digits, - and _`)
  const backend = await backendFor(storeUrl, options.connectTimeoutMs ?? 5_000)
  // One adapter per namespace: Keyv sets `namespace` on its adapter, and iteration (journal
  // replay) and clear() use it, so namespaces sharing an adapter would read each other's keys.
  const adapters = STORE_NAMES.map(() => backend.make())
  // Native JSON: everything stored is plain JSON (no Buffers), and Keyv's default serializer builds
  // the text by recursive string concatenation and parses with a reviver over every string: it
  // was the largest cost of a journal write (bench).
  const stores = Object.fromEntries(
    STORE_NAMES.map((n, i) => [n, new Keyv({ store: adapters[i], namespace: prefix + n, throwOnErrors: true, useKeyPrefix: backend.keyvPrefixes, serialize: JSON.stringify, deserialize: JSON.parse })]),
  ) as Record<StoreName, Keyv>
  // Errors are thrown to the caller (throwOnErrors); the listener only keeps the emitter quiet.
  for (const k of Object.values(stores)) k.on('error', () => undefined)
  let closed: Promise<void> | undefined
  return {
    ...stores,
    kind: backend.kind,
    async setMany(name, entries, ttlMs) {
      if (!entries.length) return
      const oneByOne = async () => {
        for (const e of entries) await stores[name].set(e.key, e.value, ttlMs)
      }
      const upsert = backend.upsertMany
      if (!upsert) {
        // PostgreSQL and Redis: the adapter's setMany, one statement (UNNEST) or one MULTI for all
        // of them instead of a round trip, and on PostgreSQL a commit, per row (the findings log's
        // writes, row by row, held a restart's drain on PostgreSQL to a fifth of SQLite's). A key
        // given twice keeps its last value, as one by one: PostgreSQL refuses to upsert a row
        // twice in one statement.
        const last = new Map<string, unknown>()
        for (const e of entries) {
          last.delete(e.key)
          last.set(e.key, e.value)
        }
        await stores[name].setMany(Array.from(last, ([key, value]) => ({ key, value, ttl: ttlMs })))
        return
      }
      // Stored as Keyv stores them: the namespaced key, and { value, expires } as JSON.
      const expires = ttlMs ? Date.now() + ttlMs : undefined
      try {
        await upsert(adapters[STORE_NAMES.indexOf(name)]!, keyvRows(`${prefix}${name}:`, entries, expires))
      } catch (error) {
        // SQLite's JSON parser refuses a value nested about 1,000 deep, which set() stores as plain
        // text: the statement wrote nothing, and the rows go one by one instead.
        if (!/malformed JSON/i.test((error as Error).message ?? '')) throw error
        await oneByOne()
      }
    },
    ...(backend.scanRanges
      ? {
          async scan(name: StoreName, keyPrefixes: string[], filter?: ScanFilter) {
            const ns = `${prefix}${name}:`
            const froms = [...new Set(keyPrefixes)].filter((p) => p.length > 0).map((p) => ns + p)
            // The first string after every one that begins with `from`: its last character, plus one.
            const ranges = froms.map((from): [string, string] => [from, from.slice(0, -1) + String.fromCharCode(from.charCodeAt(from.length - 1) + 1)])
            const now = Date.now()
            const out: Array<[string, unknown]> = []
            const seen = new Set<string>()
            const take = (rows: Array<{ key: string; value: unknown }>) => {
              for (const row of rows) {
                // Ranges that overlap (one prefix beginning another) name a row twice.
                if (seen.has(row.key) || !froms.some((from) => row.key.startsWith(from))) continue
                const stored = (typeof row.value === 'string' ? JSON.parse(row.value) : row.value) as { value: unknown; expires?: number | null }
                if (typeof stored?.expires === 'number' && stored.expires <= now) continue
                const key = row.key.slice(ns.length)
                // Only what is answered is remembered (a filtered scan may pass over the whole namespace).
                if (filter && !filter.keep(key, stored.value)) continue
                seen.add(row.key)
                out.push([key, stored.value])
              }
            }
            const adapter = adapters[STORE_NAMES.indexOf(name)]!
            if (filter && backend.scanContaining) await backend.scanContaining(adapter, ranges, filter.contains, take)
            else take(await backend.scanRanges!(adapter, ranges))
            return out
          },
        }
      : {}),
    ...(backend.extract
      ? {
          async extract(name: StoreName, key: string, paths: string[]) {
            // Stored as Keyv stores them (setMany above): the namespaced key, the value under `value`.
            const found = await backend.extract!(adapters[STORE_NAMES.indexOf(name)]!, `${prefix}${name}:${key}`, paths.map((p) => `$.value${p.replace(/^\$/, '')}`))
            if (!found || (typeof found.expires === 'number' && found.expires <= Date.now())) return undefined
            return found.values
          },
        }
      : {}),
    async ping(timeoutMs = 2_000) {
      // A write and a read: a Redis replica left read-only after a fail-over answers reads
      // but can't take the journal.
      const probe = (async () => {
        await stores.state.set('ping', Date.now(), 60_000)
        return typeof (await stores.state.get('ping')) === 'number'
      })().catch(() => false)
      return withTimeout(probe, timeoutMs, false)
    },
    close() {
      closed ??= backend.end(adapters)
      return closed
    },
  }
}

/**
 * PostgreSQL rows in key ranges, compared in byte order (COLLATE "C") as the bounds are meant,
 * whatever the database's collation; the primary key's index is not in that collation, so this
 * reads the table once for all the ranges.
 */
async function pgScanRanges(pool: { query: (sql: string, values: unknown[]) => Promise<{ rows: unknown[] }> }, table: string, ranges: Array<[string, string]>) {
  const where = ranges.map((_, i) => `(key COLLATE "C" >= $${2 * i + 1} AND key COLLATE "C" < $${2 * i + 2})`).join(' OR ')
  return (await pool.query(`SELECT key, value FROM ${table} WHERE ${where}`, ranges.flat())).rows as Array<{ key: string; value: string }>
}

/**
 * SQLite rows in key ranges whose value contains `contains`, in keyset pages on the primary key
 * (as the iterator below): each query one seek, then the rows in key order, instr() looking at
 * each value's text without parsing it.
 */
async function sqliteScanContaining(adapter: KeyvStoreAdapter | Map<unknown, unknown>, ranges: Array<[string, string]>, contains: string, page: (rows: Array<{ key: string; value: string }>) => void): Promise<void> {
  const a = adapter as unknown as { opts: { table: string }; query: (sql: string, ...args: unknown[]) => Promise<Array<{ key: string; value: string }>> }
  for (const [from, until] of ranges) {
    let after: string | undefined
    for (;;) {
      const rows = await a.query(`SELECT key, value FROM ${a.opts.table} WHERE key ${after === undefined ? '>=' : '>'} ? AND key < ? AND instr(value, ?) > 0 ORDER BY key LIMIT ${SCAN_PAGE_ROWS}`, after ?? from, until, contains)
      if (rows.length) page(rows)
      if (rows.length < SCAN_PAGE_ROWS) break
      after = rows[rows.length - 1]!.key
    }
  }
}

/**
 * PostgreSQL rows in key ranges (byte order, as pgScanRanges) whose value contains `contains`
 * (strpos: no JSON parsed): one pass over the table for all the ranges (the primary key's index
 * is not in byte order, so a page per query would read the table once per page), through a cursor
 * that hands over SCAN_PAGE_ROWS rows at a time, in a transaction of its own.
 */
async function pgScanContaining(pool: { connect(): Promise<{ query: (sql: string, values?: unknown[]) => Promise<{ rows: unknown[] }>; release(destroy?: boolean): void; on(event: 'error', listener: () => void): unknown }> }, table: string, ranges: Array<[string, string]>, contains: string, page: (rows: Array<{ key: string; value: string }>) => void) {
  if (!ranges.length) return
  const where = ranges.map((_, i) => `(key COLLATE "C" >= $${2 * i + 2} AND key COLLATE "C" < $${2 * i + 3})`).join(' OR ')
  const client = await pool.connect()
  // A checked-out client has no listener of the pool's: a connection cut meanwhile would be an
  // unhandled 'error' event, and end the process. The query under way rejects with it anyway.
  client.on('error', () => undefined)
  let failed = false
  try {
    await client.query('BEGIN')
    await client.query(`DECLARE switchyard_scan NO SCROLL CURSOR FOR SELECT key, value FROM ${table} WHERE strpos(value, $1) > 0 AND (${where})`, [contains, ...ranges.flat()])
    for (;;) {
      const { rows } = (await client.query(`FETCH ${SCAN_PAGE_ROWS} FROM switchyard_scan`)) as { rows: Array<{ key: string; value: string }> }
      if (rows.length) page(rows)
      if (rows.length < SCAN_PAGE_ROWS) break
    }
    await client.query('COMMIT')
  } catch (error) {
    failed = true
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    // A connection that failed in the middle is not handed back to the pool (it may be broken, or in the transaction).
    client.release(failed)
  }
}

type SqlQuery = { query: (sql: string) => Promise<unknown> }

/** SQLite's page cache per connection, KiB (its default is 2,000). */
export const SQLITE_CACHE_KIB = 256

/** Rows a SQLite iteration reads per query: a few journal entries (each up to a group of batches). */
export const SQLITE_PAGE_ROWS = 16
/**
 * Rows per query when iterating the findings log, whose entries are a few hundred bytes each (a
 * query per 16 made its sweep 2.3 times as costly). A row deleted ahead of the cursor within the
 * page already read is still seen; the sweep takes that into account.
 */
export const SQLITE_FINDINGS_PAGE_ROWS = 512

/**
 * The stores' statements need SQLite 3.35 (`DELETE ... RETURNING`) and its JSON functions (checked
 * beside this). The sqlite3 package's own build has both (3.44 here); a build against an older
 * system SQLite fails at start, and not at the first delete.
 */
export function requireSqlite(version: string): void {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  if (!(major > 3 || (major === 3 && minor >= 35))) {
    throw new Error(`STORE_URL: SQLite ${version} is too old; 3.35 or later is needed. Reinstall the sqlite3 package with its own SQLite (npm rebuild sqlite3, without --sqlite=...)`)
  }
}

type SqliteClass = typeof import('@keyv/sqlite').default
type SqlSelf = { opts: { table: string }; query: (sql: string, ...args: unknown[]) => Promise<unknown[]> }

/**
 * The SQLite adapter with iteration by keyset paging, and deletes that do not read what they delete.
 *
 * Iteration: The adapter's own iterator pages with
 * `LIMIT 10 OFFSET n` over `key LIKE 'namespace:%'`: every page scans the table from its start
 * (quadratic in the rows: a restart over a backlog of a million strings, or a findings log of
 * millions of rows, spent minutes there) and recurses one generator deeper per page. Here each
 * page is one seek on the primary-key index, `key > (last key seen)` within the namespace's key
 * range, in key order (journal entries are named by time, so oldest first). Rows deleted or added
 * behind the cursor meanwhile are neither seen twice nor skipped.
 *
 * Deletes: the adapter's `delete` and `deleteMany` read every row whole (`SELECT *`) only to
 * answer whether one was there, then delete it. A journal entry is a group of batches (up to 1-2
 * MB of text), deleted once its last string is reported: the main thread received each one back
 * as a JS string to throw away (12.6 MB in one e2e bench's 60,000 strings; 179 MB through a
 * million-pair burst). `DELETE ... RETURNING` answers the same question in the same statement.
 */
export function sqliteAdapter(Base: SqliteClass): SqliteClass {
  return class SwitchyardSqlite extends Base {
    override async delete(key: string): Promise<boolean> {
      const self = this as unknown as SqlSelf
      const rows = await self.query(`DELETE FROM ${self.opts.table} WHERE key = ? RETURNING 1 AS gone`, key)
      return rows.length > 0
    }

    override async deleteMany(keys: string[]): Promise<boolean> {
      const self = this as unknown as SqlSelf
      const rows = await self.query(`DELETE FROM ${self.opts.table} WHERE key IN (SELECT value FROM json_each(?)) RETURNING 1 AS gone`, JSON.stringify(keys))
      return rows.length > 0
    }

    override async *iterator(namespace?: string): AsyncGenerator<[string, unknown], void, unknown> {
      const self = this as unknown as { opts: { table: string }; query: (sql: string, ...args: unknown[]) => Promise<Array<{ key: string; value: unknown }>> }
      // Keys of the namespace lie in [ "ns:", "ns;" ) (';' follows ':'); without one, every key.
      const from = namespace ? `${namespace}:` : ''
      const until = namespace ? `${namespace};` : undefined
      const limit = namespace?.endsWith('findings') ? SQLITE_FINDINGS_PAGE_ROWS : SQLITE_PAGE_ROWS
      const select = `SELECT key, value FROM ${self.opts.table} WHERE key > ?${until === undefined ? '' : ' AND key < ?'} ORDER BY key LIMIT ${limit}`
      // The first page: every key >= from, i.e. > the greatest string below it ("" has none below).
      let after: string | undefined = from
      let first = true
      for (;;) {
        const args: unknown[] = [after, ...(until === undefined ? [] : [until])]
        const rows = first && from ? await self.query(select.replace('key > ?', 'key >= ?'), ...args) : await self.query(select, ...args)
        first = false
        for (const row of rows) yield [row.key, row.value]
        if (rows.length < limit) return
        after = rows[rows.length - 1]!.key
      }
    }
  } as unknown as SqliteClass
}

/** Rows as Keyv stores them: the namespaced key, and { value, expires }. A loop in a function made once, not a callback made per call (see statusOp in platform/reporter.ts). */
function keyvRows(keyPrefix: string, entries: ReadonlyArray<{ key: string; value: unknown }>, expires: number | undefined): Array<[string, { value: unknown; expires?: number }]> {
  const rows: Array<[string, { value: unknown; expires?: number }]> = []
  for (const e of entries) rows.push([keyPrefix + e.key, { value: e.value, expires }])
  return rows
}

/** `promise`, or `fallback` if it has not settled within `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms)
    timer.unref()
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}
