import { describe, expect, it } from 'vitest'
import { Dedupe, MAX_ON_DISK_NOTES, type StringRef } from '../../src/queue/dedupe.js'
import { revisedOf, type RevisedStrings } from '../../src/protocol/job.js'

/** A string named in a test: each name its own string id, in one step and language. */
const ids = new Map<string, number>()
function ref(name: string): StringRef {
  let stringId = ids.get(name)
  if (stringId === undefined) ids.set(name, (stringId = ids.size + 1))
  return { organizationId: 'b7f3c2a1-1234-4cde-9abc-0123456789ab', projectId: 12, stepId: 345, languageId: 'de', stringId }
}

describe('Dedupe', () => {
  it('knows an older copy in flight is not current even once the newer revision that overtook it is forgotten', () => {
    let now = 0
    const d = new Dedupe(100, () => now, 1)
    // Time passes and another string finishes: what finished before is forgotten, by time and count.
    const forgetAt = (at: number, revision: number) => {
      now = at
      d.arrive(ref('o2'), revision)
      d.finish(ref('o2'), revision)
    }
    expect(d.arrive(ref('o1'), 1)).toBe('new')
    expect(d.arrive(ref('o1'), 2)).toBe('new')
    d.finish(ref('o1'), 2)
    forgetAt(500, 1)
    expect(d.isCurrent(ref('o1'), 2)).toBe(true)
    expect(d.isCurrent(ref('o1'), 1)).toBe(false)
    // The older copy done: nothing more is kept for the string.
    d.finish(ref('o1'), 1)
    expect(d.isCurrent(ref('o1'), 1)).toBe(true)
    // Two older copies overtaken: kept until both are done. One is held (released to the disk),
    // which does not count: back from the disk it is stale, and only then done.
    d.arrive(ref('o3'), 1)
    d.arrive(ref('o3'), 2)
    d.arrive(ref('o3'), 3)
    d.release(ref('o3'), 1)
    d.finish(ref('o3'), 3)
    forgetAt(1000, 2)
    expect(d.isCurrent(ref('o3'), 1)).toBe(false)
    expect(d.isCurrent(ref('o3'), 2)).toBe(false)
    d.finish(ref('o3'), 2)
    expect(d.isCurrent(ref('o3'), 2)).toBe(false)
    expect(d.arrive(ref('o3'), 1)).toBe('stale')
    expect(d.isCurrent(ref('o3'), 2)).toBe(true)
  })

  it('absorbs a repeat only while the string is active; a finished one arrives as finished, for a status check', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    expect(d.arrive(ref('s1'), 1)).toBe('new')
    expect(d.arrive(ref('s1'), 1)).toBe('duplicate')
    d.finish(ref('s1'), 1)
    now = 500
    // It may have come back to the step (same revision): the service's status decides.
    expect(d.arrive(ref('s1'), 1)).toBe('finished')
    // Active again while that is decided: a third arrival is a repeat.
    expect(d.isActive(ref('s1'))).toBe(true)
    expect(d.arrive(ref('s1'), 1)).toBe('duplicate')
    d.finish(ref('s1'), 1)
    now = 1600
    // Forgotten after the window: it may still be a late repeat of a string DONE, so it is asked
    // about (the filter of strings finished long ago); a newer revision, or a string that never
    // finished here, is simply new.
    expect(d.arrive(ref('s1'), 1)).toBe('finished')
    d.finish(ref('s1'), 1)
    now = 3000
    expect(d.arrive(ref('s1'), 2)).toBe('new')
    expect(d.arrive(ref('never'), 1)).toBe('new')
  })
  it('keeps a string that came back active through the expiry of its earlier finish', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    d.arrive(ref('s1'), 1)
    d.finish(ref('s1'), 1)
    now = 900
    expect(d.arrive(ref('s1'), 1)).toBe('finished')
    now = 1500
    // The first finish expires now; the entry, active again, must stay.
    d.arrive(ref('other'), 1)
    expect(d.isActive(ref('s1'))).toBe(true)
    expect(d.arrive(ref('s1'), 1)).toBe('duplicate')
  })
  it('takes a newer revision and refuses an older one', () => {
    const d = new Dedupe(1000)
    expect(d.arrive(ref('s1'), 2)).toBe('new')
    expect(d.arrive(ref('s1'), 1)).toBe('stale')
    expect(d.arrive(ref('s1'), 3)).toBe('new')
    expect(d.isCurrent(ref('s1'), 2)).toBe(false)
    expect(d.isCurrent(ref('s1'), 3)).toBe(true)
  })
  it('forgets an admission released after a failed journal write', () => {
    const d = new Dedupe(1000)
    d.arrive(ref('s1'), 1)
    d.release(ref('s1'), 1)
    expect(d.arrive(ref('s1'), 1)).toBe('new')
  })
  it('keeps memory bounded: finished entries expire', () => {
    let now = 0
    const d = new Dedupe(10, () => now)
    for (let i = 0; i < 10_000; i++) {
      d.arrive(ref(`s${i}`), 1)
      d.finish(ref(`s${i}`), 1)
    }
    now = 100
    d.arrive(ref('other'), 1)
    expect(d.size).toBe(1)
  })
})

