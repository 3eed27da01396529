// The Bloom filter of strings finished long ago: what was added is always found (no string that
// finished is ever taken as new within its generations), what was not is rarely (a false positive
// costs one status question), and the oldest generation goes as the filter fills.
import { expect, it } from 'vitest'
import { FinishedFilter, scopeHash } from '../../src/queue/finished-filter.js'

it('finds every string added, by scope, id and revision, and few that were not', () => {
  const f = new FinishedFilter(10_000)
  const scope = scopeHash('org|7|11|de')
  expect(f.mayHave(scope, 1, 1)).toBe(false)
  for (let id = 1; id <= 10_000; id++) f.add(scope, id * 7919, 1)
  for (let id = 1; id <= 10_000; id++) expect(f.mayHave(scope, id * 7919, 1)).toBe(true)
  // Ids past 2^32 count with both halves.
  f.add(scope, 2 ** 40 + 3, 2)
  expect(f.mayHave(scope, 2 ** 40 + 3, 2)).toBe(true)
  let falsePositives = 0
  const other = scopeHash('org|7|11|fr')
  for (let id = 1; id <= 10_000; id++) {
    if (f.mayHave(other, id * 7919, 1)) falsePositives++
    if (f.mayHave(scope, id * 7919, 2)) falsePositives++
    if (f.mayHave(scope, id * 7919 + 1, 1)) falsePositives++
  }
  // Full, one generation: about 0.05% expected; 0.5% would mean a broken hash.
  expect(falsePositives).toBeLessThan(150)
})

it('keeps two generations: the oldest goes once the current one is full again', () => {
  const f = new FinishedFilter(1000)
  const scope = scopeHash('org|7|11|de')
  f.add(scope, 1, 1)
  for (let id = 2; id <= 1000; id++) f.add(scope, id, 1)
  // The second generation starts: the first is still asked.
  for (let id = 1001; id <= 2000; id++) f.add(scope, id, 1)
  expect(f.mayHave(scope, 1, 1)).toBe(true)
  // The third: the first is cleared.
  for (let id = 2001; id <= 2001; id++) f.add(scope, id, 1)
  expect(f.mayHave(scope, 1, 1)).toBe(false)
  expect(f.mayHave(scope, 1500, 1)).toBe(true)
  expect(f.mayHave(scope, 2001, 1)).toBe(true)
})
