// A journal entry (a group of batches, up to 1-2 MB of text) is deleted once its last string is
// reported. @keyv/sqlite's delete read the row whole to answer whether it was there; the worker's
// adapter deletes without reading the value, and still answers.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createStores } from '../../src/store/create-stores.js'

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-delete-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Query = (sql: string, ...args: unknown[]) => Promise<unknown[]>

describe('SQLite deletes', () => {
  it('delete and deleteMany answer whether a row was there, touch only their keys, and never read a value', async () => {
    const stores = await createStores(`sqlite://${path.join(dir, 'd.sqlite')}`, { prefix: 'x' })
    try {
      const big = 'x'.repeat(200_000)
      await stores.setMany('journal', ['b:1', 'b:2', 'b:3', 'b:4'].map((key) => ({ key, value: { big } })))
      // The same keys in another namespace must survive.
      await stores.settings.set('b:1', 'neighbour')
      const adapter = stores.journal.store as unknown as { query: Query }
      const query = adapter.query
      const seen: Array<{ sql: string; rows: unknown[] }> = []
      adapter.query = async (sql, ...args) => {
        const rows = await query(sql, ...args)
        seen.push({ sql, rows })
        return rows
      }

      expect(await stores.journal.delete('b:1')).toBe(true)
      expect(await stores.journal.delete('b:1')).toBe(false)
      expect(await stores.journal.delete(['b:2', 'b:9'])).toBe(true)
      expect(await stores.journal.delete(['b:2', 'b:9'])).toBe(false)

      expect(await stores.journal.get('b:1')).toBeUndefined()
      expect(await stores.journal.get('b:2')).toBeUndefined()
      expect(await stores.journal.get('b:3')).toEqual({ big })
      expect(await stores.settings.get('b:1')).toBe('neighbour')
      // Of the statements the deletes ran (the gets above ran after them), none handed a value back.
      const deletes = seen.slice(0, -4)
      expect(deletes.length).toBeGreaterThan(0)
      for (const { sql, rows } of deletes) {
        expect(sql).toMatch(/^DELETE /)
        expect(JSON.stringify(rows).length).toBeLessThan(100)
      }
    } finally {
      await stores.close()
    }
  })
})
