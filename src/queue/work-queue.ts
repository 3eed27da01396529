// The bounded work queue. Jobs wait in lists per group (domain, project, step, language, module);
// a p-queue task drains up to `groupMax` of a group at once, so under load one pipeline run, one
// translation fetch and one status PATCH serve hundreds of strings, while a quiet worker still
// handles a lone string at once. `depth` counts jobs accepted and not yet finished (reported or
// parked), which is what back-pressure limits.
import PQueue from 'p-queue'
import { groupKeyOf, type Job } from './job.js'

export interface WorkQueueOptions {
  concurrency: number
  limit: number
  groupMax?: number
  process(jobs: Job[]): Promise<void>
  onError(error: unknown, jobs: Job[]): void
}

export class WorkQueue {
  private readonly pending = new Map<string, Job[]>()
  private readonly scheduled = new Set<string>()
  private readonly queue: PQueue
  private readonly groupMax: number
  private open = 0

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

  /** Count jobs that were accepted; `finish` is called once for each when it is reported or parked. */
  admit(count: number): void {
    this.open += count
  }

  finish(count = 1): void {
    this.open = Math.max(0, this.open - count)
  }

  /** Queue jobs for a pipeline run (new ones after `admit`, or retries of admitted ones). */
  push(jobs: Job[]): void {
    for (const job of jobs) {
      const key = groupKeyOf(job)
      let list = this.pending.get(key)
      if (!list) {
        list = []
        this.pending.set(key, list)
      }
      list.push(job)
      if (!this.scheduled.has(key)) this.schedule(key)
    }
  }

  private schedule(key: string): void {
    this.scheduled.add(key)
    void this.queue.add(async () => {
      // Whatever gathered while this task waited for its turn goes in one run.
      this.scheduled.delete(key)
      const list = this.pending.get(key)
      if (!list || list.length === 0) return
      const jobs = list.length <= this.groupMax ? list : list.splice(0, this.groupMax)
      if (jobs === list) this.pending.delete(key)
      else if (!this.scheduled.has(key)) this.schedule(key)
      try {
        await this.options.process(jobs)
      } catch (error) {
        this.options.onError(error, jobs)
      }
    })
  }

  /** Run other work (event handlers) through the same queue and concurrency limit. */
  runTask(task: () => Promise<void>): Promise<void> {
    return this.queue.add(task)
  }

  /** Resolves when nothing is waiting or running in the pipeline stage. */
  async onIdle(): Promise<void> {
    await this.queue.onIdle()
  }

  pause(): void {
    this.queue.pause()
  }

  /** Drop waiting jobs from memory (they stay in the journal) and return them. */
  drain(): Job[] {
    const all: Job[] = []
    for (const list of this.pending.values()) all.push(...list)
    this.pending.clear()
    this.scheduled.clear()
    this.queue.clear()
    return all
  }

  get running(): number {
    return this.queue.pending
  }
}
