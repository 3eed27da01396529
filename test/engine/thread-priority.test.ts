// A thread's own id, its priority and its CPU time (src/engine/thread-priority.ts), tried in a
// worker thread so that the test process itself is never lowered. Linux only (/proc).
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { lowerOwnPriority, ownThreadId, threadCpuMs } from '../../src/engine/thread-priority.js'

/** Run `body` (the module's functions in scope as `t`) in a worker thread; its return value comes back. */
function inThread(body: string): Promise<Record<string, unknown>> {
  // A worker thread loads JavaScript: the build's copy (the test set-up builds dist/).
  const module = pathToFileURL(path.join(PACKAGE_ROOT, 'dist', 'src', 'engine', 'thread-priority.js')).href
  const code = `
    const { parentPort } = require('node:worker_threads')
    import(${JSON.stringify(module)}).then(async (t) => parentPort.postMessage(await (async () => { ${body} })()), (e) => parentPort.postMessage({ error: String(e) }))`
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true })
    w.once('message', (m) => { void w.terminate(); resolve(m as Record<string, unknown>) })
    w.once('error', reject)
  })
}

describe.skipIf(ownThreadId() === undefined)('thread priority (Linux)', () => {
  it('a thread knows its own kernel id, which is not the process\'s', async () => {
    const main = ownThreadId()
    expect(main).toBe(process.pid)
    const { tid } = await inThread('return { tid: t.ownThreadId() }')
    expect(tid).toEqual(expect.any(Number))
    expect(tid).not.toBe(process.pid)
  })

  it('lowers only the calling thread\'s priority, never the process\'s', async () => {
    const r = await inThread(`
      const tid = t.ownThreadId()
      const os = await import('node:os')
      const before = os.getPriority(tid)
      const lowered = t.lowerOwnPriority(6)
      return { before, lowered, own: os.getPriority(tid), process: os.getPriority(process.pid), none: t.lowerOwnPriority(0), floor: t.lowerOwnPriority(40), bottom: t.lowerOwnPriority(1), last: os.getPriority(tid) }`)
    // From where the thread stood (the process's own nice value, 0 unless the tests run under nice).
    const base = os.getPriority()
    expect(r).toEqual({ before: base, lowered: base < 19, own: Math.min(19, base + 6), process: base, none: false, floor: base + 6 < 19, bottom: false, last: 19 })
    expect(os.getPriority()).toBe(base)
  })

  it('reads the CPU time a thread has used, which grows as it computes and not as it waits', async () => {
    const r = await inThread(`
      const tid = t.ownThreadId()
      const start = t.threadCpuMs(tid)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300)
      const waited = t.threadCpuMs(tid)
      // Spins until the count has moved by 100 ms (or 10 s have passed, on a machine too busy to tell).
      const until = performance.now() + 10_000
      let spun = waited
      while (spun - waited < 100 && performance.now() < until) spun = t.threadCpuMs(tid)
      return { start, waited, spun }`)
    const { start, waited, spun } = r as { start: number; waited: number; spun: number }
    expect(waited - start).toBeLessThan(100)
    expect(spun - waited).toBeGreaterThanOrEqual(100)
  })

  it('answers "unknown" for a thread id that is not one of this process\'s', () => {
    expect(threadCpuMs(0)).toBeUndefined()
    expect(threadCpuMs(-3)).toBeUndefined()
    expect(threadCpuMs(1.5)).toBeUndefined()
    expect(threadCpuMs(2 ** 31)).toBeUndefined()
    expect(lowerOwnPriority(Number.NaN)).toBe(false)
  })
})
