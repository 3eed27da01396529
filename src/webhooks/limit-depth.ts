// Events other than string events are kept as parsed and handed to the main thread (and to
// plugins' event handlers), and a string event's two language records are kept whole (plugins
// read them, fields we don't know included). JSON.parse takes any depth, but structuredClone (the
// hop between threads), JSON.stringify and most recursive code overflow the stack past a few
// thousand levels: a signed event nested 100,000 deep gave 500 on every delivery, and so did a
// language record with one such field. Such a value is cut to a depth instead, and the batch kept.

/** Deeper than any event the service sends; shallow enough for any recursive consumer. */
export const MAX_EVENT_DEPTH = 32
export const CUT_MARKER = '[cut: nested too deep]'

/**
 * Is `value` nested deeper than `max` levels? Walks no deeper than max + 1, and allocates nothing:
 * it runs on every language record of every string event.
 */
export function deeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false
  if (max <= 0) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i]
      if (v !== null && typeof v === 'object' && deeperThan(v, max - 1)) return true
    }
    return false
  }
  const record = value as Record<string, unknown>
  for (const k in record) {
    const v = record[k]
    if (v !== null && typeof v === 'object' && deeperThan(v, max - 1)) return true
  }
  return false
}

/** A copy of `value` with whatever lies deeper than `max` levels replaced by CUT_MARKER. */
export function cutToDepth(value: unknown, max: number = MAX_EVENT_DEPTH): unknown {
  if (value === null || typeof value !== 'object') return value
  if (max <= 0) return CUT_MARKER
  if (Array.isArray(value)) return value.map((v) => cutToDepth(v, max - 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    // Keys come from JSON.parse, where __proto__ is an own data property; keep it one here too.
    Object.defineProperty(out, k, { value: cutToDepth(v, max - 1), enumerable: true, writable: true, configurable: true })
  }
  return out
}

/** `value` itself when it is shallow enough (the usual case: no copy), else a cut copy. */
export function limitDepth<T>(value: T, max: number = MAX_EVENT_DEPTH): T {
  return deeperThan(value, max) ? (cutToDepth(value, max) as T) : value
}
