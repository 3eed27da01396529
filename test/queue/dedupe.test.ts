import { describe, expect, it } from 'vitest'
import { Dedupe } from '../../src/queue/dedupe.js'

describe('Dedupe', () => {
  it('absorbs a repeat of an active job and of a recently finished one', () => {
    let now = 0
    const d = new Dedupe(1000, () => now)
    expect(d.admit('s1', 1)).toBe('new')
    expect(d.admit('s1', 1)).toBe('duplicate')
    d.finish('s1', 1)
    now = 500
    expect(d.admit('s1', 1)).toBe('duplicate')
    now = 1600
    expect(d.admit('s1', 1)).toBe('new')
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
    // The newest are still absorbed, the oldest are not.
    expect(d.admit('s49999', 1)).toBe('duplicate')
    expect(d.admit('s0', 1)).toBe('new')
  })
})
