import { describe, expect, it } from 'vitest'
import { Dedupe } from '../../src/queue/dedupe.js'

describe('Dedupe', () => {
  it('absorbs a repeat only while the string is active; a finished one is admitted for a status check', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    expect(d.admit('s1', 1)).toBe('new')
    expect(d.admit('s1', 1)).toBe('duplicate')
    d.finish('s1', 1)
    now = 500
    // It may have come back to the step (same revision): the service's status decides.
    expect(d.admit('s1', 1)).toBe('finished')
    // Active again while that is decided: a third arrival is a repeat.
    expect(d.isActive('s1')).toBe(true)
    expect(d.admit('s1', 1)).toBe('duplicate')
    d.finish('s1', 1)
    now = 1600
    // Forgotten after the window: simply new.
    expect(d.admit('s1', 1)).toBe('new')
  })
  it('keeps a string that came back active through the expiry of its earlier finish', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    d.admit('s1', 1)
    d.finish('s1', 1)
    now = 900
    expect(d.admit('s1', 1)).toBe('finished')
    now = 1500
    // The first finish expires now; the entry, active again, must stay.
    d.admit('other', 1)
    expect(d.isActive('s1')).toBe(true)
    expect(d.admit('s1', 1)).toBe('duplicate')
  })
  it('takes a newer revision and refuses an older one', () => {
    const d = new Dedupe(1000)
    expect(d.admit('s1', 2)).toBe('new')
    expect(d.admit('s1', 1)).toBe('stale')
    expect(d.admit('s1', 3)).toBe('new')
    expect(d.isCurrent('s1', 2)).toBe(false)
    expect(d.isCurrent('s1', 3)).toBe(true)
  })
  it('forgets an admission released after a failed journal write', () => {
    const d = new Dedupe(1000)
    d.admit('s1', 1)
    d.release('s1', 1)
    expect(d.admit('s1', 1)).toBe('new')
  })
  it('keeps memory bounded: finished entries expire', () => {
    let now = 0
    const d = new Dedupe(10, () => now)
    for (let i = 0; i < 10_000; i++) {
      d.admit(`s${i}`, 1)
      d.finish(`s${i}`, 1)
    }
    now = 100
    d.admit('other', 1)
    expect(d.size).toBe(1)
  })
})

describe('Dedupe under a flood', () => {
  it('remembers at most maxFinished finished strings, forgetting the oldest first', () => {
    const d = new Dedupe(60_000, () => 0, 1000)
    for (let i = 0; i < 50_000; i++) {
      d.admit(`s${i}`, 1)
      d.finish(`s${i}`, 1)
    }
    expect(d.size).toBeLessThanOrEqual(1001)
    // The newest are still remembered (checked with the service), the oldest are not.
    expect(d.admit('s49999', 1)).toBe('finished')
    expect(d.admit('s0', 1)).toBe('new')
  })
})

describe('Dedupe after a restart', () => {
  it('admits strings unknown here as finished (to be checked) until the earlier memory would have run out', () => {
    let now = 10_000
    const d = new Dedupe(1000, () => now)
    d.restartedAfter(9_500)
    expect(d.admit('s1', 1)).toBe('finished')
    expect(d.admit('s1', 1)).toBe('duplicate')
    now = 10_600
    expect(d.admit('s2', 1)).toBe('new')
  })
})