describe('Dedupe under a flood', () => {
  it('remembers at most maxFinished finished strings, forgetting the oldest first', () => {
    const d = new Dedupe(60_000, () => 0, 1000)
    for (let i = 0; i < 50_000; i++) {
      d.arrive(ref(`s${i}`), 1)
      d.finish(ref(`s${i}`), 1)
    }
    expect(d.size).toBeLessThanOrEqual(1001)
    // The newest are still remembered (checked with the service), the oldest are not; the filter
    // of strings finished long ago still says they may have finished (checked too).
    expect(d.arrive(ref('s49999'), 1)).toBe('finished')
    expect(d.arrive(ref('s0'), 1)).toBe('finished')
    const bare = new Dedupe(60_000, () => 0, 1000, 0)
    for (let i = 0; i < 5000; i++) {
      bare.arrive(ref(`s${i}`), 1)
      bare.finish(ref(`s${i}`), 1)
    }
    expect(bare.arrive(ref('s4999'), 1)).toBe('finished')
    expect(bare.arrive(ref('s0'), 1)).toBe('new')
  })
})

describe('Dedupe after a restart', () => {
  it('takes strings unknown here as finished (to be checked) until the earlier memory would have run out', () => {
    let now = 10_000
    const d = new Dedupe(1000, () => now)
    d.restartedAfter(9_500)
    expect(d.arrive(ref('s1'), 1)).toBe('finished')
    expect(d.arrive(ref('s1'), 1)).toBe('duplicate')
    now = 10_600
    expect(d.arrive(ref('s2'), 1)).toBe('new')
  })

  it('a newer revision arriving in that window, over an older copy active or finished here, is checked too: the earlier process may have reported it', () => {
    let now = 10_000
    const d = new Dedupe(1000, () => now)
    d.restartedAfter(9_500)
    // A late copy of r1, then r2 (which the earlier process reported before it stopped).
    expect(d.arrive(ref('r-active'), 1)).toBe('finished')
    expect(d.arrive(ref('r-active'), 2)).toBe('finished')
    expect(d.isCurrent(ref('r-active'), 1)).toBe(false)
    // r1 finished here (absorbed), then r2 arrives.
    expect(d.arrive(ref('r-finished'), 1)).toBe('finished')
    d.finish(ref('r-finished'), 1)
    expect(d.arrive(ref('r-finished'), 2)).toBe('finished')
    // Past the window, a newer revision is new work again.
    now = 10_600
    expect(d.arrive(ref('r-active'), 3)).toBe('new')
    d.finish(ref('r-finished'), 2)
    expect(d.arrive(ref('r-finished'), 3)).toBe('new')
  })
})

// What the entries remember, observed without relying on how a finished string answers a repeat
// (that part changes): isActive, isCurrent (an older revision than a remembered one is not
// current; a forgotten string has no older revisions) and size.
const remembered = (d: Dedupe, r: StringRef, revision: number) => !d.isCurrent(r, revision - 1)

