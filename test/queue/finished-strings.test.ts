// The de-duplication's finished strings are columns and a hash index of our own (finished-strings.ts):
// checked here against a plain model of what Dedupe promises (dedupe.ts's comments), over random
// arrivals, finishes, releases, status updates going out (and arrivals kept behind them) and time,
// with several scopes, string ids past 2^32, a ring that grows and shrinks again, and expiry by
// time and by count.
import { describe, expect, it } from 'vitest'
import { stringKeyOf } from '../../src/protocol/job.js'
import { Dedupe, type Arrival, type StringRef } from '../../src/queue/dedupe.js'
import { FinishedStrings, hashOf } from '../../src/queue/finished-strings.js'

/** What Dedupe promises, kept the plainest way: a map of active strings and a list of finishes. */
class Model {
  readonly active = new Map<string, number>()
  /** Finishes, oldest first; `latest` while no later finish or arrival of the string replaced it. */
  finishes: Array<{ key: string; revision: number; at: number; latest: boolean }> = []
  /** Strings a newer revision overtook while active: the newest, and the older copies not done. */
  readonly overtaken = new Map<string, { newest: number; older: number }>()
  /** Every (string, revision) that ever finished (the filter of long ago, without its false positives). */
  readonly everFinished = new Set<string>()
  /** Active strings whose status update went out (`sending`). */
  readonly sent = new Set<string>()
  /** Arrivals kept behind them, by string: their revision. */
  readonly kept = new Map<string, number>()
  /** Kept arrivals released, in order (`key#revision`). */
  readonly released: string[] = []
  constructor(private readonly ttl: number, private readonly now: () => number, private readonly max: number) {}
  private known(key: string) {
    return this.active.get(key) ?? this.finishes.find((f) => f.latest && f.key === key)?.revision
  }
  private unlatest(key: string) {
    for (const f of this.finishes) if (f.key === key) f.latest = false
  }
  private expire(overCount = false) {
    const cutoff = this.now() - this.ttl
    while (this.finishes.length && (this.finishes[0]!.at <= cutoff || (overCount && this.finishes.length > this.max))) this.finishes.shift()
  }
  arrive(key: string, revision: number): Arrival {
    this.expire()
    // The rules in one pass: older than anything known is stale; the active revision again is a
    // repeat; otherwise the string is active at this revision, a finished one arriving as finished.
    const wasActive = this.active.has(key)
    if (!wasActive && (this.overtaken.get(key)?.newest ?? 0) > revision) {
      this.olderDone(key, revision)
      return 'stale'
    }
    const known = this.known(key)
    if (known !== undefined && revision < known) return 'stale'
    // The active revision again: a repeat, unless its update went out (then kept, one at a time).
    if (wasActive && revision === known) {
      if (!this.sent.has(key) || this.kept.has(key)) return 'duplicate'
      this.kept.set(key, revision)
      return 'kept'
    }
    if (wasActive) {
      const o = this.overtaken.get(key)
      this.overtaken.set(key, { newest: Math.max(o?.newest ?? 0, revision), older: (o?.older ?? 0) + 1 })
    }
    this.unlatest(key)
    this.setActive(key, revision)
    // What was kept behind the older copy is an older copy too, released at once.
    if (wasActive && known !== undefined) this.releaseKept(key, known)
    // A revision that finished here before may be a late repeat of one already reported, whatever
    // copy is active or remembered now: the service decides.
    if (wasActive) return this.everFinished.has(`${key}#${revision}`) ? 'finished' : 'new'
    return revision === known || this.everFinished.has(`${key}#${revision}`) ? 'finished' : 'new'
  }
  private olderDone(key: string, revision: number) {
    const o = this.overtaken.get(key)
    if (o && revision < o.newest && --o.older <= 0) this.overtaken.delete(key)
  }
  private setActive(key: string, revision: number) {
    this.active.set(key, revision)
    this.sent.delete(key)
  }
  private releaseKept(key: string, revision: number) {
    if (this.kept.get(key) !== revision) return
    this.kept.delete(key)
    const active = this.active.get(key)
    if (active !== undefined && active > revision) {
      const o = this.overtaken.get(key)
      if (o) o.older++
    } else {
      this.unlatest(key)
      this.setActive(key, revision)
    }
    this.released.push(`${key}#${revision}`)
  }
  sending(key: string, revision: number) {
    if (this.active.get(key) === revision) this.sent.add(key)
  }
  release(key: string, revision: number) {
    if (this.active.get(key) === revision) {
      this.active.delete(key)
      this.sent.delete(key)
    }
    this.releaseKept(key, revision)
  }
  /** The kept arrival itself is forgotten (its journal write failed). */
  releaseKeptArrival(key: string) {
    this.kept.delete(key)
  }
  isCurrent(key: string, revision: number) {
    const known = this.known(key)
    return (known === undefined || known <= revision) && (this.overtaken.get(key)?.newest ?? 0) <= revision
  }
  finish(key: string, revision: number) {
    this.olderDone(key, revision)
    if (this.known(key) !== revision) return
    this.active.delete(key)
    this.sent.delete(key)
    this.unlatest(key)
    if (this.kept.get(key) === revision) {
      if (this.ttl > 0) this.everFinished.add(`${key}#${revision}`)
      this.releaseKept(key, revision)
      return
    }
    if (this.ttl <= 0) return
    this.finishes.push({ key, revision, at: this.now(), latest: true })
    this.everFinished.add(`${key}#${revision}`)
    if (this.finishes.length > this.max) this.expire(true)
  }
  get size() {
    return this.active.size + this.finishes.filter((f) => f.latest).length
  }
}

