// A benchmark stopped by a signal stops its children (src/bench/processes.ts): a worker or an
// emulator left behind would go on using the CPU that the next run measures. Runs the build.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('benchmark children', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('a benchmark stopped with %s stops the children it started', async (signal) => {
    const module = pathToFileURL(path.join(PACKAGE_ROOT, 'dist', 'src', 'bench', 'processes.js')).href
    const script = `
      const { startChild, stopChildrenOnSignal } = await import(${JSON.stringify(module)})
      stopChildrenOnSignal()
      const { child } = await startChild(['-e', 'console.log(JSON.stringify({ ready: true })); setInterval(() => {}, 1000)'], process.env, (l) => l.ready === true)
      console.log(child.pid)`
    const bench = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    const pid = await new Promise<number>((resolve) => createInterface({ input: bench.stdout! }).once('line', (l) => resolve(Number(l))))
    expect(alive(pid)).toBe(true)
    const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)))
    bench.kill(signal)
    expect(await exited).toBe(signal === 'SIGTERM' ? 143 : 130)
    const deadline = Date.now() + 5000
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(alive(pid)).toBe(false)
  }, 20_000)
})

describe('cpuMsOf', () => {
  it.runIf(process.platform === 'linux')('reads the CPU a process has used so far, and nothing for a process that is gone', async () => {
    const { cpuMsOf } = await import('../../src/bench/processes.js')
    // A child that spins until it has used 300 ms of CPU (however busy the machine), then waits.
    const spin = 'const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }; while (used() < 300); console.log("spun"); setInterval(() => {}, 1000)'
    const child = spawn(process.execPath, ['-e', spin], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    try {
      await new Promise<void>((resolve) => createInterface({ input: child.stdout! }).once('line', () => resolve()))
      const used = cpuMsOf(child.pid!)
      expect(used).toBeGreaterThanOrEqual(250)
      expect(used).toBeLessThan(5_000)
      // Its main thread (the process id) did the spinning. (The kernel scales the process's and a
      // thread's user and system times apart, so the two need not add up to the tick.)
      expect(cpuMsOf(child.pid!, child.pid!)).toBeGreaterThanOrEqual(250)
      expect(cpuMsOf(child.pid!, child.pid! + 10_000_000)).toBeUndefined()
    } finally {
      // Never left behind, whatever failed: it would keep the test run from exiting.
      child.kill('SIGKILL')
      await exited
    }
    expect(cpuMsOf(2 ** 22 + 12345)).toBeUndefined()
  })
})
