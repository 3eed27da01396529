// The SQLite store holds every journaled delivery (source texts, keys, file paths, user names),
// the step settings, the findings log and the sealed tokens. Created by the worker, it and the
// directory it makes for it are the worker's user's alone, as DATA_DIR/token.key and the bodies
// in DATA_DIR/incoming already are: not world-readable under the usual umask of 022.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createStores } from '../../src/store/create-stores.js'

describe('file modes of a SQLite store the worker creates', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'sy-modes-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('creates the database (and its WAL files) with mode 0600 and its new directory with 0700', async () => {
    const previous = process.umask(0o022)
    try {
      const dir = path.join(root, 'data')
      const file = path.join(dir, 'switchyard.sqlite')
      const stores = await createStores(`sqlite://${file}`)
      await stores.journal.set('delivery', { text: 'a source string of a customer' })
      await stores.settings.set('step', { tone: 'formal' })
      try {
        expect((statSync(dir).mode & 0o777).toString(8)).toBe('700')
        for (const name of readdirSync(dir)) {
          expect({ name, mode: (statSync(path.join(dir, name)).mode & 0o777).toString(8) }).toEqual({ name, mode: '600' })
        }
        expect(readdirSync(dir)).toContain('switchyard.sqlite')
      } finally {
        await stores.close()
      }
    } finally {
      process.umask(previous)
    }
  })
})
