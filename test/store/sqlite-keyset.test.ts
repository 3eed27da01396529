// Issue 16: a restart over a backlog of a million strings stays linear. The journal (and the
// findings log) are read back through the store's iterator; on SQLite it pages by keyset (one
// index seek per page, `key > last`), not with OFFSET (every page rescanning from the start).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Journal } from '../../src/queue/journal.js'
import { SQLITE_FINDINGS_PAGE_ROWS, SQLITE_PAGE_ROWS, createStores, type Stores } from '../../src/store/create-stores.js'
import type { Job } from '../../src/protocol/job.js'

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-keyset-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Query = (sql: string, ...args: unknown[]) => Promise<Array<Record<string, unknown>>>

/** The adapter's query function, with every SQL statement it runs recorded. */
function recordQueries(stores: Stores): { sql: string[]; query: Query } {
  const adapter = stores.journal.store as unknown as { query: Query }
  const query = adapter.query
  const sql: string[] = []
  adapter.query = (s, ...args) => {
    sql.push(s)
    return query(s, ...args)
  }
  return { sql, query }
}

async function keysOf(iterator: AsyncGenerator<[string, unknown]> | undefined, during?: (key: string) => Promise<void>): Promise<string[]> {
  const keys: string[] = []
  for await (const [key] of iterator!) {
    keys.push(String(key))
    await during?.(key)
  }
  return keys
}

describe('SQLite iteration pages by keyset', () => {
  it('sees every key of its namespace once, in key order, none of the neighbours, one index seek per page', async () => {
    const stores = await createStores(`sqlite://${path.join(dir, 'a.sqlite')}`, { prefix: 'x' })
    try {
      const n = SQLITE_PAGE_ROWS * 25 + 3
      const keys = Array.from({ length: n }, (_, i) => `b:${String(i).padStart(6, '0')}`)
      await stores.setMany('journal', keys.map((key, i) => ({ key, value: { i } })))
      // Neighbours on either side of the namespace's key range ('xcache' < 'xjournal' < 'xsettings').
      await stores.cache.set('b:000001', 1)
      await stores.settings.set('b:000001', 1)
      await stores.state.set('zzz', 1)
      const { sql, query } = recordQueries(stores)
      const seen = await keysOf(stores.journal.iterator?.(undefined))
      expect(seen).toEqual(keys)
      // One query per full page and the last short one: linear in the rows.
      expect(sql.length).toBe(Math.ceil((n + 1) / SQLITE_PAGE_ROWS))
      for (const s of sql) {
        expect(s).not.toMatch(/OFFSET/i)
        // SQLite's plan: a search on the primary key's index, not a scan of the table.
        const plan = (await query(`EXPLAIN QUERY PLAN ${s}`, 'xjournal:b:000100', 'xjournal;')).map((r) => String(r.detail)).join(' | ')
        expect(plan).toMatch(/SEARCH .* USING (INDEX|COVERING INDEX|PRIMARY KEY)/)
        expect(plan).not.toMatch(/SCAN/)
      }
    } finally {
      await stores.close()
    }
  })

  it('the findings log, whose entries are small, is read SQLITE_FINDINGS_PAGE_ROWS at a time; the journal SQLITE_PAGE_ROWS, whatever its entries\' sizes', async () => {
    const stores = await createStores(`sqlite://${path.join(dir, 'd.sqlite')}`)
    try {
      const n = SQLITE_FINDINGS_PAGE_ROWS * 2 + 5
      const keys = Array.from({ length: n }, (_, i) => `e:${String(i).padStart(6, '0')}:x`)
      await stores.setMany('findings', keys.map((key, i) => ({ key, value: { i } })))
      // Small journal entries first, then large ones: a page never holds more than SQLITE_PAGE_ROWS.
      await stores.setMany('journal', Array.from({ length: 100 }, (_, i) => ({ key: `b:${String(i).padStart(6, '0')}`, value: i < 60 ? 1 : 'x'.repeat(100_000) })))
      const limits: string[] = []
      for (const [tag, adapter] of [['findings', stores.findings.store], ['journal', stores.journal.store]] as const) {
        const a = adapter as unknown as { query: Query }
        const q = a.query
        a.query = (sql, ...args) => {
          limits.push(`${tag} ${/LIMIT (\d+)/.exec(sql)?.[1]}`)
          return q(sql, ...args)
        }
      }
      expect(await keysOf(stores.findings.iterator?.(undefined))).toHaveLength(n)
      expect(limits).toEqual(Array(3).fill(`findings ${SQLITE_FINDINGS_PAGE_ROWS}`))
      limits.length = 0
      expect(await keysOf(stores.journal.iterator?.(undefined))).toHaveLength(100)
      expect(limits).toEqual(Array(Math.ceil(101 / SQLITE_PAGE_ROWS)).fill(`journal ${SQLITE_PAGE_ROWS}`))
    } finally {
      await stores.close()
    }
  })

  it('rows deleted or added while iterating: nothing seen twice, nothing that still exists skipped', async () => {
    const stores = await createStores(`sqlite://${path.join(dir, 'b.sqlite')}`)
    try {
      const n = SQLITE_PAGE_ROWS * 6
      const keys = Array.from({ length: n }, (_, i) => `b:${String(i * 2).padStart(6, '0')}`)
      await stores.setMany('journal', keys.map((key) => ({ key, value: 1 })))
      const deletedAhead = new Set<string>()
      const seen = await keysOf(stores.journal.iterator?.(undefined), async (key) => {
        const i = Number(key.split(':').at(-1)) / 2
        // Delete the row just seen (as a finished entry is) and one beyond the page already read;
        // add one behind.
        await stores.journal.delete(key.replace(/^journal:/, ''))
        const far = i + SQLITE_PAGE_ROWS + 1
        if (i % 5 === 0 && far < n) {
          const ahead = keys[far]!
          deletedAhead.add(ahead)
          await stores.journal.delete(ahead)
        }
        await stores.journal.set(`b:${String(i * 2 - 1).padStart(6, '0')}`, 1)
      })
      expect(new Set(seen).size).toBe(seen.length)
      expect(seen).toEqual(keys.filter((k) => !deletedAhead.has(k)))
    } finally {
      await stores.close()
    }
  })

  it("the journal's restart scan over thousands of entries finds every string", async () => {
    const file = path.join(dir, 'c.sqlite')
    const job = (i: number): Job => ({
      key: '', organizationId: '1', domain: 'acme', moduleKey: 'm', projectId: 1, stepId: 1, languageId: 'de', stringId: i, revision: 1,
      string: { key: `k${i}`, context: '', maxLength: 0, text: `text ${i}`, isPlural: false, fileType: '', filePath: '', labelIds: [] },
      sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: '', attempts: 0,
    })
    const before = await createStores(`sqlite://${file}`)
    const entries = 2000
    try {
      const journal = new Journal(before.journal)
      for (let e = 0; e < entries; e++) await journal.append(journal.newBatchId(), [job(e * 2), job(e * 2 + 1)])
    } finally {
      await before.close()
    }
    const after = await createStores(`sqlite://${file}`)
    try {
      const journal = new Journal(after.journal)
      let strings = 0
      let batches = 0
      await journal.scan((_, parts) => {
        batches++
        for (const p of parts) strings += p.strings
      })
      expect(batches).toBe(entries)
      expect(strings).toBe(entries * 2)
      expect(journal.size).toBe(entries * 2)
    } finally {
      await after.close()
    }
  })
})
