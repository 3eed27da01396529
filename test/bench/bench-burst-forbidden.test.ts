// `switchyard bench --burst-fault forbidden`: the burst's fault is the first organization's token
// losing the right to update statuses (403) instead of the API going down. Runs the build, as a
// user would, at a size for CI: the strings are held (none DONE while the right is gone), none
// FAILED or lost, all DONE once it is back, and the report says how long the worker took to notice.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

describe('switchyard bench --burst-fault forbidden', () => {
  it('holds the first organization\'s strings while it is forbidden, then reports every one', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'bench-forbidden-'))
    let bench: ReturnType<typeof spawn> | undefined
    try {
      const child = (bench = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'), 'bench', '--quick', '--only', 'burst', '--burst', '4000', '--outage', '10', '--burst-fault', 'forbidden', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] }))
      let output = ''
      child.stdout!.on('data', (d) => (output += d))
      child.stderr!.on('data', (d) => (output += d))
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
      expect(code, output.slice(-3000)).toBe(0)
      const { burst } = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'))
      expect(burst).toMatchObject({ fault: 'forbidden', outageSeconds: 10, failed: 0, notDone: 0, busy503: 0, doneDuringFault: 0 })
      expect(burst.done).toBeGreaterThanOrEqual(4000)
      // The worker ran into the 403 and held strings, rather than never trying (10 s: time for a
      // loaded machine to run and report the first batches within the fault).
      expect(burst.peakHeld).toBeGreaterThan(0)
      expect(burst.resumedAfterSeconds).toBeGreaterThanOrEqual(0)
      // The second organization is not the one forbidden: its batches are DONE within seconds.
      expect(burst.second.maxSecondsToDone).toBeLessThan(10)
      expect(output).toMatch(/burst: pairs \(batches of 1000, first organization forbidden \(403\) for 10 s\)/)
      expect(output).toMatch(/burst: the first organization's strings DONE again after the fault \(s\) +\d/)
    } finally {
      if (bench && bench.exitCode === null) bench.kill('SIGTERM')
      rmSync(out, { recursive: true, force: true })
    }
  }, 180_000)
})
