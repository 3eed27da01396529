// The waiting strings and the oldest one's time of an organization, counted from the marks its
// steps keep in Redis (QUEUE=bullmq fairness, src/queue/bullmq-journal.ts): no Redis needed.
import { describe, expect, it } from 'vitest'
import { flowsWaiting } from '../../src/queue/bullmq-journal.js'

const steps = (marks: unknown[][], more: Record<string, unknown> = {}) => JSON.stringify({ '1|2': { p: 0, q: 0, m: marks }, ...more })

describe('flowsWaiting', () => {
  it('counts the strings of each mark at or past the clock, exactly for any spacing', () => {
    // 34 strings at 0, 3, ... 99.
    const text = steps([[0, 102, 5, 3, 34]])
    expect(flowsWaiting(text, 0)).toEqual({ waiting: 34, oldestAt: 5 })
    expect(flowsWaiting(text, 1)).toEqual({ waiting: 33, oldestAt: 5 })
    expect(flowsWaiting(text, 99)).toEqual({ waiting: 1, oldestAt: 5 })
    // Its last string (99) is before the clock: none wait, though the mark ends at 102.
    expect(flowsWaiting(text, 100)).toEqual({ waiting: 0 })
  })

  it('sums the steps and takes the earliest time of a mark with strings waiting', () => {
    const text = steps([[0, 10, 100, 1, 10], [10, 30, 200, 2, 10]], { '1|3': { p: 0, q: 0, m: [[0, 20, 150, 2, 10]] } })
    expect(flowsWaiting(text, 0)).toEqual({ waiting: 30, oldestAt: 100 })
    expect(flowsWaiting(text, 10)).toEqual({ waiting: 15, oldestAt: 150 })
    expect(flowsWaiting(text, 20)).toEqual({ waiting: 5, oldestAt: 200 })
  })

  it('skips what it cannot read', () => {
    expect(flowsWaiting('not json', 0)).toEqual({ waiting: 0 })
    expect(flowsWaiting('12', 0)).toEqual({ waiting: 0 })
    expect(flowsWaiting(JSON.stringify({ a: null, b: { m: 'x' }, c: { m: [null, [0, 10, 1, 0, 10], [0, 10, 1, 1], ['0', 10, 1, 1, 10]] } }), 0)).toEqual({ waiting: 0 })
  })
})