describe('Dedupe: revisions of one string', () => {
  it('finish() of an old revision leaves the newer, active one active', () => {
    const d = new Dedupe(1000, () => 0)
    d.arrive(ref('s1'), 1)
    expect(d.arrive(ref('s1'), 2)).toBe('new')
    d.finish(ref('s1'), 1)
    expect(d.isActive(ref('s1'))).toBe(true)
    expect(d.arrive(ref('s1'), 2)).toBe('duplicate')
    d.finish(ref('s1'), 2)
    expect(d.isActive(ref('s1'))).toBe(false)
  })

  it('finish() of a newer revision than the one remembered changes nothing', () => {
    const d = new Dedupe(1000, () => 0)
    d.arrive(ref('s1'), 1)
    d.finish(ref('s1'), 2)
    expect(d.isActive(ref('s1'))).toBe(true)
  })

  it('finish() with no time window forgets the string at once', () => {
    const d = new Dedupe(0, () => 0)
    d.arrive(ref('s1'), 1)
    d.finish(ref('s1'), 1)
    expect(d.size).toBe(0)
    expect(d.isActive(ref('s1'))).toBe(false)
  })

  it('isCurrent: a revision at or above the newest is current, below is not, an unknown string is', () => {
    const d = new Dedupe(1000, () => 0)
    expect(d.isCurrent(ref('s1'), 1)).toBe(true)
    d.arrive(ref('s1'), 2)
    expect(d.isCurrent(ref('s1'), 1)).toBe(false)
    expect(d.isCurrent(ref('s1'), 2)).toBe(true)
    expect(d.isCurrent(ref('s1'), 3)).toBe(true)
  })

  it('an unknown string is not active', () => {
    expect(new Dedupe(1000).isActive(ref('nobody'))).toBe(false)
  })
})

describe('Dedupe: release', () => {
  it('release() of an older revision keeps the newer, active one', () => {
    const d = new Dedupe(1000, () => 0)
    d.arrive(ref('s1'), 1)
    d.arrive(ref('s1'), 2)
    d.release(ref('s1'), 1)
    expect(d.isActive(ref('s1'))).toBe(true)
    expect(d.size).toBe(1)
    expect(d.arrive(ref('s1'), 2)).toBe('duplicate')
  })

  it('release() of a newer revision than the one remembered keeps it', () => {
    const d = new Dedupe(1000, () => 0)
    d.arrive(ref('s1'), 1)
    d.release(ref('s1'), 2)
    expect(d.isActive(ref('s1'))).toBe(true)
    expect(d.size).toBe(1)
  })

  it('release() of a finished revision keeps what was remembered of it', () => {
    const d = new Dedupe(1000, () => 0)
    d.arrive(ref('s1'), 3)
    d.finish(ref('s1'), 3)
    d.release(ref('s1'), 3)
    expect(d.size).toBe(1)
    expect(remembered(d, ref('s1'), 3)).toBe(true)
  })

  it('release() of the active revision forgets it entirely', () => {
    const d = new Dedupe(1000, () => 0)
    d.arrive(ref('s1'), 3)
    d.release(ref('s1'), 3)
    expect(d.size).toBe(0)
    expect(d.isCurrent(ref('s1'), 1)).toBe(true)
  })
})

