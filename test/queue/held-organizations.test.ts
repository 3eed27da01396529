// Held organizations: strings that can't be reported now are kept, tried again with back-off
// capped near a minute, and let go (the strings themselves wait on disk, in the backlog: only counts here).
import { describe, expect, it } from 'vitest'
import { HeldOrganizations } from '../../src/queue/held-organizations.js'
import type { Job } from '../../src/protocol/job.js'
import { silentLogger } from '../../src/util/logger.js'

const job = (stringId: number, domain = 'acme'): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain, moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId, revision: 1, batchId: 'b', attempts: 0 }) as unknown as Job

function setup(canReport: (domain: string) => boolean | Promise<boolean> = () => true, waiting?: () => ReadonlyMap<string, number>, checkLimitMs?: number) {
  let now = 0
  const released: Array<{ domain: string; strings: number }> = []
  const asked: string[] = []
  const held = new HeldOrganizations({
    log: silentLogger(),
    now: () => now,
    random: () => 1, // the top of each jittered window, so delays are exact
    canReport: async (domain) => (asked.push(domain), canReport(domain)),
    release: (domain, strings) => released.push({ domain, strings }),
    ...(waiting ? { waiting } : {}),
    ...(checkLimitMs ? { checkLimitMs } : {}),
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
    expect(held.byCause()).toEqual({ disconnected: { strings: 1, organizations: 1 }, forbidden: { strings: 3, organizations: 1 }, unavailable: { strings: 0, organizations: 0 } })
  })

  it("does not try an organization again before the Retry-After of the answer that held it (up to ten minutes)", async () => {
    const { held, released, at } = setup()
    held.holdDecisions([{ job: job(1), port: 'approved' }], '429', 'unavailable', 45_000)
    expect(held.list()[0]!.nextTryAt).toBe(45_000) // not the first back-off's 1 s
    at(44_999)
    await held.tick()
    expect(released).toHaveLength(0)
    at(45_000)
    await held.tick()
    expect(released).toHaveLength(1)
    // Strings held again meanwhile with a longer one push the try out; a shorter one does not
    // bring it in, and an absurd one counts as ten minutes.
    held.holdJobs([job(2)], '429', 'unavailable', 30_000)
    const first = held.list()[0]!.nextTryAt!
    held.holdJobs([job(3)], '429', 'unavailable', 1_000)
    expect(held.list()[0]!.nextTryAt).toBe(first)
    held.holdJobs([job(4)], '429', 'unavailable', 86_400_000)
    expect(held.list()[0]!.nextTryAt).toBe(45_000 + 600_000)
  })

  for (const [cause, cap] of [['forbidden', 60_000], ['unavailable', 15_000]] as const) {
  it(`tries a ${cause} organization again after its back-off, doubling up to ${cap / 1000} s, and starts over after a success`, async () => {
    const { held, released, at } = setup()
    const waits: number[] = []
    let t = 0
    for (let i = 0; i < 9; i++) {
      held.holdDecisions([{ job: job(i), port: 'approved' }], cause === 'forbidden' ? '403' : '503', cause)
      const next = held.list()[0]!.nextTryAt!
      waits.push(next - t)
      at(next - 1)
      await held.tick()
      expect(released).toHaveLength(i) // not yet
      at((t = next))
      await held.tick()
      expect(released).toHaveLength(i + 1)
      // No backlog to ask: the strings that went through the hold since the last try.
      expect(released[i]!.strings).toBe(1)
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000].map((w) => Math.min(w, cap)))
    held.succeeded('acme')
    held.holdDecisions([{ job: job(99), port: 'approved' }], '403', cause)
    expect(held.list()[0]!.nextTryAt! - t).toBe(1000)
  })
  }

  it('a refusal (403) replaces unavailable as the cause; a token not had (the token endpoint may be down with the rest) does not', async () => {
    const { held } = setup()
    held.holdDecisions([{ job: job(1), port: 'approved' }], '503', 'unavailable')
    held.holdDecisions([{ job: job(2), port: 'approved' }], 'no token', 'disconnected')
    expect(held.cause('acme')).toBe('unavailable')
    held.holdDecisions([{ job: job(3), port: 'approved' }], '403', 'forbidden')
    expect([held.cause('acme'), held.list()[0]!.reason]).toEqual(['forbidden', '403'])
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
    // Let go: its strings are tried (not held), and it is still listed until one is reported.
    expect(held.cause('acme')).toBeUndefined()
    expect(held.list()).toEqual([{ domain: 'acme', cause: 'disconnected', reason: 'not connected', since: 0, strings: 1, nextTryAt: undefined }])
    held.succeeded('acme')
    expect(held.count()).toBe(0)
    expect(held.list()).toEqual([])
  })

  it('keeps an organization listed across a try, with its first since, until a status update goes through', async () => {
    const { held, released, at } = setup()
    at(5000)
    held.holdJobs([job(1), job(2), job(3)], '403: Forbidden', 'forbidden')
    at(6000)
    await held.tick()
    expect(released).toEqual([{ domain: 'acme', strings: 3 }])
    // While it is tried: not held (its strings must really be tried), but still listed, as it was.
    expect(held.cause('acme')).toBeUndefined()
    expect(held.retryAt('acme')).toBeUndefined()
    expect(held.list()).toEqual([{ domain: 'acme', cause: 'forbidden', reason: '403: Forbidden', since: 5000, strings: 3, nextTryAt: undefined }])
    expect(held.count()).toBe(3)
    expect(held.byCause().forbidden).toEqual({ strings: 3, organizations: 1 })
    // Refused again: held again, since unchanged; without a backlog to ask, the count is of this
    // try's refusals (a string refused at every try is not counted once per try).
    at(6500)
    held.holdJobs([job(1)], '403: Forbidden', 'forbidden')
    expect(held.cause('acme')).toBe('forbidden')
    expect(held.list()).toEqual([{ domain: 'acme', cause: 'forbidden', reason: '403: Forbidden', since: 5000, strings: 1, nextTryAt: 6500 + 2000 }])
    // Tried again, and this time a status update goes through: no longer listed.
    at(8500)
    await held.tick()
    expect(held.list()[0]).toMatchObject({ since: 5000, nextTryAt: undefined })
    held.succeeded('acme')
    expect(held.list()).toEqual([])
    expect(held.count()).toBe(0)
    expect(held.byCause().forbidden).toEqual({ strings: 0, organizations: 0 })
    // A later hold starts a new since, a new count and a short wait.
    at(20_000)
    held.holdJobs([job(9)], '403: Forbidden', 'forbidden')
    expect(held.list()).toEqual([{ domain: 'acme', cause: 'forbidden', reason: '403: Forbidden', since: 20_000, strings: 1, nextTryAt: 21_000 }])
  })

  it('shows the strings the backlog has waiting for a listed organization, held or being tried', async () => {
    const waiting = new Map<string, number>([['acme', 200_000]])
    let asked = 0
    const { held, released, at } = setup(() => true, () => (asked++, waiting))
    held.holdJobs([job(1), job(2)], '403', 'forbidden')
    held.holdJobs([job(3, 'beta')], 'no token', 'disconnected')
    // The backlog knows acme's strings; beta's are not known to it (yet): those counted through the hold.
    expect(held.list().map((h) => [h.domain, h.strings])).toEqual([['acme', 200_000], ['beta', 1]])
    expect(held.count()).toBe(200_001)
    expect(held.count('acme')).toBe(200_000)
    expect(held.byCause()).toEqual({ forbidden: { strings: 200_000, organizations: 1 }, disconnected: { strings: 1, organizations: 1 }, unavailable: { strings: 0, organizations: 0 } })
    // The backlog is asked once per view, not once per organization.
    for (const view of [() => held.list(), () => held.count(), () => held.byCause()]) {
      asked = 0
      view()
      expect(asked).toBe(1)
    }
    at(1000)
    await held.tick()
    expect(released).toEqual([{ domain: 'acme', strings: 200_000 }, { domain: 'beta', strings: 1 }])
    // Being tried, a chunk taken back into work: the rest still waits, and is shown.
    waiting.set('acme', 199_500)
    expect(held.list()[0]).toMatchObject({ domain: 'acme', strings: 199_500, nextTryAt: undefined })
    held.holdJobs([job(1)], '403', 'forbidden')
    waiting.set('acme', 200_000)
    expect(held.count('acme')).toBe(200_000)
  })

  it('does not count a string once per try where the backlog has lost sight of it (a BullMQ probe emptied the hash)', async () => {
    // Ten strings refused at every try, an hour long; with BullMQ a probe takes all ten back out
    // of Redis, so the backlog knows of none of them until they are held again.
    // The hash as last read: listed, empty (the read lags behind the holds).
    const waiting = new Map<string, number>([['acme', 0]])
    const { held, at } = setup(() => true, () => waiting)
    const ten = Array.from({ length: 10 }, (_, i) => job(i))
    held.holdJobs(ten, '403', 'forbidden')
    for (let i = 0; i < 60; i++) {
      at(held.retryAt('acme')!)
      await held.tick()
      // Being tried: still listed, with the ten.
      expect(held.list()).toMatchObject([{ domain: 'acme', strings: 10, nextTryAt: undefined }])
      held.holdJobs(ten, '403', 'forbidden')
      expect(held.count()).toBe(10)
    }
  })

  it('gives a new since to an organization refused after a status update went through while it was held', async () => {
    const { held, at } = setup()
    held.holdJobs([job(1)], '403', 'forbidden')
    // A report sent before the hold goes through after it: it stays held until its own try...
    at(500)
    held.succeeded('acme')
    expect(held.cause('acme')).toBe('forbidden')
    at(1000)
    await held.tick()
    // ...and, refused then, it is a new hold.
    at(1200)
    held.holdJobs([job(1)], '403', 'forbidden')
    expect(held.list()[0]).toMatchObject({ since: 1200 })
  })

  it('forgets an organization being tried that was neither reported for nor refused for a back-off cap', async () => {
    // Strings of it may still wait (with BullMQ, held again by another instance, which heard the
    // refusal): this instance's try is over all the same.
    const waiting = new Map<string, number>([['acme', 10]])
    const { held, at } = setup(() => true, () => waiting)
    held.holdJobs([job(1)], '403', 'forbidden')
    at(1000)
    await held.tick()
    at(1000 + 59_999)
    await held.tick()
    expect(held.list()).toHaveLength(1)
    at(1000 + 60_000)
    await held.tick()
    expect(held.list()).toEqual([])
    // No status update went through: a new hold keeps the first since.
    at(90_000)
    held.holdJobs([job(1)], '403', 'forbidden')
    expect(held.list()[0]).toMatchObject({ since: 0 })
  })

  it('leaves alone an organization held anew while an earlier one was asked for a token', async () => {
    // alpha (disconnected) comes first in the walk, and its second canReport() is slow.
    let clock = 0
    let calls = 0
    let answer!: (ok: boolean) => void
    const held = new HeldOrganizations({
      log: silentLogger(),
      now: () => clock,
      random: () => 1,
      canReport: () => (++calls === 1 ? Promise.resolve(false) : new Promise<boolean>((r) => (answer = r))),
      release: () => undefined,
    })
    held.holdJobs([job(1, 'alpha')], 'no token', 'disconnected')
    held.holdJobs([job(2, 'beta')], '403', 'forbidden')
    clock = 1000
    await held.tick() // alpha: no token yet; beta let go for a try
    expect(held.list().find((h) => h.domain === 'beta')?.nextTryAt).toBeUndefined()
    // Over a minute later: alpha is asked again, slowly...
    clock = 62_000
    const ticking = held.tick()
    // ...and meanwhile beta's try was answered, and beta refused again: held anew.
    held.succeeded('beta')
    held.holdJobs([job(2, 'beta')], '403', 'forbidden')
    answer(false)
    await ticking
    expect(held.cause('beta')).toBe('forbidden')
    expect(held.list().map((h) => h.domain)).toContain('beta')
  })

  it("lets an organization go on its own back-off while another's token request hangs", async () => {
    // One organization's trouble must not cost another anything: alpha's token request (a refresh
    // of up to API_TIMEOUT_MS, a token store read with no limit) hangs; beta is tried all the same.
    const { held, released, asked, at } = setup((domain) => (domain === 'alpha' ? new Promise<boolean>(() => {}) : true))
    held.holdJobs([job(1, 'alpha')], 'no token', 'disconnected')
    held.holdJobs([job(2, 'beta')], '403', 'forbidden')
    at(1000)
    void held.tick()
    expect(released).toEqual([{ domain: 'beta', strings: 1 }])
    // Refused again and due again: let go again; alpha, still being asked, is not asked twice.
    held.holdJobs([job(2, 'beta')], '403', 'forbidden')
    at(3000)
    void held.tick()
    expect(released).toEqual([{ domain: 'beta', strings: 1 }, { domain: 'beta', strings: 1 }])
    expect(asked).toEqual(['alpha'])
  })

  it('counts a token request that has not answered within its limit as a failed try, and asks again only once it has ended', async () => {
    let answer!: (ok: boolean) => void
    const { held, released, asked, at } = setup(() => new Promise<boolean>((r) => (answer = r)), undefined, 20)
    held.holdJobs([job(1)], 'no token', 'disconnected')
    at(1000)
    await held.tick() // ends with the limit (20 ms), not with the request
    expect(released).toEqual([])
    expect(held.retryAt('acme')).toBe(1000 + 2000) // the next back-off
    at(3000)
    await held.tick()
    expect(asked).toHaveLength(1) // the first request still runs: held on, not asked again
    expect(held.cause('acme')).toBe('disconnected')
    answer(true) // too late for its try
    await new Promise((r) => setTimeout(r, 0))
    expect(released).toEqual([])
    const next = held.tick()
    answer(true)
    await next
    expect(asked).toHaveLength(2)
    expect(released).toEqual([{ domain: 'acme', strings: 1 }])
  })

  it('forgets since and back-off with a try that expires with nothing of it waiting', async () => {
    const waiting = new Map<string, number>()
    const { held, at } = setup(() => true, () => waiting)
    for (let t = 0, i = 0; i < 5; i++) {
      held.holdJobs([job(1)], '403', 'forbidden')
      at((t = held.retryAt('acme')!))
      await held.tick()
    }
    const triedAt = held.list()[0]!
    expect(triedAt.nextTryAt).toBeUndefined()
    // Another instance took its strings and had them reported: nothing waits, no answer here.
    at(200_000)
    await held.tick()
    expect(held.list()).toEqual([])
    at(900_000)
    held.holdJobs([job(1)], '403', 'forbidden')
    expect(held.list()[0]).toMatchObject({ since: 900_000, nextTryAt: 901_000 })
  })

  it('asks for a token knowing whose strings the domain holds, and forgets the domain once every one of them has moved to another', async () => {
    const seen: Array<readonly string[]> = []
    let now = 0
    const held = new HeldOrganizations({ log: silentLogger(), now: () => now, random: () => 1, canReport: async (_domain, organizations) => (seen.push(organizations), false), release: () => undefined })
    const of = (stringId: number, organizationId: string) => ({ ...job(stringId), organizationId })
    held.holdJobs([of(1, '1'), of(2, '2')], 'no token', 'disconnected')
    held.holdDecisions([{ job: of(3, '1'), port: 'approved' }], 'no token', 'disconnected')
    now = 120_000
    await held.tick()
    expect(seen).toEqual([['1', '2']])
    held.movedAway('acme', '1')
    expect(held.cause('acme')).toBe('disconnected')
    held.movedAway('acme', '2')
    expect(held.cause('acme')).toBeUndefined()
    expect(held.list()).toEqual([])
    // A domain that held none of the organization's strings is left alone.
    held.holdJobs([of(4, '5')], 'no token', 'disconnected')
    held.movedAway('acme', '1')
    expect(held.count('acme')).toBe(1)
  })

  it('gives everything up on clear (it stays in the journal for the next start)', () => {
    const { held } = setup()
    held.holdJobs([job(1), job(2)], 'x', 'disconnected')
    expect(held.clear()).toBe(2)
    expect(held.count()).toBe(0)
    expect(held.list()).toEqual([])
  })
})
