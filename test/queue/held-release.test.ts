// QUEUE=bullmq: the sweep of domains held in Redis that no live instance lets go of. A domain
// whose organization has a token again is released as a probe (a chunk: a forbidden organization
// has a token too, and the rest follows its first report that goes through); a domain its
// organization has left is released whole, since no report is ever made under it again to
// release the rest. Nothing is released while the organization has neither. And a held decision
// back from the disk or Redis: reported under the organization's domain now, or its room given back.
import { afterEach, describe, expect, it } from 'vitest'
import { reboundReport, sweepHeldInRedis } from '../../src/worker.js'
import { HeldOrganizations } from '../../src/queue/held-organizations.js'
import { OrganizationUnavailableError, type TokenProvider } from '../../src/platform/token-provider.js'
import type { HeldDomain } from '../../src/queue/bullmq-journal.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'

const EVERY_MS = 20

function setup(o: { token: boolean; moved: boolean }) {
  const releases: Array<{ domain: string; probe: boolean | undefined }> = []
  const domains: HeldDomain[] = [{ domain: 'acme', organization: '200000', retryAt: 0 }]
  const shared = {
    heldDomains: async () => domains,
    release: async (domain: string, options: { probe?: boolean } = {}) => {
      releases.push({ domain, probe: options.probe })
      domains.length = 0 // all of it, or the probe's chunk that ran and was held again: no more asked here
      return 1
    },
  }
  const tokens: TokenProvider = {
    getAccessToken: async (domain) => {
      if (o.token) return 'token'
      throw new OrganizationUnavailableError(domain, 'not connected')
    },
    refreshAfterUnauthorized: async () => 'token',
  }
  const moved: string[] = []
  const held = new HeldOrganizations({ log: silentLogger(), canReport: async () => true, release: () => {} })
  const sweep = sweepHeldInRedis(shared, held, tokens, async (domain) => (moved.push(domain), o.moved), silentLogger(), () => false, EVERY_MS)
  return { sweep, releases, moved }
}

describe('the sweep of held domains in Redis', () => {
  let stop: (() => void) | undefined
  afterEach(() => stop?.())

  it('releases a domain whose organization has a token as a probe, without asking whether it moved', async () => {
    const { sweep, releases, moved } = setup({ token: true, moved: false })
    stop = sweep.stop
    await expect.poll(() => releases).toEqual([{ domain: 'acme', probe: true }])
    expect(moved).toEqual([])
  })

  it('releases a domain its organization has left whole, though no token comes for it', async () => {
    const { sweep, releases, moved } = setup({ token: false, moved: true })
    stop = sweep.stop
    await expect.poll(() => releases).toEqual([{ domain: 'acme', probe: false }])
    expect(moved).toContain('acme')
  })

  it('releases nothing of a domain with no token whose organization has not moved', async () => {
    const { sweep, releases, moved } = setup({ token: false, moved: false })
    stop = sweep.stop
    await expect.poll(() => moved.length).toBeGreaterThanOrEqual(3)
    expect(releases).toEqual([])
  })
})

describe('a held decision reported again', () => {
  const decision = () => ({ job: { domain: 'acme', organizationId: '200000', stringId: 5 } as Job, port: 'pass' })

  it('is reported under the domain its organization has now', async () => {
    const reported: string[] = []
    let room = 0
    const report = reboundReport({ rebind: async (jobs) => jobs.forEach((j) => (j.domain = 'acme-new')) }, (d) => reported.push(d.job.domain), () => room++, silentLogger())
    report(decision())
    await expect.poll(() => reported).toEqual(['acme-new'])
    expect(room).toBe(0)
  })

  it('gives its room in the window back and says so when it cannot be reported, rather than leave it taken', async () => {
    const failures: unknown[] = []
    let room = 0
    const report = reboundReport({ rebind: async () => {} }, () => { throw new Error('the reporter is closed') }, () => room++, silentLogger())
    report(decision(), (error) => failures.push(error))
    await expect.poll(() => failures.length).toBe(1)
    expect(String(failures[0])).toContain('the reporter is closed')
    expect(room).toBe(1)
  })
})