describe('Dedupe: expiry bookkeeping', () => {
  it('expiry does not delete an entry that a newer revision made active again', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    d.arrive(ref('s1'), 1)
    d.finish(ref('s1'), 1)
    now = 10
    expect(d.arrive(ref('s1'), 2)).toBe('new')
    now = 5000
    d.arrive(ref('other'), 1) // runs the expiry
    expect(d.isActive(ref('s1'))).toBe(true)
    expect(remembered(d, ref('s1'), 2)).toBe(true)
    expect(d.size).toBe(2)
  })

  it('expiry of an earlier finish does not delete a later finish of the same string', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    d.arrive(ref('s1'), 1)
    d.finish(ref('s1'), 1)
    now = 600
    d.arrive(ref('s1'), 2)
    d.finish(ref('s1'), 2)
    now = 1100 // the first finish is past the window, the second is not
    d.arrive(ref('other'), 1)
    expect(remembered(d, ref('s1'), 2)).toBe(true)
    now = 1600 // now the second is too
    d.arrive(ref('other'), 1)
    expect(remembered(d, ref('s1'), 2)).toBe(false)
    expect(d.size).toBe(1)
  })

  it('an entry finished exactly ttl ago is forgotten, one finished a moment later is not', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    d.arrive(ref('a'), 1)
    d.finish(ref('a'), 1)
    now = 1
    d.arrive(ref('b'), 1)
    d.finish(ref('b'), 1)
    now = 1000
    d.arrive(ref('other'), 1)
    expect(remembered(d, ref('a'), 1)).toBe(false)
    expect(remembered(d, ref('b'), 1)).toBe(true)
  })

  it('active entries never expire, however old', () => {
    let now = 0
    const d = new Dedupe(10, () => now)
    d.arrive(ref('s1'), 1)
    now = 1_000_000
    d.arrive(ref('other'), 1)
    expect(d.isActive(ref('s1'))).toBe(true)
  })

  it('compaction keeps keys and finish times in step: expiry after it forgets exactly the old ones', () => {
    let now = 0
    const ttl = 1000
    const d = new Dedupe(ttl, () => now)
    // One string finished per ms; each arrival expires what finished ttl ago or earlier, so the
    // finished list is compacted several times along the way.
    const N = 12_000
    for (let i = 0; i < N; i++) {
      now = i
      d.arrive(ref(`s${i}`), 1)
      d.finish(ref(`s${i}`), 1)
    }
    now = N - 1
    d.arrive(ref('probe'), 1)
    // Forgotten: finished at or before now - ttl. Remembered: everything after.
    const cutoff = N - 1 - ttl
    for (const i of [0, 4096, 4097, 8000, cutoff - 1, cutoff]) expect(remembered(d, ref(`s${i}`), 1), `s${i}`).toBe(false)
    for (const i of [cutoff + 1, cutoff + 2, N - 2, N - 1]) expect(remembered(d, ref(`s${i}`), 1), `s${i}`).toBe(true)
    expect(d.size).toBe(N - 1 - cutoff + 1)
    // And later expiries still pair each key with its own time.
    now = N - 1 + 500
    d.arrive(ref('probe2'), 1)
    expect(remembered(d, ref(`s${cutoff + 500}`), 1)).toBe(false)
    expect(remembered(d, ref(`s${cutoff + 501}`), 1)).toBe(true)
  })

  it('the count bound forgets the oldest finished strings first, and only as many as needed', () => {
    const d = new Dedupe(60_000, () => 0, 100)
    const sizes = new Set<number>()
    for (let i = 0; i < 5000; i++) {
      d.arrive(ref(`s${i}`), 1)
      d.finish(ref(`s${i}`), 1)
      if (i >= 99) sizes.add(d.size)
    }
    // Exactly the bound after every finish past it, not one fewer now and then.
    expect([...sizes]).toEqual([100])
    expect(remembered(d, ref('s4899'), 1)).toBe(false)
    expect(remembered(d, ref('s4900'), 1)).toBe(true)
    expect(remembered(d, ref('s4999'), 1)).toBe(true)
  })

  it('the count bound does not forget an active string', () => {
    const d = new Dedupe(60_000, () => 0, 10)
    d.arrive(ref('busy'), 1)
    for (let i = 0; i < 100; i++) {
      d.arrive(ref(`s${i}`), 1)
      d.finish(ref(`s${i}`), 1)
    }
    expect(d.isActive(ref('busy'))).toBe(true)
  })
})

