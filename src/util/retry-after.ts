// Reading a Retry-After header (RFC 9110, 10.2.3): the service's API client and plugins that call
// out (ai-proofread) both honour it; exported to plugin authors from the package's index.

/**
 * The longest Retry-After the worker believes (ms): a wait of days (or a number too large for a
 * timer, which Node fires at once) is a broken header, not a plan.
 */
export const RETRY_AFTER_MAX_MS = 10 * 60_000

/** A Retry-After value (seconds, or an HTTP date) as a wait in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const v = value?.trim()
  if (!v) return undefined
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
