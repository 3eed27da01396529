// The check's time limit as the deadline of a batch's requests. The engine stops waiting for a
// batch once the check's `timeout` is up, and every string of it gets plugin-timed-out, those
// already answered too: so a request, its retries and the waits between them end before that, a
// request that cannot fails its own strings saying why, and the rest of the batch keeps its verdicts.

/** When the engine stops waiting for a batch (performance.now() time), and its limit in ms. */
export interface Deadline {
  at: number
  limitMs: number
}

/**
 * Time kept back from the engine's limit, to return the batch's results before its timer fires
 * on a busy machine: a tenth of the limit, at most 2 s.
 */
export const marginMs = (limitMs: number): number => Math.min(2000, limitMs / 10)

/** The deadline of a batch the engine began waiting for now, with a limit of `limitMs`. */
export function deadlineAfter(limitMs: number, now = performance.now()): Deadline {
  return { at: now + limitMs - marginMs(limitMs), limitMs }
}

/** A time as a message says it: "600 s", "2.5 s". */
export const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`

/** The limit as a message says it. */
export const limitText = ({ limitMs }: Deadline): string => seconds(limitMs)
