// What the intake and the outcomes need of a journal. Two implement it: `Journal` (one instance;
// entries in the store, read back by the backlog and replayed on start) and `BullmqJournal`
// (several instances share a queue on Redis, which hands each job to one of them and replays by
// itself).
import type { Job } from '../protocol/job.js'
import type { EncodedJobs } from './journal.js'

export interface IntakeJournal {
  newBatchId(): string
  /** Durably record the jobs of one batch; resolves only once they are stored. */
  append(batchId: string, jobs: Job[], encoded?: EncodedJobs): Promise<unknown>
  /** A job is finished (reported, superseded, dropped, absorbed). */
  done(job: Job): Promise<void>
  /** Keep a job aside, durably, with the reason; it is tried again on the next start. */
  park(job: Job, reason: string): Promise<void>
  /** Strings waiting across every instance, when they share a queue. */
  backlog?(): Promise<number>
  /** When a process last said it was alive on this journal (ms), if one ever did. */
  lastAlive?(): Promise<number | undefined>
  /** Record that this process is alive now; `other`: another process did since this one last did. */
  markAlive?(): Promise<void | { other?: string }>
  /** Jobs acknowledged and not yet done. */
  readonly size: number
  readonly parked: number
}