describe('Dedupe memory (issue 16)', () => {
  it('keeps finished strings in 41 bytes per place of its ring (a string was 277 bytes as an object per entry, 140-170 as a key string in a Map)', async () => {
    const gc = (globalThis as { gc?: () => void }).gc
    const { setFlagsFromString } = await import('node:v8')
    const { runInNewContext } = await import('node:vm')
    if (!gc) setFlagsFromString('--expose-gc')
    const collect = gc ?? (runInNewContext('gc') as () => void)
    // The columns are typed arrays: their memory is outside the heap, and counted here too.
    const used = () => {
      const m = process.memoryUsage()
      return m.heapUsed + m.arrayBuffers
    }
    const organizationId = 'b7f3c2a1-1234-4cde-9abc-0123456789ab'
    // A ring just past a doubling (half full) and one three quarters full: the same per place.
    // Each is kept until the end (an ArrayBuffer's memory is given back after its GC, later).
    const kept: Dedupe[] = []
    for (const n of [33_000, 50_000]) {
      collect()
      collect()
      const before = used()
      // The ring alone (the filter of long ago is a fixed 4 MiB, allocated on the first finish).
      const d = new Dedupe(600_000, Date.now, n, 0)
      for (let i = 0; i < n; i++) {
        const job = { organizationId, projectId: 12, stepId: 345, languageId: i % 2 ? 'de' : 'fr', stringId: 100_000 + (i >> 1) }
        d.arrive(job, 3)
        d.finish(job, 3)
      }
      collect()
      collect()
      const places = 2 ** Math.ceil(Math.log2(n))
      const grown = used() - before
      console.log(`dedupe: ${n} finished strings, ${(grown / places).toFixed(1)} bytes per place of ${places}, ${(grown / n).toFixed(1)} per string`)
      expect(d.size).toBe(n)
      expect(grown / places).toBeLessThan(44)
      kept.push(d)
    }
  })
  it('a finished string finishing again starts its window anew, as before', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    d.arrive(ref('s1'), 1)
    d.finish(ref('s1'), 1)
    now = 800
    d.finish(ref('s1'), 1)
    now = 1500
    d.arrive(ref('other'), 1)
    expect(d.arrive(ref('s1'), 1)).toBe('finished')
    expect(d.arrive(ref('s1'), 0)).toBe('stale')
    expect(d.isCurrent(ref('s1'), 0)).toBe(false)
  })
  it('bounded by count, the oldest finish goes first, and a string finished again keeps its place (even within the same millisecond: finishes were told apart by their time)', () => {
    const d = new Dedupe(60_000, () => 0, 3, 0)
    for (const k of ['a', 'b', 'c']) {
      d.arrive(ref(k), 1)
      d.finish(ref(k), 1)
    }
    // 'a' comes back and finishes again: it is now the newest.
    expect(d.arrive(ref('a'), 1)).toBe('finished')
    d.finish(ref('a'), 1)
    d.arrive(ref('d'), 1)
    d.finish(ref('d'), 1)
    expect(d.size).toBe(3)
    expect(d.arrive(ref('b'), 1)).toBe('new')
    expect(d.arrive(ref('a'), 1)).toBe('finished')
  })
})

describe('Dedupe: revisions noted on disk', () => {
  const at = (r: StringRef, revision: number) => ({ ...r, revision })
  const notes = (list: Array<StringRef & { revision: number }>): RevisedStrings => revisedOf(list)!

  it('an older copy read back after a newer one was noted on disk is stale; the newer one takes the note\'s place', () => {
    const d = new Dedupe(60_000)
    const s = ref('s')
    d.noteOnDisk(notes([at(s, 3)]))
    // Written only upwards.
    d.noteOnDisk(notes([at(s, 2)]))
    expect(d.isCurrent(s, 2)).toBe(false)
    expect(d.arrive(s, 2)).toBe('stale')
    expect(d.arrive(s, 3)).toBe('new')
    // The note is gone with it: the string is known as active now.
    expect(d.arrive(s, 2)).toBe('stale')
    expect(d.isCurrent(s, 3)).toBe(true)
    // Another string is not affected.
    expect(d.arrive(ref('other'), 1)).toBe('new')
  })

  it('keeps at most MAX_ON_DISK_NOTES notes, the oldest going first', () => {
    const d = new Dedupe(60_000)
    const first = ref('first')
    d.noteOnDisk(notes([at(first, 2)]))
    d.noteOnDisk(notes(Array.from({ length: MAX_ON_DISK_NOTES }, (_, i) => at({ ...ref('x'), stringId: 1_000_000 + i }, 2))))
    expect(d.arrive(first, 1)).toBe('new')
    expect(d.arrive({ ...ref('x'), stringId: 1_000_000 + MAX_ON_DISK_NOTES - 1 }, 1)).toBe('stale')
  })
})

