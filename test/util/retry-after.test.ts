import { describe, expect, it } from 'vitest'
import { parseRetryAfter } from '../../src/util/retry-after.js'

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  it('reads seconds and HTTP dates as a wait in ms', () => {
    expect(parseRetryAfter('2', now)).toBe(2000)
    expect(parseRetryAfter(' 0.5 ', now)).toBe(500)
    expect(parseRetryAfter('0', now)).toBe(0)
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000)
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0)
  })
  it('gives undefined when there is nothing readable', () => {
    for (const v of [null, undefined, '', '   ', 'soon', '-']) expect(parseRetryAfter(v, now)).toBeUndefined()
  })
})
