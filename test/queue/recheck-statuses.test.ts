// Strings that arrive again after they finished: the service's status decides, 500 ids a call.
import { describe, expect, it } from 'vitest'
import type { Job } from '../../src/protocol/job.js'
import { recheckStatuses } from '../../src/queue/recheck-statuses.js'

const job = (stringId: number, recheck = true): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain: 'acme', moduleKey: 'm', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1, batchId: 'b', attempts: 0, recheck }) as unknown as Job

describe('recheckStatuses', () => {
  it('runs NEED_PROCESS strings, absorbs the others with their status, and asks nothing about the rest', async () => {
    const calls: Array<{ args: unknown[] }> = []
    const statuses: Record<number, string> = { 1: 'NEED_PROCESS', 2: 'DONE', 3: 'TODO' }
    const api = {
      async getStatuses(...args: unknown[]) {
        calls.push({ args })
        const ids = (args[4] as { stringIds: number[] }).stringIds
        return ids.filter((id) => statuses[id]).map((stringId) => ({ stringId, languageId: 'de', stepId: 11, status: statuses[stringId]!, output: '' }))
      },
    }
    const fresh = job(10, false)
    const out = await recheckStatuses(api, [job(1), job(2), job(3), job(4), fresh], { maxAttempts: 3, maxWaitMs: 5000 })
    expect(out.run.map((j) => j.stringId)).toEqual([10, 1])
    expect(out.run.every((j) => !j.recheck)).toBe(true)
    expect(out.absorbed.map((a) => [a.job.stringId, a.status])).toEqual([[2, 'DONE'], [3, 'TODO'], [4, 'absent']])
    // The request's options (the work slot's few attempts) go to the API client.
    expect(calls).toEqual([{ args: ['acme', 7, 11, 'de', { stringIds: [1, 2, 3, 4], limit: 500 }, { maxAttempts: 3, maxWaitMs: 5000 }] }])
  })

  it('reads only the records of the step and language it asked about', async () => {
    const api = {
      async getStatuses() {
        return [{ stringId: 1, languageId: 'fr', stepId: 11, status: 'DONE', output: '' }, { stringId: 1, languageId: 'de', stepId: 12, status: 'DONE', output: '' }, { stringId: 2, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' }]
      },
    }
    const out = await recheckStatuses(api, [job(1), job(2), job(3)])
    // 1 has records of another language and step only: run, not absorbed on their word.
    expect(out.run.map((j) => j.stringId)).toEqual([1, 2])
    expect(out.absorbed.map((a) => [a.job.stringId, a.status])).toEqual([[3, 'absent']])
  })

  it('asks 500 ids at a time', async () => {
    const sizes: number[] = []
    const api = {
      async getStatuses(_d: string, _p: number, _s: number, _l: string, q: { stringIds?: number[] }) {
        sizes.push(q.stringIds!.length)
        return q.stringIds!.map((stringId) => ({ stringId, languageId: 'de', stepId: 11, status: 'NEED_PROCESS', output: '' }))
      },
    }
    const out = await recheckStatuses(api, Array.from({ length: 1201 }, (_, i) => job(i + 1)))
    expect(sizes).toEqual([500, 500, 201])
    expect(out.run).toHaveLength(1201)
  })

  it('asks no empty question when the ids fill whole calls', async () => {
    const sizes: number[] = []
    const api = {
      async getStatuses(_d: string, _p: number, _s: number, _l: string, q: { stringIds?: number[] }) {
        sizes.push(q.stringIds!.length)
        return []
      },
    }
    await recheckStatuses(api, Array.from({ length: 1000 }, (_, i) => job(i + 1)))
    expect(sizes).toEqual([500, 500])
  })

  it('asks nothing when no job needs it, and lets API errors through to the caller', async () => {
    let called = false
    expect(await recheckStatuses({ getStatuses: async () => ((called = true), []) }, [job(1, false)])).toEqual({ run: [job(1, false)], absorbed: [] })
    expect(called).toBe(false)
    await expect(recheckStatuses({ getStatuses: async () => { throw new Error('503') } }, [job(1)])).rejects.toThrow('503')
  })
})
