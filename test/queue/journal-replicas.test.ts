// With QUEUE=memory the journal lives in the store, and a worker that starts replays every entry
// that is not its own: two workers on one shared store would each run the other's strings. Each
// marks the journal alive with its own name; one that finds another's mark since its last sees
// another replica, and the worker warns of it once per other, saying what to run instead.
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { Journal } from '../../src/queue/journal.js'
import { markAlive } from '../../src/worker.js'
import { createLogger } from '../../src/util/logger.js'

describe('workers sharing a journal', () => {
  it('each finds the other marking the journal alive since its own last mark; one alone finds none', async () => {
    const store = new Keyv({ namespace: 'journal' })
    const a = new Journal(store)
    const b = new Journal(store)
    expect(await a.markAlive()).toEqual({})
    expect(await a.markAlive()).toEqual({})
    // B starts: its first mark reads nothing (a restart of A would find its earlier self).
    expect(await b.markAlive()).toEqual({})
    const seenByA = (await a.markAlive()).other
    const seenByB = (await b.markAlive()).other
    expect(seenByA).toMatch(/ pid \d+ [0-9a-f]{6}$/)
    expect(seenByB).toMatch(/ pid \d+ [0-9a-f]{6}$/)
    expect(seenByA).not.toBe(seenByB)
    // A restart: a new process on the journal A left finds nothing at its first mark.
    expect(await new Journal(store).markAlive()).toEqual({})
  })

  it('the worker warns once per other worker, naming it and what to run instead', async () => {
    const lines: Array<{ level: number; msg: string; other?: string }> = []
    const log = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(JSON.parse(s)) } })
    const others = ['host-b pid 2 aaaaaa', 'host-b pid 2 aaaaaa', 'host-c pid 3 bbbbbb', undefined]
    const journal = { markAlive: async () => ({ other: others.shift() }) } as unknown as Parameters<typeof markAlive>[0]
    const seen = new Set<string>()
    for (let i = 0; i < 4; i++) await markAlive(journal, log, seen)
    const warnings = lines.filter((l) => l.level === 40)
    expect(warnings.map((w) => w.other)).toEqual(['host-b pid 2 aaaaaa', 'host-c pid 3 bbbbbb'])
    expect(warnings[0]!.msg).toContain('Run one QUEUE=memory worker per store at a time, or QUEUE=bullmq for several')
  })
})
