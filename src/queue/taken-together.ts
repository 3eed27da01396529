// QUEUE=bullmq: BullMQ hands an instance its strings one at a time, each fetched in its own round
// trip; pushed one by one into the work queue, a free slot ran each alone, with its own translation
// fetch and pipeline run (an audit: 80 strings took 60 translation fetches, against an API that
// answered 70% of them with 429). Strings taken close together are handed on together instead, as
// a webhook's batch is on the default path: the work queue then runs each group of them (the same
// organization, project, step, language and module) once, with one fetch and one PATCH.
import type { Job } from '../protocol/job.js'

/** A string taken within this long of the one before joins its group (ms). */
export const TAKEN_TOGETHER_MS = 20
/** Strings handed on together at most: one group's worth (the work queue's groupMax, a PATCH). */
export const TAKEN_TOGETHER_MAX = 500
/** However closely they keep coming, what was taken goes on after this long (ms). */
const TAKEN_TOGETHER_LONGEST_MS = 200

export interface TakenTogether {
  add(job: Job): void
  /** Strings taken and not yet handed on, taken out (the instance stops: they go back to the queue). */
  drain(): Job[]
}

export function takenTogether(hand: (jobs: Job[]) => void, o: { windowMs?: number; max?: number; longestMs?: number } = {}): TakenTogether {
  const windowMs = o.windowMs ?? TAKEN_TOGETHER_MS
  const max = o.max ?? TAKEN_TOGETHER_MAX
  const longestMs = o.longestMs ?? TAKEN_TOGETHER_LONGEST_MS
  let jobs: Job[] = []
  let firstAt = 0
  let lastAt = 0
  let timer: NodeJS.Timeout | undefined
  const take = (): Job[] => {
    clearTimeout(timer)
    timer = undefined
    const out = jobs
    jobs = []
    return out
  }
  const flush = () => {
    const out = take()
    if (out.length) hand(out)
  }
  // Armed once per group, not per string (a timer cleared and set again for each of 500 strings
  // taken in a burst): when it fires, a string taken since sets it again for what is left of its
  // window, if the group's longest wait allows.
  const due = () => {
    timer = undefined
    const left = Math.min(lastAt + windowMs, firstAt + longestMs) - Date.now()
    if (left > 0) timer = setTimeout(due, left)
    else flush()
  }
  return {
    add(job) {
      lastAt = Date.now()
      if (jobs.length === 0) firstAt = lastAt
      jobs.push(job)
      if (jobs.length >= max) return flush()
      timer ??= setTimeout(due, Math.max(0, Math.min(windowMs, firstAt + longestMs - lastAt)))
    },
    drain: take,
  }
}
