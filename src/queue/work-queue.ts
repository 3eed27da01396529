// The bounded work queue. Jobs wait in lists per group (domain, project, step, language, module);
// a p-queue task drains up to `groupMax` of a group at once, so under load one pipeline run, one
// translation fetch and one status PATCH serve hundreds of strings, while a quiet worker still
// handles a lone string at once. `depth` counts jobs accepted and not yet finished (reported or
// parked): the window the backlog (backlog.ts) keeps filled up to `limit` from the journal.
// Fairness: a task does not run the group that scheduled it but the next one in turn:
// organizations in turn (round robin), and within one, its groups (steps, languages) in turn;
// oldest first within a group. One organization's thousands of groups never keep another's lone
// group waiting behind them.
import PQueue from 'p-queue'
import { groupKeyOf, type Job } from '../protocol/job.js'
import { PartFailed } from './process-jobs.js'

/**
 * Characters of long strings whose runs may wait on the long-text lane beside the concurrency
 * limit: their translations are held in memory meanwhile (at most some 32 MB of text).
 */
export const DETACH_MAX_WEIGHT = 16_000_000

export interface WorkQueueOptions {
  concurrency: number
  limit: number
  groupMax?: number
  process(jobs: Job[]): Promise<void>
  onError(error: unknown, jobs: Job[]): void
  /** Jobs left the window (finished): there is room for more. */
  onRoom?(): void
  /**
   * What the runs finished beside the concurrency limit (`detach`) may weigh together, at most:
   * their strings' characters (DETACH_MAX_WEIGHT by default).
   */
  detachMaxWeight?: number
}

export class WorkQueue {
  private readonly pending = new Map<string, Job[]>()
  /** Per organization, its groups with waiting jobs: both in the order they are served next. */
  private readonly rings = new Map<string, string[]>()
  private readonly queue: PQueue
  private readonly groupMax: number
  private open = 0
  /** Work finished beside the concurrency limit (`detach`), and its weight. */
  private readonly detached = new Set<Promise<void>>()
  private detachedWeight = 0

  constructor(private readonly options: WorkQueueOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency })
    this.groupMax = options.groupMax ?? 500
  }

  /** Jobs accepted and not yet finished. */
  get depth(): number {
    return this.open
  }

  /** Jobs waiting for a pipeline run (not yet running). */
  get waiting(): number {
    let n = 0
    for (const list of this.pending.values()) n += list.length
    return n
  }

  get limit(): number {
    return this.options.limit
  }

  /** Can `n` more jobs be accepted without passing the limit? */
  hasRoom(n: number): boolean {
    return this.open + n <= this.options.limit || (this.open === 0 && n > 0)
  }

  /** Take room for jobs that were accepted; `finish` gives it back for each when it is reported or parked. */
  reserve(count: number): void {
    this.open += count
  }

  finish(count = 1): void {
    this.open = Math.max(0, this.open - count)
    if (count > 0) this.options.onRoom?.()
  }

  /** Queue jobs for a pipeline run (new ones after `reserve`, or retries of ones already counted). */
  push(jobs: Job[]): void {
    let groups = 0
    for (const job of jobs) {
      const key = groupKeyOf(job)
      const list = this.pending.get(key)
      if (list) {
        list.push(job)
        continue
      }
      this.pending.set(key, [job])
      const organization = job.organizationId || job.domain
      let ring = this.rings.get(organization)
      if (!ring) this.rings.set(organization, (ring = []))
      ring.push(key)
      groups++
    }
    // One task per group with waiting jobs (at least): each runs whichever group is next. Scheduled
    // only once every job is in its list: p-queue starts a task at once while a slot is free, and
    // one started mid-push would take its group with only the jobs listed so far (an idle worker
    // then ran a batch's first strings one by one, each with its own translation fetch).
    for (let i = 0; i < groups; i++) this.schedule()
  }

  /** The next group in turn, and up to `groupMax` of its jobs. */
  private take(): Job[] | undefined {
    for (const [organization, ring] of this.rings) {
      this.rings.delete(organization)
      const key = ring.shift()
      const list = key === undefined ? undefined : this.pending.get(key)
      if (key === undefined || !list) {
        if (ring.length) this.rings.set(organization, ring)
        continue
      }
      const jobs = list.length <= this.groupMax ? list : list.splice(0, this.groupMax)
      const rest = jobs !== list
      if (rest) ring.push(key)
      else this.pending.delete(key)
      // Served: the organization goes to the end of the turn.
      if (ring.length) this.rings.set(organization, ring)
      // A task for the rest of the group only now: p-queue starts it at once while a slot is free,
      // and it must find the organization back in its turn (before, it found none and ended, and
      // the rest of the group waited for the next push).
      if (rest) this.schedule()
      return jobs
    }
    return undefined
  }

  private schedule(): void {
    void this.queue.add(async () => {
      const jobs = this.take()
      if (!jobs || jobs.length === 0) return
      try {
        await this.options.process(jobs)
      } catch (error) {
        // Part of the group was handed on (detached, or to come back later): only the rest failed here.
        if (!(error instanceof PartFailed)) this.options.onError(error, jobs)
        else if (error.jobs.length) this.options.onError(error.error, error.jobs)
      }
    })
  }

  /**
   * Finish `task` beside the concurrency limit: the part of a run that waits on the pipelines'
   * long-text lane, so that the limit's slots go on serving ordinary strings meanwhile. `weight`
   * is what the task holds in memory (its strings' characters); past detachMaxWeight together,
   * false (a task alone is always taken), and the caller brings its strings back later. A task
   * that throws goes to onError with its jobs.
   */
  detach(task: () => Promise<void>, jobs: Job[], weight: number): boolean {
    if (this.detached.size > 0 && this.detachedWeight + weight > (this.options.detachMaxWeight ?? DETACH_MAX_WEIGHT)) return false
    this.detachedWeight += weight
    const done = Promise.resolve()
      .then(task)
      .catch((error: unknown) => this.options.onError(error, jobs))
      .finally(() => {
        this.detached.delete(done)
        this.detachedWeight -= weight
      })
    this.detached.add(done)
    return true
  }

  /** Run other work (event handlers) through the same queue and concurrency limit. */
  runTask(task: () => Promise<void>): Promise<void> {
    return this.queue.add(task)
  }

  /** Resolves when nothing is waiting or running in the pipeline stage (detached work included). */
  async onIdle(): Promise<void> {
    await this.queue.onIdle()
    // Detached work may push retries, and queued work may detach more.
    while (this.detached.size > 0) {
      await Promise.all([...this.detached])
      await this.queue.onIdle()
    }
  }

  pause(): void {
    this.queue.pause()
  }

  /** Drop waiting jobs from memory (they stay in the journal) and return them. */
  drain(): Job[] {
    const all = this.takeWaiting()
    this.queue.clear()
    return all
  }

  /**
   * Take out the jobs waiting for a pipeline run (not those running), and return them; other
   * work (runTask) stays queued. Their room is the caller's to give back (`finish`).
   */
  takeWaiting(): Job[] {
    const all: Job[] = []
    for (const list of this.pending.values()) all.push(...list)
    this.pending.clear()
    this.rings.clear()
    return all
  }

  get running(): number {
    return this.queue.pending
  }
}
