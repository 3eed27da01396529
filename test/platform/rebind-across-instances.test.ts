// Two instances sharing a store: the organization reconnects under a new domain at instance A;
// instance B puts its strings under the new domain within TOKEN_READ_CACHE_MS (its id -> domain
// cache kept them under the old one for the life of the process; the old domain's own link to the
// organization stays, so nothing else told B).
import { randomBytes } from 'node:crypto'
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { TokenManager } from '../../src/platform/token-manager.js'
import { createRebinder } from '../../src/platform/organization-domains.js'
import { createLogger } from '../../src/util/logger.js'
import type { Job } from '../../src/protocol/job.js'

describe('rebind across instances', () => {
  it('instance B sees a move made at instance A', async () => {
    const store = new Keyv()
    const key = randomBytes(32)
    const log = createLogger({ level: 'silent' })
    const config = loadConfig({}, { storeUrl: 'memory://' })
    const clock = { now: 1_000_000 }
    const a = new TokenManager({ config, store, log, key, now: () => clock.now })
    const b = new TokenManager({ config, store, log, key, now: () => clock.now })
    await a.rememberOrganization('200000', 'old')
    expect(await b.domainOf("200000")).toBe("old") // B has seen the organization (a delivery, a run)
    await a.rememberOrganization('200000', 'new') // reconnected at A under another domain
    clock.now += 5_000 // B's strings of it run (or its held domain is tried) a few seconds later
    const left: string[] = []
    const rebinder = createRebinder(b, log, (d, o) => void left.push(`${d}|${o}`))
    const job = { organizationId: '200000', domain: 'old' } as Job
    await rebinder.rebind([job])
    expect(job.domain).toBe('new')
    expect(await rebinder.moved('old', ['200000'])).toBe(true)
  })
})
