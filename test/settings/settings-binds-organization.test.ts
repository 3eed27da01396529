// The organization id and domain a verified settings token names together (platform notes:
// `domain` and `context.organization_id`, signed with the client secret) bind the organization to
// its domain where neither is bound yet: the token got at connection may not say which
// organization it is (its claims are not in the interface document), and without a binding a
// delivery's unsigned domain header would be believed. A binding made at connection is never
// changed here, and a domain bound to another organization is never taken.
import { randomBytes } from 'node:crypto'
import Keyv from 'keyv'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { TokenManager } from '../../src/platform/token-manager.js'
import { createDomainResolver } from '../../src/platform/organization-domains.js'
import { silentLogger } from '../../src/util/logger.js'
import { CLIENT_SECRET, makeTarget, ORG, signToken, startHarness, type Harness } from './helpers.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

async function setup() {
  const config = loadConfig({}, { authUrl: 'http://auth.test', clientId: 'cid', clientSecret: CLIENT_SECRET, baseUrl: 'https://worker.test', storeUrl: 'memory://' })
  const tokens = new TokenManager({ config, store: new Keyv(), log: silentLogger(), key: randomBytes(32) })
  h = await startHarness({}, [makeTarget('qa-gate')], { bindOrganization: (id, domain) => tokens.bindIfUnbound(id, domain) })
  const open = async (token: string) => (await fetch(`${h!.url}/steps/qa-gate/settings?stepId=41&jwtToken=${encodeURIComponent(token)}`)).status
  return { tokens, open }
}

describe('settings tokens bind an organization to its domain', () => {
  it('binds where neither is bound, and deliveries then go under that domain whatever their header says', async () => {
    const { tokens, open } = await setup()
    expect(await open(await signToken())).toBe(200)
    expect(await tokens.domainOf(ORG)).toBe('acme')
    expect(await tokens.organizationOf('acme')).toBe(ORG)
    expect(await createDomainResolver(tokens, silentLogger())(ORG, 'elsewhere')).toBe('acme')
  })

  it('never changes a binding made at connection, nor takes a domain bound to another organization', async () => {
    const { tokens, open } = await setup()
    await tokens.rememberOrganization(ORG, 'acme-old')
    expect(await open(await signToken())).toBe(200)
    expect(await tokens.domainOf(ORG)).toBe('acme-old')
    expect(await tokens.organizationOf('acme')).toBeUndefined()

    await tokens.rememberOrganization('999', 'globex')
    expect(await open(await signToken({ org: 300, domain: 'globex' }))).toBe(200)
    expect(await tokens.domainOf('300')).toBeUndefined()
    expect(await tokens.organizationOf('globex')).toBe('999')
  })

  it('binds nothing for a token it refuses', async () => {
    const { tokens, open } = await setup()
    expect(await open(await signToken({ secret: 'another-secret-of-at-least-32-bytes!!' }))).toBe(401)
    expect(await tokens.domainOf(ORG)).toBeUndefined()
    expect(await tokens.organizationOf('acme')).toBeUndefined()
  })
})
