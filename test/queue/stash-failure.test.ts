// Strings of an organization found held leave the window for the backlog on disk (Backlog.stash).
// When that write fails, they stay in their journal entries and are still owed here: the write is
// tried again (not left for a restart, while repeats of them are absorbed as queued).
import { describe, expect, it, vi } from 'vitest'
import Keyv from 'keyv'
import type { Job } from '../../src/protocol/job.js'
import { Backlog, STASH_RETRY_MAX_MS, STASH_RETRY_MS } from '../../src/queue/backlog.js'
import { Dedupe } from '../../src/queue/dedupe.js'
import { Journal } from '../../src/queue/journal.js'
import { WorkQueue } from '../../src/queue/work-queue.js'
import { createLogger } from '../../src/util/logger.js'

const job = (stringId: number): Job =>
  ({
    key: `A|${stringId}`, organizationId: 'A', domain: 'a', moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId, revision: 1,
    string: { key: 'k', context: '', maxLength: 0, text: 't', isPlural: false, fileType: 'json', filePath: '/a', labelIds: [] },
    sourceLanguage: { id: 'en' }, targetLanguage: { id: 'de' }, batchId: '', attempts: 0,
  }) as unknown as Job

function setup() {
  const store = new Keyv()
  const journal = new Journal(store)
  const dedupe = new Dedupe(60_000)
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const queue = new WorkQueue({ concurrency: 1, limit: 100, process: () => new Promise(() => undefined), onError: () => undefined })
  queue.pause()
  let held = true
  const backlog = new Backlog({ journal, queue, dedupe, log, isHeld: () => held, report: () => undefined, maxBytes: 2 ** 30, organizationShare: 0.5 })
  // The store refuses writes while `failing` is above zero (one fewer each time).
  const control = { failing: 0 }
  const set = store.set.bind(store)
  store.set = (async (...args: Parameters<typeof store.set>) => {
    if (control.failing > 0) {
      control.failing--
      throw new Error('disk is full')
    }
    return set(...args)
  }) as never
  return { store, journal, dedupe, lines, queue, backlog, control, release: () => (held = false) }
}

describe('a held string that cannot be written to the backlog', () => {
  it('is written again after a while, then taken back in turn when its organization is let go', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const { store, journal, dedupe, lines, queue, backlog, control, release } = setup()
      await backlog.replay()
      const jobs = [job(1), job(2)]
      for (const j of jobs) expect(dedupe.arrive(j, 1)).toBe('new')
      await journal.append('b1', jobs)

      control.failing = 2
      await backlog.stash(jobs)
      const errors = () => lines.filter((l) => String(l.msg).includes('could not be written to the backlog'))
      expect(errors()).toHaveLength(1)
      expect(errors()[0]).toMatchObject({ level: 50, strings: 2, domain: 'a', retryInMs: STASH_RETRY_MS })
      // Still owed here: a repeat delivery is absorbed meanwhile.
      expect(dedupe.arrive(job(1), 1)).toBe('duplicate')
      await vi.advanceTimersByTimeAsync(STASH_RETRY_MS)
      expect(errors()).toHaveLength(2)
      expect(errors()[1]).toMatchObject({ retryInMs: 2 * STASH_RETRY_MS })
      await vi.advanceTimersByTimeAsync(2 * STASH_RETRY_MS)
      expect(errors()).toHaveLength(2)
      // Stashed: the copies wait on disk, the originals are done and let go.
      expect(backlog.waitingPerDomain().get('a')).toBe(2)
      expect(jobs.map((j) => dedupe.isActive(j))).toEqual([false, false])
      const { batches } = await new Journal(store).load()
      expect(batches.flatMap((b) => b.jobs.map((j) => j.stringId))).toEqual([1, 2])
      expect(batches.map((b) => b.batchId)).not.toContain('b1')

      release()
      backlog.kick()
      await vi.advanceTimersByTimeAsync(0)
      await new Promise((resolve) => setImmediate(resolve))
      await expect.poll(() => queue.depth).toBe(2)
    } finally {
      vi.useRealTimers()
    }
  })

  it('is left in its journal entry for the next start when the worker stops first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const { store, journal, dedupe, backlog, control } = setup()
      await backlog.replay()
      const jobs = [job(1), job(2)]
      for (const j of jobs) dedupe.arrive(j, 1)
      await journal.append('b1', jobs)
      control.failing = 1
      await backlog.stash(jobs)
      backlog.close()
      await vi.advanceTimersByTimeAsync(STASH_RETRY_MAX_MS)
      const { batches } = await new Journal(store).load()
      expect(batches.map((b) => [b.batchId, b.jobs.map((j) => j.stringId)])).toEqual([['b1', [1, 2]]])
    } finally {
      vi.useRealTimers()
    }
  })
})
