// Held organizations: strings that can't be reported now are kept, tried again with back-off
// capped near a minute, and let go (the strings themselves wait on disk, in the backlog: only counts here).
import { describe, expect, it } from 'vitest'
import { HeldOrganizations } from '../../src/queue/held-organizations.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'

const job = (stringId: number, domain = 'acme'): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain, moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId, revision: 1, batchId: 'b', attempts: 0 }) as unknown as Job

function setup(canReport: (domain: string) => boolean = () => true) {
  let now = 0
  const released: Array<{ domain: string; strings: number }> = []
  const asked: string[] = []
  const held = new HeldOrganizations({
    log: silentLogger(),
    now: () => now,
    random: () => 1, // the top of each jittered window, so delays are exact
    canReport: async (domain) => (asked.push(domain), canReport(domain)),
    release: (domain, strings) => released.push({ domain, strings }),
  })
  return { held, released, asked, at: (t: number) => (now = t) }
}

describe('HeldOrganizations', () => {
  it('holds jobs and decisions per organization, counts them and says why', () => {
    const { held } = setup()
    held.holdJobs([job(1), job(2)], 'no token', 'disconnected')
    held.holdDecisions([{ job: job(3), port: 'approved' }], '403: forbidden', 'forbidden')
    held.holdJobs([job(4, 'other')], 'no token', 'disconnected')
    expect(held.count('acme')).toBe(3)
    expect(held.count()).toBe(4)
    // Once a token was had, a refusal is the more precise reason.
    expect(held.cause('acme')).toBe('forbidden')
    expect(held.cause('other')).toBe('disconnected')
    expect(held.cause('nobody')).toBeUndefined()
    expect(held.byCause()).toEqual({ disconnected: { strings: 1, organizations: 1 }, forbidden: { strings: 3, organizations: 1 } })
  })

  it('tries a forbidden organization again after its back-off, doubling up to a minute, and starts over after a success', async () => {
    const { held, released, at } = setup()
    const waits: number[] = []
    let t = 0
    for (let i = 0; i < 9; i++) {
      held.holdDecisions([{ job: job(i), port: 'approved' }], '403', 'forbidden')
      const next = held.list()[0]!.nextTryAt
      waits.push(next - t)
      at(next - 1)
      await held.tick()
      expect(released).toHaveLength(i) // not yet
      at((t = next))
      await held.tick()
      expect(released).toHaveLength(i + 1)
      expect(released[i]!.strings).toBe(1)
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000])
    held.succeeded('acme')
    held.holdDecisions([{ job: job(99), port: 'approved' }], '403', 'forbidden')
    expect(held.list()[0]!.nextTryAt - t).toBe(1000)
  })

  it('lets a disconnected organization go only once it can get a token, asking on its own back-off', async () => {
    let connected = false
    const { held, released, asked, at } = setup(() => connected)
    held.holdJobs([job(1)], 'not connected', 'disconnected')
    at(1000)
    await held.tick()
    expect(asked).toEqual(['acme'])
    expect(released).toHaveLength(0)
    // Asked again only after the next (longer) wait.
    at(2000)
    await held.tick()
    expect(asked).toHaveLength(1)
    connected = true
    at(3000)
    await held.tick()
    expect(asked).toHaveLength(2)
    expect(released).toEqual([{ domain: 'acme', strings: 1 }])
    expect(held.count()).toBe(0)
  })

  it('gives everything up on clear (it stays in the journal for the next start)', () => {
    const { held } = setup()
    held.holdJobs([job(1), job(2)], 'x', 'disconnected')
    expect(held.clear()).toBe(2)
    expect(held.count()).toBe(0)
    expect(held.list()).toEqual([])
  })
})
