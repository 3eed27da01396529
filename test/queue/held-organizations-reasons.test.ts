// Held organizations, what the operator is told and which reason wins: a hold is announced once,
// with advice that fits its cause (reinstall or permissions for a refusal, /oauth/start for a missing
// token); a refusal is the more precise reason once a token was had; only a disconnected
// organization waits for a token before it is let go; a tick never lets the same strings go twice.
import { describe, expect, it } from 'vitest'
import { HeldOrganizations } from '../../src/queue/held-organizations.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger } from '../../src/util/logger.js'

const job = (stringId: number, domain = 'acme'): Job =>
  ({ key: `k${stringId}`, organizationId: '1', domain, moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId, revision: 1, batchId: 'b', attempts: 0 }) as unknown as Job

function setup(canReport: (domain: string) => Promise<boolean> = async () => true) {
  let now = 0
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  const released: Array<{ domain: string; strings: number }> = []
  const asked: string[] = []
  const held = new HeldOrganizations({
    log,
    now: () => now,
    random: () => 1,
    canReport: (domain) => (asked.push(domain), canReport(domain)),
    release: (domain, strings) => released.push({ domain, strings }),
  })
  return { held, lines, released, asked, at: (t: number) => (now = t) }
}

describe('HeldOrganizations: reasons and warnings', () => {
  it('tells the operator once per hold, with advice for the cause', () => {
    const { held, lines } = setup()
    held.holdDecisions([{ job: job(1), port: 'ok' }], '403: Forbidden', 'forbidden')
    held.holdDecisions([{ job: job(2), port: 'ok' }], '403: Forbidden', 'forbidden')
    held.holdJobs([job(3, 'beta')], 'no token stored', 'disconnected')
    const warnings = lines.filter((l) => l.level === 40)
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toMatchObject({ domain: 'acme', cause: 'forbidden', retryInMs: 1000 })
    expect(warnings[0]!.msg).toContain('403: Forbidden')
    expect(warnings[0]!.msg).toMatch(/still installed/)
    expect(warnings[0]!.msg).not.toContain('/oauth/start')
    expect(warnings[1]).toMatchObject({ domain: 'beta', cause: 'disconnected', retryInMs: 1000 })
    expect(warnings[1]!.msg).toContain('no token stored')
    expect(warnings[1]!.msg).toContain('/oauth/start')
  })

  it('holds for a missing token unless told otherwise', () => {
    const { held } = setup()
    held.hold('acme', 2, 'no token')
    held.holdJobs([job(1, 'beta')], 'no token')
    expect(held.cause('acme')).toBe('disconnected')
    expect(held.cause('beta')).toBe('disconnected')
  })

  it('holds nothing, and announces nothing, for an empty list', () => {
    const { held, lines } = setup()
    held.holdJobs([], 'no token', 'disconnected')
    held.holdDecisions([], '403', 'forbidden')
    expect(held.list()).toEqual([])
    expect(lines).toEqual([])
  })

  it('lets a refusal replace a missing token as the reason, never the other way round', () => {
    const { held } = setup()
    held.hold('acme', 1, 'no token', 'disconnected')
    held.hold('acme', 1, 'still no token', 'disconnected')
    expect(held.list()[0]).toMatchObject({ cause: 'disconnected', reason: 'no token', strings: 2 })
    held.hold('acme', 0, '403: Forbidden', 'forbidden')
    expect(held.list()[0]).toMatchObject({ cause: 'forbidden', reason: '403: Forbidden', strings: 2 })
    held.hold('acme', 1, 'no token again', 'disconnected')
    expect(held.list()[0]).toMatchObject({ cause: 'forbidden', reason: '403: Forbidden', strings: 3 })
    // A second refusal keeps the first one's words.
    held.hold('acme', 1, '401 after refresh', 'forbidden')
    expect(held.list()[0]).toMatchObject({ cause: 'forbidden', reason: '403: Forbidden', strings: 4 })
  })

  it('tries a refused organization again without asking for a token', async () => {
    const { held, released, asked, at } = setup(async () => false)
    held.hold('acme', 3, '403', 'forbidden')
    at(1000)
    await held.tick()
    expect(asked).toEqual([])
    expect(released).toEqual([{ domain: 'acme', strings: 3 }])
  })

  it('keeps holding an organization whose token check fails', async () => {
    const { held, released, at } = setup(async () => {
      throw new Error('store unreachable')
    })
    held.hold('acme', 1, 'no token', 'disconnected')
    at(1000)
    await held.tick()
    expect(released).toEqual([])
    expect(held.count('acme')).toBe(1)
  })

  it('says so when it lets an organization go', async () => {
    const { held, lines, at } = setup()
    held.hold('acme', 5, '403', 'forbidden')
    at(1000)
    await held.tick()
    const info = lines.filter((l) => l.level === 30)
    expect(info).toHaveLength(1)
    expect(info[0]).toMatchObject({ domain: 'acme', cause: 'forbidden', strings: 5 })
    expect(info[0]!.msg).toMatch(/held strings/)
  })

  it('lets the same strings go once when ticks overlap', async () => {
    let answer: (ok: boolean) => void = () => {}
    const { held, released, asked, at } = setup(() => new Promise<boolean>((resolve) => (answer = resolve)))
    held.hold('acme', 2, 'no token', 'disconnected')
    at(1000)
    const first = held.tick()
    const second = held.tick()
    await second
    expect(asked).toHaveLength(1)
    answer(true)
    await first
    await held.tick()
    expect(released).toEqual([{ domain: 'acme', strings: 2 }])
  })
})
