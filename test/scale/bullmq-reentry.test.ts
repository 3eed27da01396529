// QUEUE=bullmq and a string that comes back: a repeat is absorbed by the job id while the first is
// queued or running; once it finished, the new arrival replaces it, marked to be checked with the
// service before it runs (it may have come back to the step with the same revision).
import { randomBytes } from 'node:crypto'
import { afterAll, expect, it } from 'vitest'
import type { BullmqJournal } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'
import { describeWithService } from '../support/services.js'

const job = (stringId: number): Job =>
  ({ key: `1|7|11|de|${stringId}|1`, organizationId: '1', domain: 'acme', moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1, batchId: '', attempts: 0, string: { key: '', context: '', maxLength: 0, text: 't', isPlural: false, fileType: '', filePath: '', labelIds: [] } }) as unknown as Job

await describeWithService('redis', 'QUEUE=bullmq: repeats and strings that come back', (REDIS) => {
  const journals: BullmqJournal[] = []
  afterAll(async () => {
    for (const j of journals) await j.close()
  })

  it('absorbs a repeat while active, and takes a finished string again with recheck set', async () => {
    const { BullmqJournal } = await import('../../src/queue/bullmq-journal.js')
    // A queue of its own in database 8, so no other test's jobs meet ours.
    const journal = new BullmqJournal({ redisUrl: `${REDIS}/8`, name: `reentry-${randomBytes(4).toString('hex')}`, concurrency: 4, attempts: 1, backoffMs: 10, lockMs: 5000, dedupeTtlMs: 60_000, log: silentLogger() })
    journals.push(journal)
    const taken: Job[] = []
    let hold = true
    const waiting: Job[] = []
    journal.start((j) => {
      taken.push(j)
      if (hold) waiting.push(j)
      else void journal.done(j)
    })
    await journal.append('b1', [job(1)])
    await expect.poll(() => taken.length).toBe(1)
    expect(taken[0]!.recheck).toBeFalsy()
    // Still running: the same string again is absorbed by its job id.
    await journal.append('b2', [job(1)])
    await new Promise((r) => setTimeout(r, 300))
    expect(taken).toHaveLength(1)
    hold = false
    await journal.done(waiting[0]!)
    // Finished: it comes back, to be checked with the service first.
    await expect.poll(async () => (await journal.backlog(), taken.length === 1)).toBe(true)
    await new Promise((r) => setTimeout(r, 300))
    await journal.append('b3', [job(1)])
    await expect.poll(() => taken.length, { timeout: 5000 }).toBe(2)
    expect(taken[1]!.recheck).toBe(true)
  })
})

await describeWithService('redis', 'QUEUE=bullmq: a string whose instance died while running it', (REDIS) => {
  it('is taken again by another instance with recheck set (that run may have reported it)', async () => {
    const { BullmqJournal } = await import('../../src/queue/bullmq-journal.js')
    const { Worker } = await import('bullmq')
    const { Redis } = await import('ioredis')
    const name = `stalled-${randomBytes(4).toString('hex')}`
    // The survivor checks for stalled jobs every second (half its lock).
    const survivor = new BullmqJournal({ redisUrl: `${REDIS}/8`, name, concurrency: 4, attempts: 1, backoffMs: 10, lockMs: 2000, dedupeTtlMs: 60_000, log: silentLogger() })
    const connection = new Redis(`${REDIS}/8`, { maxRetriesPerRequest: null })
    // The instance that dies: takes the string by hand and never renews its lock nor finishes it.
    const dying = new Worker(name, null, { connection, lockDuration: 1000 })
    try {
      await survivor.append('b1', [job(1)])
      const takenByDying = await dying.getNextJob('dying-token')
      expect(takenByDying?.id).toBe(job(1).key)
      const taken: Job[] = []
      survivor.start((j) => {
        taken.push(j)
        void survivor.done(j)
      })
      await expect.poll(() => taken.length, { timeout: 10_000 }).toBe(1)
      expect(taken[0]!.key).toBe(job(1).key)
      expect(taken[0]!.recheck).toBe(true)
    } finally {
      await dying.close(true)
      await survivor.close()
      await connection.quit()
    }
  }, 20_000)
})
