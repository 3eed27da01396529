// Issue 16: SQLite's page cache is per connection, and the stores open seven connections; each
// keeps a small cache (SQLITE_CACHE_KIB) instead of SQLite's default of 2 MB, memory the worker
// held for pages the OS's file cache holds anyway.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SQLITE_CACHE_KIB, STORE_NAMES, createStores } from '../../src/store/create-stores.js'

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cache-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Query = (sql: string) => Promise<Array<Record<string, unknown>>>

describe('SQLite page cache', () => {
  it('is SQLITE_CACHE_KIB on every connection of the stores, well under the 2 MB default', async () => {
    expect(SQLITE_CACHE_KIB).toBeLessThanOrEqual(512)
    const stores = await createStores(`sqlite://${path.join(dir, 'a.sqlite')}`)
    try {
      for (const name of STORE_NAMES) {
        await stores[name].set('k', 1)
        const rows = await (stores[name].store as unknown as { query: Query }).query('PRAGMA cache_size')
        expect(rows[0]?.cache_size, name).toBe(-SQLITE_CACHE_KIB)
      }
      // The journal's file stays in WAL mode.
      const mode = await (stores.journal.store as unknown as { query: Query }).query('PRAGMA journal_mode')
      expect(mode[0]?.journal_mode).toBe('wal')
    } finally {
      await stores.close()
    }
  })
})
