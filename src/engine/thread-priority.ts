// A thread's own id and CPU time, and lowering its priority (Linux; elsewhere each answers
// "unknown" and nothing changes). The pipeline threads run below the main thread
// (PIPELINE_THREAD_NICE), and the long-text lane below them, so that under load the CPU goes to
// webhooks and reports first, then to ordinary strings; a niced thread's time budget then counts
// the CPU the thread got rather than only the time that passed.
import { readFileSync, readlinkSync } from 'node:fs'
import os from 'node:os'

/** The calling thread's kernel id (its TID), or undefined where /proc does not say. */
export function ownThreadId(): number | undefined {
  try {
    // "<pid>/task/<tid>": resolved by the thread that reads it.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isSafeInteger(tid) && tid > 0 ? tid : undefined
  } catch {
    return undefined
  }
}

/**
 * Lower the calling thread's priority by `steps` nice values (to 19 at most), from where it stands
 * (a worker started under `nice -n 5` and a lane of 10 runs it at 15). Only that thread: on Linux
 * a nice value belongs to a thread, and `setpriority` for "the caller" (0) sets the calling
 * thread's. False where it could not be done (not Linux, not allowed, already at 19).
 */
export function lowerOwnPriority(steps: number): boolean {
  if (process.platform !== 'linux' || !(steps >= 1)) return false
  try {
    const now = os.getPriority(0)
    const target = Math.min(19, now + Math.round(steps))
    if (target <= now) return false
    os.setPriority(0, target)
    return true
  } catch {
    return false
  }
}

/** CPU time (user and system) a thread of this process has used, in ms (10 ms steps); undefined when unknown. */
export function threadCpuMs(tid: number): number | undefined {
  if (!(Number.isSafeInteger(tid) && tid > 0)) return undefined
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1')
    // After "pid (comm) ": state is field 3, utime 14 and stime 15, in clock ticks (USER_HZ, 100 on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12])
    return Number.isFinite(ticks) ? ticks * 10 : undefined
  } catch {
    return undefined
  }
}
