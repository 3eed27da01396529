// Child processes of the benchmark (worker, emulator, baseline): started with `node`, ready when
// they print a JSON line the caller recognizes (or a URL answers), stopped with SIGTERM by pid.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'

export interface Child {
  process: ChildProcess
  pid: number
  /** The last lines of stderr and non-JSON stdout, for an error message. */
  tail(): string
  stop(): Promise<void>
}

/** Children started and not yet exited. */
const live = new Set<ChildProcess>()

/**
 * Stop every child still running when the benchmark itself is stopped (Ctrl-C, SIGTERM): a worker
 * or an emulator left behind would go on using the CPU the next run measures. Returns a function
 * that removes the handlers.
 */
export function stopChildrenOnSignal(): () => void {
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
    const handler = () => {
      for (const proc of live) proc.kill('SIGTERM')
      process.exit(signal === 'SIGINT' ? 130 : 143)
    }
    process.once(signal, handler)
    return () => process.off(signal, handler)
  })
  return () => handlers.forEach((off) => off())
}

export function startChild(args: string[], env: NodeJS.ProcessEnv, ready?: (line: Record<string, unknown>) => boolean): Promise<{ child: Child; line?: Record<string, unknown> }> {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  live.add(proc)
  proc.once('exit', () => live.delete(proc))
  const tail: string[] = []
  const keep = (line: string) => {
    tail.push(line)
    if (tail.length > 20) tail.shift()
  }
  createInterface({ input: proc.stderr! }).on('line', keep)
  const child: Child = {
    process: proc,
    pid: proc.pid!,
    tail: () => tail.join('\n'),
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve()
        const kill = setTimeout(() => proc.kill('SIGKILL'), 15_000)
        proc.once('exit', () => {
          clearTimeout(kill)
          resolve()
        })
        proc.kill('SIGTERM')
      }),
  }
  return new Promise((resolve, reject) => {
    let done = !ready
    if (done) resolve({ child })
    const lines = createInterface({ input: proc.stdout! })
    lines.on('line', (text) => {
      if (done) {
        if (!text.startsWith('{')) keep(text)
        return
      }
      let parsed: Record<string, unknown> | undefined
      try {
        parsed = text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : undefined
      } catch {
        parsed = undefined
      }
      if (!parsed) keep(text)
      if (parsed && (!ready || ready(parsed))) {
        done = true
        resolve({ child, line: parsed })
      }
    })
    proc.once('exit', (code) => {
      if (!done) reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${tail.join('\n')}`))
    })
  })
}

/** Resident memory of a process now and its peak so far, MB (Linux /proc). */
export function memoryOf(pid: number): { rssMb: number; hwmMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 }
  } catch {
    return undefined
  }
}

/**
 * CPU time a process has used so far, every thread counted, in ms (Linux /proc: utime + stime, in
 * clock ticks of 10 ms, the USER_HZ of every Linux Node runs on); with `thread`, that thread's
 * alone (its kernel id: the process id for the main thread). Undefined where /proc is absent.
 */
export function cpuMsOf(pid: number, thread?: number): number | undefined {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12])
    return Number.isFinite(ticks) ? ticks * 10 : undefined
  } catch {
    return undefined
  }
}

export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 100, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}