// A string sent back and delivered again while the status update of its copy is under way (the
// service applied it, then answers late): a repeat of the same revision is no longer a repeat.
describe('Dedupe: an arrival while the status update is under way', () => {
  /** A Dedupe whose released arrivals are listed (the worker queues them). */
  const withReleases = () => {
    const released: StringRef[] = []
    return { d: new Dedupe(60_000, () => 0, 100_000, undefined, (r) => released.push(r)), released }
  }

  it('before the update goes out it is a repeat, absorbed as always', () => {
    const { d, released } = withReleases()
    expect(d.arrive(ref('k1'), 1)).toBe('new')
    expect(d.arrive(ref('k1'), 1)).toBe('duplicate')
    d.finish(ref('k1'), 1)
    expect(released).toEqual([])
  })

  it('after it went out it is kept, not run, and released as the active copy once the sent one finishes; a repeat of it is absorbed', () => {
    const { d, released } = withReleases()
    expect(d.arrive(ref('k2'), 1)).toBe('new')
    d.sending(ref('k2'), 1)
    const again = ref('k2')
    expect(d.arrive(again, 1)).toBe('kept')
    expect(d.arrive(ref('k2'), 1)).toBe('duplicate')
    expect(released).toEqual([])
    expect(d.isCurrent(ref('k2'), 1)).toBe(true)
    d.finish(ref('k2'), 1)
    // The very arrival, now active: a repeat is absorbed until its own update goes out.
    expect(released).toHaveLength(1)
    expect(released[0]).toBe(again)
    expect(d.isActive(ref('k2'))).toBe(true)
    expect(d.arrive(ref('k2'), 1)).toBe('duplicate')
    d.finish(ref('k2'), 1)
    expect(d.isActive(ref('k2'))).toBe(false)
    // Finished: the next arrival is checked with the service, as any string that comes back.
    expect(d.arrive(ref('k2'), 1)).toBe('finished')
  })

  it('the sent copy held on disk (release) ends it here as well: what was kept goes', () => {
    const { d, released } = withReleases()
    d.arrive(ref('k3'), 1)
    d.sending(ref('k3'), 1)
    const again = ref('k3')
    expect(d.arrive(again, 1)).toBe('kept')
    d.release(ref('k3'), 1)
    expect(released).toEqual([again])
    expect(d.isActive(ref('k3'))).toBe(true)
  })

  it('a kept arrival whose journal write failed is forgotten alone; the sent copy stays active', () => {
    const { d, released } = withReleases()
    d.arrive(ref('k4'), 1)
    d.sending(ref('k4'), 1)
    const again = ref('k4')
    expect(d.arrive(again, 1)).toBe('kept')
    d.release(again, 1)
    expect(d.isActive(ref('k4'))).toBe(true)
    // The next arrival is kept in its place.
    expect(d.arrive(ref('k4'), 1)).toBe('kept')
    d.finish(ref('k4'), 1)
    expect(released).toHaveLength(1)
  })

  it('a newer revision while the update is under way is taken as before; what was kept goes at once, to leave as superseded', () => {
    const { d, released } = withReleases()
    d.arrive(ref('k5'), 1)
    d.sending(ref('k5'), 1)
    expect(d.arrive(ref('k5'), 2)).toBe('new')
    expect(d.arrive(ref('k5'), 2)).toBe('duplicate')
    expect(d.arrive(ref('k5'), 1)).toBe('stale')
    expect(released).toEqual([])
    // Kept behind the sent copy, then overtaken: it is older than the newest, never run.
    d.arrive(ref('k6'), 1)
    d.sending(ref('k6'), 1)
    expect(d.arrive(ref('k6'), 1)).toBe('kept')
    expect(d.arrive(ref('k6'), 2)).toBe('new')
    expect(released).toHaveLength(1)
    expect(d.isCurrent(ref('k6'), 1)).toBe(false)
    // The sent copy, the released one (superseded) and the newer one finish: nothing more is kept.
    d.finish(ref('k6'), 1)
    d.finish(ref('k6'), 1)
    expect(d.isCurrent(ref('k6'), 1)).toBe(false)
    d.finish(ref('k6'), 2)
    expect(d.isActive(ref('k6'))).toBe(false)
    expect(released).toHaveLength(1)
  })

  it('marks only the revision active: an update of an older copy marks nothing', () => {
    const { d } = withReleases()
    d.arrive(ref('k7'), 1)
    d.arrive(ref('k7'), 2)
    d.sending(ref('k7'), 1)
    expect(d.arrive(ref('k7'), 2)).toBe('duplicate')
  })
})