/** A small deterministic generator (mulberry32), so that a failure can be run again. */
function random(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function refs(rand: () => number, count: number): StringRef[] {
  const organizations = ['b7f3c2a1-1234-4cde-9abc-0123456789ab', 'acme', 'a|b']
  const out: StringRef[] = []
  for (let i = 0; i < count; i++) {
    const big = rand() < 0.2
    out.push({
      organizationId: organizations[Math.floor(rand() * organizations.length)]!,
      projectId: 1 + Math.floor(rand() * 3),
      stepId: 10 + Math.floor(rand() * 2),
      languageId: rand() < 0.5 ? 'de' : 'pt-BR',
      // Ids past 2^32 differ in their high half only from some below.
      stringId: big ? 2 ** 32 * (1 + Math.floor(rand() * 4)) + Math.floor(rand() * 50) : Math.floor(rand() * 4000),
    })
  }
  return out
}

describe('Dedupe against a plain model', () => {
  for (const { seed, ttl, max, strings, ops } of [
    { seed: 1, ttl: 500, max: 3000, strings: 5000, ops: 40_000 },
    { seed: 2, ttl: 50, max: 200, strings: 300, ops: 30_000 },
    { seed: 3, ttl: 100_000, max: 2500, strings: 8000, ops: 40_000 },
    { seed: 4, ttl: 0, max: 100, strings: 200, ops: 5000 },
  ]) {
    it(`answers as the model does (seed ${seed}, ttl ${ttl} ms, at most ${max} finished)`, () => {
      const rand = random(seed)
      let now = 1_000_000
      // Each arrival a copy of its own (as each delivery's job is); those kept, by string, and their revision.
      const keptRefs = new Map<string, StringRef>()
      const revisionOf = new Map<StringRef, number>()
      const released: string[] = []
      const d = new Dedupe(ttl, () => now, max, undefined, (r) => {
        released.push(`${stringKeyOf(r)}#${revisionOf.get(r)}`)
        keptRefs.delete(stringKeyOf(r))
      })
      const m = new Model(ttl, () => now, max)
      const pool = refs(rand, strings)
      for (let op = 0; op < ops; op++) {
        // Mostly in the same millisecond (ties in expiry), now and then a jump past the window.
        const r = rand()
        now += r < 0.7 ? 0 : r < 0.995 ? Math.floor(rand() * 5) : ttl + 1
        const ref = pool[Math.floor(rand() * pool.length)]!
        const key = stringKeyOf(ref)
        const revision = Math.floor(rand() * 4)
        const what = rand()
        const where = `op ${op}: ${key} r${revision}`
        if (what < 0.4) {
          const copy = { ...ref }
          const arrival = d.arrive(copy, revision)
          expect(arrival, where).toBe(m.arrive(key, revision))
          if (arrival === 'kept') (keptRefs.set(key, copy), revisionOf.set(copy, revision))
        } else if (what < 0.75) {
          // Finish what is active (as the worker does), now and then another revision.
          const active = m.active.get(key)
          const rev = active !== undefined && rand() < 0.9 ? active : revision
          d.finish(ref, rev)
          m.finish(key, rev)
        } else if (what < 0.8) {
          // Now and then the kept arrival itself (its journal write failed), else a copy of the string.
          const keptRef = keptRefs.get(key)
          if (keptRef && rand() < 0.5) {
            d.release(keptRef, revisionOf.get(keptRef)!)
            keptRefs.delete(key)
            m.releaseKeptArrival(key)
          } else {
            d.release(ref, revision)
            m.release(key, revision)
          }
        } else if (what < 0.9) expect(d.isCurrent(ref, revision), where).toBe(m.isCurrent(key, revision))
        else if (what < 0.95) {
          // The status update of what is active goes out (as the reporter says), now and then of another revision.
          const active = m.active.get(key)
          const rev = active !== undefined && rand() < 0.9 ? active : revision
          d.sending(ref, rev)
          m.sending(key, rev)
        } else expect(d.isActive(ref), where).toBe(m.active.has(key))
        if (op % 97 === 0) expect(d.size, where).toBe(m.size)
        if (op % 97 === 0) expect(released, where).toEqual(m.released)
      }
      expect(d.size).toBe(m.size)
      expect(released).toEqual(m.released)
      expect(m.released.length).toBeGreaterThan(0)
    })
  }
})

describe('FinishedStrings', () => {
  const ref = (stringId: number, languageId = 'de', organizationId = 'o'): StringRef => ({ organizationId, projectId: 1, stepId: 2, languageId, stringId })
  const inside = (f: FinishedStrings) => f as unknown as { capacity: number; scopes: Map<string, number>; index: Int32Array }
  /** Slots of the index in use: one per string remembered, nothing left pointing elsewhere. */
  const indexed = (f: FinishedStrings) => inside(f).index.reduce((n, v) => n + (v !== 0 ? 1 : 0), 0)

  it('grows its ring as finishes come, and gives the room back once they are dropped', () => {
    const f = new FinishedStrings()
    for (let i = 0; i < 10_000; i++) f.add(ref(i, i % 3 ? 'de' : 'fr'), 1, i)
    expect(f.size).toBe(10_000)
    expect(inside(f).capacity).toBe(16_384)
    expect(inside(f).scopes.size).toBe(2)
    for (let i = 0; i < 9_990; i++) f.dropOldest()
    expect(f.size).toBe(10)
    expect(inside(f).capacity).toBe(1024)
    // What is left is still found, with its own revision and time.
    for (let i = 9_990; i < 10_000; i++) expect(f.revisionOf(ref(i, i % 3 ? 'de' : 'fr'))).toBe(1)
    expect(f.oldestAt()).toBe(9_990)
    for (let i = 0; i < 10; i++) f.dropOldest()
    expect(f.size).toBe(0)
    expect(f.oldestAt()).toBeUndefined()
    // A scope is forgotten with its last finish.
    expect(inside(f).scopes.size).toBe(0)
  })

  it('tells strings apart by every part of their scope and by their id', () => {
    const f = new FinishedStrings()
    f.add(ref(7), 1, 0)
    f.add(ref(7, 'fr'), 2, 0)
    f.add(ref(7, 'de', 'p'), 3, 0)
    f.add({ ...ref(7), projectId: 9 }, 4, 0)
    f.add({ ...ref(7), stepId: 9 }, 5, 0)
    f.add(ref(7 + 2 ** 32), 6, 0)
    expect([ref(7), ref(7, 'fr'), ref(7, 'de', 'p'), { ...ref(7), projectId: 9 }, { ...ref(7), stepId: 9 }, ref(7 + 2 ** 32)].map((r) => f.revisionOf(r))).toEqual([1, 2, 3, 4, 5, 6])
    expect(f.revisionOf(ref(8))).toBeUndefined()
    expect(f.revisionOf(ref(7, 'it'))).toBeUndefined()
  })

  it('tells apart two strings whose hashes collide', () => {
    // The first scope looked up is number 0, the second number 1: find ids whose hashes meet
    // (ids drawn from the low 2^32, where within a scope the hash is one-to-one).
    const rand = random(11)
    const byHash = new Map<number, number>()
    for (let i = 0; i < 1 << 18; i++) {
      const id = Math.floor(rand() * 2 ** 32)
      byHash.set(hashOf(1, id), id)
    }
    let pair: [number, number] | undefined
    while (!pair) {
      const id = Math.floor(rand() * 2 ** 32)
      const other = byHash.get(hashOf(0, id))
      if (other !== undefined) pair = [id, other]
    }
    const [a, b] = pair
    const f = new FinishedStrings()
    f.add(ref(a), 1, 0)
    f.add(ref(b, 'fr'), 2, 0)
    expect(f.revisionOf(ref(a))).toBe(1)
    expect(f.revisionOf(ref(b, 'fr'))).toBe(2)
    expect(f.revisionOf(ref(b))).toBeUndefined()
    expect(f.revisionOf(ref(a, 'fr'))).toBeUndefined()
    f.forget(ref(a))
    expect(f.revisionOf(ref(b, 'fr'))).toBe(2)
  })

  it('a string finished again replaces its earlier finish, which still takes its place in the ring', () => {
    const f = new FinishedStrings()
    f.add(ref(1), 1, 0)
    f.add(ref(2), 1, 1)
    f.add(ref(1), 2, 2)
    expect(f.size).toBe(2)
    expect(f.finishes).toBe(3)
    f.dropOldest()
    // The first finish of string 1 went; its later one stays.
    expect(f.revisionOf(ref(1))).toBe(2)
    f.forget(ref(2))
    expect(f.revisionOf(ref(2))).toBeUndefined()
    expect(f.size).toBe(1)
  })

  it('moves an earlier finish of a string with the ring without taking it for the latest', () => {
    const f = new FinishedStrings()
    // The ring grows (1024, 2048, 4096 places) with both finishes of string 1 in it...
    f.add(ref(1), 1, 0)
    f.add(ref(1), 2, 1)
    for (let i = 0; i < 3000; i++) f.add(ref(100 + i), 1, 2)
    expect(f.revisionOf(ref(1))).toBe(2)
    expect(f.size).toBe(3001)
    // ... and shrinks again (to 1024 places) with both finishes of string 2 in it.
    f.add(ref(2), 1, 3)
    f.add(ref(2), 2, 4)
    while (f.finishes > 2) f.dropOldest()
    expect(inside(f).capacity).toBe(1024)
    expect(indexed(f)).toBe(f.size)
    expect(f.revisionOf(ref(1))).toBeUndefined()
    expect(f.revisionOf(ref(2))).toBe(2)
    expect(f.size).toBe(1)
    f.dropOldest()
    expect(f.revisionOf(ref(2))).toBe(2)
    expect(f.size).toBe(1)
    f.dropOldest()
    expect(f.size).toBe(0)
  })

  it('keeps every string reachable when a deletion shifts a run that wraps around the end of the index', () => {
    // A fresh ring has 1,024 places and an index of 2,048 slots; its first scope is number 0. Ids
    // whose home slot is among the last four or the first four make runs that wrap around.
    const homeOf = (id: number) => hashOf(0, id) & 2047
    const near: number[] = []
    for (let id = 0; near.length < 14; id++) if (homeOf(id) >= 2044 || homeOf(id) <= 3) near.push(id)
    const rand = random(5)
    for (let round = 0; round < 300; round++) {
      const f = new FinishedStrings()
      const order = [...near].sort(() => rand() - 0.5)
      for (const id of order) f.add(ref(id), id, 0)
      const left = new Set(order)
      for (const id of order.sort(() => rand() - 0.5).slice(0, 10)) {
        f.forget(ref(id))
        left.delete(id)
        for (const other of near) expect(f.revisionOf(ref(other)), `round ${round}: ${other} after ${id}`).toBe(left.has(other) ? other : undefined)
      }
    }
  })

  it('grows when it is full even after its oldest finishes went', () => {
    const f = new FinishedStrings()
    for (let i = 0; i < 1000; i++) f.add(ref(i), 1, i)
    for (let i = 0; i < 500; i++) f.dropOldest()
    // 1,024 finishes in 1,024 places, the ring's start at place 500; one more must grow it.
    for (let i = 1000; i < 1525; i++) f.add(ref(i), 1, i)
    expect(inside(f).capacity).toBe(2048)
    expect(indexed(f)).toBe(f.size)
    for (let i = 500; i < 1525; i++) expect(f.revisionOf(ref(i)), `string ${i}`).toBe(1)
    expect(f.oldestAt()).toBe(500)
  })

  it('tells apart two strings of one scope whose hashes collide (ids past 2^32)', () => {
    const rand = random(13)
    const byHash = new Map<number, number>()
    let pair: [number, number] | undefined
    while (!pair) {
      const id = 2 ** 32 + Math.floor(rand() * (Number.MAX_SAFE_INTEGER - 2 ** 32))
      const other = byHash.get(hashOf(0, id))
      if (other !== undefined && other !== id) pair = [id, other]
      byHash.set(hashOf(0, id), id)
    }
    const [a, b] = pair
    const f = new FinishedStrings()
    f.add(ref(a), 1, 0)
    expect(f.revisionOf(ref(b))).toBeUndefined()
    f.add(ref(b), 2, 0)
    expect([f.revisionOf(ref(a)), f.revisionOf(ref(b))]).toEqual([1, 2])
    f.forget(ref(b))
    expect([f.revisionOf(ref(a)), f.revisionOf(ref(b))]).toEqual([1, undefined])
  })

  it('a look-up does not take a scope, and a scope given back is not handed out twice', () => {
    const f = new FinishedStrings()
    f.add(ref(1), 1, 0)
    expect(f.revisionOf(ref(1, 'fr'))).toBeUndefined()
    f.forget(ref(2, 'it'))
    expect(inside(f).scopes.size).toBe(1)
    // Dropping from an empty ring gives nothing back a second time.
    f.dropOldest()
    f.dropOldest()
    expect(inside(f).scopes.size).toBe(0)
    f.add(ref(5, 'de'), 1, 1)
    f.add(ref(5, 'fr'), 2, 1)
    expect([f.revisionOf(ref(5, 'de')), f.revisionOf(ref(5, 'fr'))]).toEqual([1, 2])
  })

  it('the last scope looked up is forgotten with its scope', () => {
    const f = new FinishedStrings()
    f.add(ref(5, 'de'), 1, 0)
    f.dropOldest()
    // 'de' comes back (it must get a number again) and then another scope: not the same number.
    f.add(ref(5, 'de'), 2, 1)
    f.add(ref(5, 'fr'), 3, 1)
    expect([f.revisionOf(ref(5, 'de')), f.revisionOf(ref(5, 'fr'))]).toEqual([2, 3])
    expect(inside(f).scopes.size).toBe(2)
  })

  it('finds every string after many deletions in crowded runs of the index', () => {
    // One scope, ids that hash close together, and removals out of order: backward-shift deletion
    // must leave every remaining string reachable from its home.
    const f = new FinishedStrings()
    const rand = random(7)
    const live = new Map<number, number>()
    for (let round = 0; round < 20_000; round++) {
      const id = Math.floor(rand() * 900)
      if (rand() < 0.6) {
        f.add(ref(id), round, round)
        live.set(id, round)
      } else {
        f.forget(ref(id))
        live.delete(id)
      }
      if (f.finishes > 1000) f.dropOldest()
      // What dropOldest took out of the model: strings whose latest finish left the ring.
      if (round % 500 === 0) {
        for (const [k, v] of live) if (f.revisionOf(ref(k)) === undefined) expect(v, `string ${k}`).toBeLessThan(round - 999)
        expect(f.size).toBeLessThanOrEqual(live.size)
      }
    }
    for (let id = 0; id < 900; id++) {
      const found = f.revisionOf(ref(id))
      if (found !== undefined) expect(found).toBe(live.get(id))
    }
  })
})
