// A decision reported apart from its run (a held string back with its output decided, a refused
// output sent again as "") is reported unless a newer revision of its string is known: by this
// instance's memory at once, and with QUEUE=bullmq by the revisions noted in Redis, the copies of
// one turn asked about in one read; a read that fails reports them all, and says so.
import { expect, it } from 'vitest'
import type { Decision } from '../../src/protocol/decision.js'
import type { Job } from '../../src/protocol/job.js'
import { createCheckedReport } from '../../src/queue/checked-report.js'
import { createLogger } from '../../src/util/logger.js'

const job = (stringId: number) => ({ stringId, revision: 1 }) as unknown as Job
const decision = (stringId: number, port = 'approved'): Decision => ({ job: job(stringId), port })
const turn = () => new Promise((r) => setImmediate(r))

function setup(o: { newer?: (jobs: Job[]) => Promise<ReadonlySet<Job>>; stale?: number[] }) {
  const asked: number[][] = []
  const reported: Array<[number, string]> = []
  const superseded: number[] = []
  const lines: Array<Record<string, unknown>> = []
  const report = createCheckedReport({
    isCurrent: (j) => !o.stale?.includes(j.stringId),
    ...(o.newer ? { newerArrived: (jobs: Job[]) => (asked.push(jobs.map((j) => j.stringId)), o.newer!(jobs)) } : {}),
    superseded: (j) => void superseded.push(j.stringId),
    report: (d: Decision) => void reported.push([d.job.stringId, d.port]),
    log: createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never }),
  })
  return { report, asked, reported, superseded, lines }
}

it('reports the decided output of copies no newer revision arrived for, and supersedes the others, asking once per turn', async () => {
  const { report, asked, reported, superseded } = setup({ newer: async (jobs) => new Set(jobs.filter((j) => j.stringId === 2)) })
  report(decision(1))
  report(decision(2, 'translated'))
  report(decision(3, ''))
  await turn()
  await turn()
  expect(asked).toEqual([[1, 2, 3]])
  expect(reported).toEqual([[1, 'approved'], [3, '']])
  expect(superseded).toEqual([2])
  report(decision(4))
  await turn()
  await turn()
  expect(asked).toEqual([[1, 2, 3], [4]])
  expect(reported).toEqual([[1, 'approved'], [3, ''], [4, 'approved']])
})

it('supersedes a copy this instance knows a newer revision of without asking Redis', async () => {
  const { report, asked, reported, superseded } = setup({ newer: async () => new Set(), stale: [2] })
  report(decision(1, ''))
  report(decision(2, ''))
  await turn()
  await turn()
  expect(asked).toEqual([[1]])
  expect(reported).toEqual([[1, '']])
  expect(superseded).toEqual([2])
})

it('without a shared queue, reports at once what this instance holds current', async () => {
  const { report, reported, superseded } = setup({ stale: [2] })
  report(decision(1, ''))
  report(decision(2, ''))
  expect(reported).toEqual([[1, '']])
  await turn()
  expect(superseded).toEqual([2])
})

it('reports them all when the revisions cannot be read, and says so', async () => {
  const { report, reported, superseded, lines } = setup({
    newer: async () => {
      throw new Error('Redis down')
    },
  })
  report(decision(1))
  report(decision(2))
  await turn()
  await turn()
  expect(reported).toEqual([[1, 'approved'], [2, 'approved']])
  expect(superseded).toEqual([])
  expect(lines.find((l) => l.level === 40)).toMatchObject({ strings: 2 })
})
