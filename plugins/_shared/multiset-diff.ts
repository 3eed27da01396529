// Compare two lists as multisets by a key: what the first has that the second lacks, and the
// reverse. Several checks (placeholders, tags, urls) report "missing" and "extra" this way.

export interface MultisetDiff<T> {
  /** Items of `expected` with no counterpart in `actual`, in their order. */
  missing: T[]
  /** Items of `actual` with no counterpart in `expected`, in their order. */
  extra: T[]
}

export function multisetDiff<T>(expected: readonly T[], actual: readonly T[], key: (item: T) => string): MultisetDiff<T> {
  const pool = new Map<string, T[]>()
  for (const item of actual) {
    const k = key(item)
    const list = pool.get(k)
    if (list) list.push(item)
    else pool.set(k, [item])
  }
  const missing: T[] = []
  for (const item of expected) {
    const list = pool.get(key(item))
    if (list?.length) list.shift()
    else missing.push(item)
  }
  const left = new Set<T>()
  for (const list of pool.values()) for (const item of list) left.add(item)
  return { missing, extra: actual.filter((item) => left.has(item)) }
}
