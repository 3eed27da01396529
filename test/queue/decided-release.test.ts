// With QUEUE=bullmq a held string comes back from Redis with its output decided: reported as
// decided, unless a newer revision of it arrived meanwhile (then it leaves as superseded). The
// copies taken in one turn are asked about in one read; a read that fails reports them all.
import { expect, it } from 'vitest'
import type { Decision } from '../../src/protocol/decision.js'
import type { Job } from '../../src/protocol/job.js'
import { createDecidedRelease } from '../../src/queue/decided-release.js'
import { createLogger } from '../../src/util/logger.js'

const job = (stringId: number, decidedPort = 'approved') => ({ stringId, revision: 1, decidedPort }) as unknown as Job & { decidedPort: string }
const turn = () => new Promise((r) => setImmediate(r))

function setup(newer: (jobs: Job[]) => Promise<ReadonlySet<Job>>) {
  const asked: number[][] = []
  const reported: Array<[number, string]> = []
  const superseded: number[] = []
  const lines: Array<Record<string, unknown>> = []
  const release = createDecidedRelease({
    newerArrived: (jobs) => (asked.push(jobs.map((j) => j.stringId)), newer(jobs)),
    superseded: (j) => void superseded.push(j.stringId),
    report: (d: Decision) => void reported.push([d.job.stringId, d.port]),
    log: createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never }),
  })
  return { release, asked, reported, superseded, lines }
}

it('reports the decided output of copies no newer revision arrived for, and supersedes the others, asking once per turn', async () => {
  const { release, asked, reported, superseded } = setup(async (jobs) => new Set(jobs.filter((j) => j.stringId === 2)))
  release(job(1))
  release(job(2, 'translated'))
  release(job(3, ''))
  await turn()
  await turn()
  expect(asked).toEqual([[1, 2, 3]])
  expect(reported).toEqual([[1, 'approved'], [3, '']])
  expect(superseded).toEqual([2])
  release(job(4))
  await turn()
  await turn()
  expect(asked).toEqual([[1, 2, 3], [4]])
  expect(reported).toEqual([[1, 'approved'], [3, ''], [4, 'approved']])
})

it('reports them all when the revisions cannot be read, and says so', async () => {
  const { release, reported, superseded, lines } = setup(async () => {
    throw new Error('Redis down')
  })
  release(job(1))
  release(job(2))
  await turn()
  await turn()
  expect(reported).toEqual([[1, 'approved'], [2, 'approved']])
  expect(superseded).toEqual([])
  expect(lines.find((l) => l.level === 40)).toMatchObject({ strings: 2 })
})
