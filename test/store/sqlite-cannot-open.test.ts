// A SQLite store the worker cannot open (DATA_DIR read-only, not a directory, owned by another
// user) stops the start with an error that names the file and says what to do, not a bare
// "SQLITE_CANTOPEN: unable to open database file".
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createStores } from '../../src/store/create-stores.js'

describe('a SQLite store that cannot be opened', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sy-cantopen-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('names the file and the remedy when the file cannot be opened', async () => {
    const where = path.join(dir, 'is-a-directory.sqlite')
    mkdirSync(where)
    const error = await createStores(`sqlite://${where}`).then(() => undefined, (e: Error) => e)
    expect(error?.message).toContain(where)
    expect(error?.message).toMatch(/SQLITE_CANTOPEN/)
    expect(error?.message).toMatch(/writable/)
  })

  it('names the file and the remedy when its directory cannot be made', async () => {
    const blocker = path.join(dir, 'a-file')
    writeFileSync(blocker, '')
    const where = path.join(blocker, 'data', 'switchyard.sqlite')
    const error = await createStores(`sqlite://${where}`).then(() => undefined, (e: Error) => e)
    expect(error?.message).toContain(where)
    expect(error?.message).toMatch(/STORE_URL.*DATA_DIR|DATA_DIR/)
  })
})
