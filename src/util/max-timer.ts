/**
 * The longest wait a Node timer can make (setTimeout's limit, about 24.8 days): a longer one fires
 * at once (Node sets it to 1 ms). Options and pipeline fields that set a wait are bounded by it.
 */
export const MAX_TIMER_MS = 2_147_483_647
