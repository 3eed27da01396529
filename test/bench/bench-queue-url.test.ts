// `switchyard bench --queue-url`: the workers run QUEUE=bullmq on that Redis, each on a queue of its
// own, and the burst reports Redis's memory; the queues' keys are gone once the bench ends. Runs
// the build, as a user would, at a size for CI: the burst through BullMQ, nothing FAILED or lost.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { redisClient } from '../../src/queue/bullmq-journal.js'
import { describeWithService } from '../support/services.js'

// A database of its own: the bench's queue names are its own too, but the test counts keys.
const DB = 11

await describeWithService('redis', 'switchyard bench --queue-url', (REDIS) => {
  it('runs the burst through BullMQ queues of its own and deletes their keys at the end', async () => {
    const url = `${REDIS}/${DB}`
    const out = mkdtempSync(path.join(os.tmpdir(), 'bench-queue-url-'))
    const client = redisClient(url)
    const benchKeys = async () => (await client.keys('bull:switchyard_bench_*')).length
    let bench: ReturnType<typeof spawn> | undefined
    try {
      const child = (bench = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'), 'bench', '--quick', '--only', 'burst', '--burst', '4000', '--outage', '2', '--queue-url', url, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] }))
      let output = ''
      child.stdout!.on('data', (d) => (output += d))
      child.stderr!.on('data', (d) => (output += d))
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      // While it runs, its worker's strings are in Redis, under a queue named for the bench.
      let seen = 0
      let code: number | null | undefined
      void exited.then((c) => (code = c))
      while (code === undefined) {
        seen = Math.max(seen, await benchKeys())
        await new Promise((r) => setTimeout(r, 200))
      }
      expect(code, output.slice(-3000)).toBe(0)
      expect(seen).toBeGreaterThan(0)
      expect(await benchKeys()).toBe(0)
      const { burst } = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'))
      expect(burst).toMatchObject({ failed: 0, notDone: 0, busy503: 0 })
      expect(burst.done).toBeGreaterThanOrEqual(4000)
      // Its 4,000 pairs' jobs (about 2 KB each) show in Redis's memory while they wait.
      expect(burst.redisMb.peak).toBeGreaterThan(burst.redisMb.start + 2)
      expect(output).toMatch(/burst: Redis used memory MB \(before \/ peak; QUEUE=bullmq\)/)
    } finally {
      // Never left running (a failed expectation, the test's timeout): its worker would go on using Redis.
      if (bench && bench.exitCode === null) bench.kill('SIGTERM')
      client.disconnect()
      rmSync(out, { recursive: true, force: true })
    }
  }, 180_000)
})
