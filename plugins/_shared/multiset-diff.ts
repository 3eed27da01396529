// Compare two lists as multisets by a key: what the first has that the second lacks, and the
// reverse. Several checks (placeholders, tags, urls) report "missing" and "extra" this way.

export interface MultisetDiff<T> {
  /** Items of `expected` with no counterpart in `actual`, in their order. */
  missing: T[]
  /** Items of `actual` with no counterpart in `expected`, in their order. */
  extra: T[]
}

export function multisetDiff<T>(expected: readonly T[], actual: readonly T[], key: (item: T) => string): MultisetDiff<T> {
  // Each key's items in order, and how many of them are used: `shift()` per match was quadratic.
  const pool = new Map<string, { items: T[]; used: number }>()
  for (const item of actual) {
    const k = key(item)
    const entry = pool.get(k)
    if (entry) entry.items.push(item)
    else pool.set(k, { items: [item], used: 0 })
  }
  const missing: T[] = []
  for (const item of expected) {
    const entry = pool.get(key(item))
    if (entry && entry.used < entry.items.length) entry.used++
    else missing.push(item)
  }
  const left = new Set<T>()
  for (const { items, used } of pool.values()) for (let i = used; i < items.length; i++) left.add(items[i]!)
  return { missing, extra: actual.filter((item) => left.has(item)) }
}
