// Percentiles and rates for the benchmark's reports (pure; tested in test/bench).

/** The p-th percentile (0..100) of the values, nearest-rank; NaN for no values. */
export function percentile(values: readonly number[], p: number, sorted = false): number {
  if (values.length === 0) return Number.NaN
  const s = sorted ? values : [...values].sort((a, b) => a - b)
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * s.length)
  return s[Math.max(0, rank - 1)]!
}

export interface LatencySummary {
  count: number
  p50: number
  p99: number
  max: number
  mean: number
}

export function summarizeLatencies(values: readonly number[]): LatencySummary {
  const s = [...values].sort((a, b) => a - b)
  const sum = s.reduce((a, b) => a + b, 0)
  return {
    count: s.length,
    p50: round(percentile(s, 50, true), 2),
    p99: round(percentile(s, 99, true), 2),
    max: round(s.length ? s[s.length - 1]! : Number.NaN, 2),
    mean: round(s.length ? sum / s.length : Number.NaN, 2),
  }
}

/** Per second, from a count and milliseconds; 0 when no time passed. */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? round((count * 1000) / ms, 1) : 0
}

export function ratio(a: number, b: number, digits = 3): number {
  return b > 0 ? round(a / b, digits) : Number.NaN
}

export function round(value: number, digits: number): number {
  if (!Number.isFinite(value)) return value
  const f = 10 ** digits
  return Math.round(value * f) / f
}
