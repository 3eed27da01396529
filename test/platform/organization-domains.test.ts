// The domain a delivery is reported under: bound at connection, never taken from a header that
// disagrees, never one bound to another organization.
import { describe, expect, it } from 'vitest'
import { byDomain, createCurrentDomain, createDomainResolver } from '../../src/platform/organization-domains.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger } from '../../src/util/logger.js'

function directory(bindings: Record<string, string>) {
  const byDomain = Object.fromEntries(Object.entries(bindings).map(([id, d]) => [d, id]))
  return { domainOf: async (id: string) => bindings[id], organizationOf: async (d: string) => byDomain[d] }
}

function capture() {
  const lines: string[] = []
  const log = createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(l) } as never })
  return { log, lines }
}

describe('createDomainResolver', () => {
  it('uses the bound domain and ignores (and logs once) a header that disagrees', async () => {
    const { log, lines } = capture()
    const resolve = createDomainResolver(directory({ '1001': 'acme' }), log)
    expect(await resolve('1001', 'acme')).toBe('acme')
    expect(await resolve('1001', 'evil')).toBe('acme')
    expect(await resolve('1001', 'evil')).toBe('acme')
    expect(lines.filter((l) => l.includes('another domain'))).toHaveLength(1)
  })
  it("never uses a domain bound to another organization", async () => {
    const { log } = capture()
    const resolve = createDomainResolver(directory({ '1001': 'acme' }), log)
    expect(await resolve('2002', 'acme')).toBe('2002')
  })
  it("never uses an organization's old domain once another organization has connected it (the binding says whose it is now)", async () => {
    const { log } = capture()
    // 2002 was connected as acme and moved; 1001 connected acme since. A link of 2002's that was not
    // dropped (another instance's, or written before) does not count.
    const resolve = createDomainResolver({ domainOf: async (id: string) => ({ '2002': 'acme', '1001': 'acme' } as Record<string, string>)[id], organizationOf: async (d: string) => (d === 'acme' ? '1001' : undefined) }, log)
    expect(await resolve('1001', 'acme')).toBe('acme')
    expect(await resolve('2002', 'beta')).toBe('beta')
    expect(await resolve('2002', 'acme')).toBe('2002')
  })
  it('uses the header for an organization not bound yet, and the id when there is no header', async () => {
    const { log } = capture()
    const resolve = createDomainResolver(directory({}), log)
    expect(await resolve('3003', 'Beta')).toBe('beta')
    expect(await resolve('3003', '')).toBe('3003')
  })
})

describe('createCurrentDomain', () => {
  it('puts strings stamped with an earlier domain under the domain their organization has now, at once', async () => {
    const ids: Record<string, string> = { '1001': 'acme' }
    const owners: Record<string, string> = { acme: '1001' }
    const current = createCurrentDomain({ domainOf: async (id) => ids[id], organizationOf: async (d) => owners[d] })
    expect(await current('1001', 'acme')).toBe('acme')
    // Reconnected under another domain (the old one's link to it stays, as the token manager keeps it).
    ids['1001'] = 'acme-new'
    owners['acme-new'] = '1001'
    expect(await current('1001', 'acme')).toBe('acme-new')
    // Not connected when they arrived: the id, or a header's domain nobody owns, until it connects.
    expect(await current('2002', '2002')).toBe('2002')
    expect(await current('2002', 'beta')).toBe('beta')
    // The header's domain connected by another organization since: never under it.
    owners.beta = '3003'
    expect(await current('2002', 'beta')).toBe('2002')
    ids['2002'] = 'gamma'
    owners.gamma = '2002'
    expect(await current('2002', '2002')).toBe('gamma')
    expect(await current('2002', 'beta')).toBe('gamma')
  })
  it('leaves the stamp as it is without a directory, or for strings without an organization id', async () => {
    expect(await createCurrentDomain({})('1001', 'acme')).toBe('acme')
    expect(await createCurrentDomain({ domainOf: async () => 'other' })('', 'acme')).toBe('acme')
  })
})

describe('byDomain', () => {
  it('splits a group whose strings parted (two organizations that shared a stamped domain), keeping their order; one domain is the group itself', () => {
    const j = (stringId: number, domain: string) => ({ stringId, domain }) as Job
    const same = [j(1, 'a'), j(2, 'a')]
    expect(byDomain(same)[0]).toBe(same)
    expect(byDomain([j(1, 'a'), j(2, 'b'), j(3, 'a')]).map((p) => p.map((x) => `${x.domain}${x.stringId}`))).toEqual([['a1', 'a3'], ['b2']])
    expect(byDomain([])).toEqual([[]])
  })
})
