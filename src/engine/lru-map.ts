// A Map that keeps at most `max` entries, forgetting the least recently used (read or written)
// first. Plugin instances are made per distinct settings value of a step (run-pipeline.ts); a
// plain Map kept every one until the next reload, so settings that vary (one per project, or a
// workflow-editor user saving values in a loop) grew it without bound.
export class LruMap<K, V> extends Map<K, V> {
  constructor(
    private readonly max: number,
    private readonly onEvict?: (value: V, key: K) => void,
  ) {
    super()
  }

  override get(key: K): V | undefined {
    if (!super.has(key)) return undefined
    const value = super.get(key) as V
    // Re-inserting moves it to the end: Map iterates in insertion order, oldest first.
    super.delete(key)
    super.set(key, value)
    return value
  }

  override set(key: K, value: V): this {
    super.delete(key)
    super.set(key, value)
    while (this.size > this.max) {
      const [oldest, evicted] = super.entries().next().value as [K, V]
      super.delete(oldest)
      this.onEvict?.(evicted, oldest)
    }
    return this
  }
}
