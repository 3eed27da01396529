// What an operator reads when a delivery's unsigned domain header disagrees with what the
// organization was connected with: one warning per (organization, header), naming both, with a
// hostile header cut short; the memory of what was warned is bounded. And directories that know
// only one direction of the binding.
import { describe, expect, it } from 'vitest'
import { createDomainResolver } from '../../src/platform/organization-domains.js'
import { createLogger } from '../../src/util/logger.js'

function capture() {
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
  return { log, lines }
}

const bound = (bindings: Record<string, string>) => ({ domainOf: async (id: string) => bindings[id] })

describe('domain header warnings', () => {
  it('names the organization, its domain and the header it ignores', async () => {
    const { log, lines } = capture()
    const resolve = createDomainResolver({ ...bound({ '1001': 'acme' }), organizationOf: async () => undefined }, log)
    expect(await resolve('1001', 'acme')).toBe('acme')
    expect(lines).toEqual([])
    expect(await resolve('1001', 'evil')).toBe('acme')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ organization: '1001', domain: 'acme', header: 'evil' })
    expect(lines[0]!.msg).toMatch(/another domain/)
  })

  it("names the organization that owns a header's domain", async () => {
    const { log, lines } = capture()
    const resolve = createDomainResolver({ domainOf: async () => undefined, organizationOf: async (d: string) => (d === 'acme' ? '1001' : undefined) }, log)
    expect(await resolve('2002', 'acme')).toBe('2002')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ organization: '2002', header: 'acme', owner: '1001' })
    expect(lines[0]!.msg).toMatch(/another organization/)
  })

  it('cuts a long header short in the log', async () => {
    const { log, lines } = capture()
    const long = 'x'.repeat(200) // a valid domain, longer than a log line needs
    const resolveBound = createDomainResolver(bound({ '1001': 'acme' }), log)
    await resolveBound('1001', long)
    const resolveOwned = createDomainResolver({ organizationOf: async () => '1001' }, log)
    await resolveOwned('2002', long)
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(line.header).toBe('x'.repeat(100))
  })

  it('warns once per organization and header, and again for each new pair', async () => {
    const { log, lines } = capture()
    const resolve = createDomainResolver(bound({ '1001': 'acme' }), log)
    await resolve('1001', 'evil')
    await resolve('1001', 'other')
    await resolve('1001', 'evil')
    await resolve('1001', 'other')
    expect(lines.map((l) => l.header)).toEqual(['evil', 'other'])
  })

  it('forgets what it warned about after a thousand pairs, so its memory stays bounded', async () => {
    const { log, lines } = capture()
    const resolve = createDomainResolver(bound({ '1001': 'acme' }), log)
    for (let i = 0; i < 1000; i++) await resolve('1001', `evil${i}`)
    await resolve('1001', 'evil0')
    expect(lines).toHaveLength(1000) // all remembered
    await resolve('1001', 'evil1000') // the memory is full: it starts over
    await resolve('1001', 'evil0')
    expect(lines.slice(1000).map((l) => l.header)).toEqual(['evil1000', 'evil0'])
  })

  it('uses the header when the directory keeps no bindings by organization', async () => {
    const { log } = capture()
    const resolve = createDomainResolver({ organizationOf: async (d: string) => (d === 'acme' ? '1001' : undefined) }, log)
    expect(await resolve('1001', 'acme')).toBe('acme')
    expect(await resolve('1001', 'beta')).toBe('beta')
  })

  it('uses the header when the directory keeps no bindings by domain', async () => {
    const { log } = capture()
    const resolve = createDomainResolver(bound({}), log)
    expect(await resolve('1001', 'Acme')).toBe('acme')
    const none = createDomainResolver({}, log)
    expect(await none('1001', 'beta')).toBe('beta')
  })
})
