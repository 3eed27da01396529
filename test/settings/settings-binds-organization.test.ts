// The organization id and domain a verified settings token names together (platform notes:
// `domain` and `context.organization_id`, signed with the client secret) bind the organization to
// that domain when it is connected here: the token got at connection may not say which
// organization it is (its claims are not in the interface document), and without a binding a
// delivery's unsigned domain header would be believed. A domain not connected here (spelled
// otherwise than the connected one, say) binds nothing, a domain bound to another organization is
// never taken, and an organization connected again under a new domain follows its tokens there.
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

const grant = () => ({ access_token: `at-${randomBytes(4).toString('hex')}`, token_type: 'bearer', expires_in: 7200, refresh_token: `rt-${randomBytes(4).toString('hex')}` })

async function setup(connected: string[] = ['acme']) {
  const config = loadConfig({}, { authUrl: 'http://auth.test', clientId: 'cid', clientSecret: CLIENT_SECRET, baseUrl: 'https://worker.test', storeUrl: 'memory://' })
  const tokens = new TokenManager({ config, store: new Keyv(), log: silentLogger(), key: randomBytes(32) })
  for (const domain of connected) await tokens.saveTokenResponse(domain, grant())
  h = await startHarness({}, [makeTarget('qa-gate')], { bindOrganization: (id, domain) => tokens.bindFromSettings(id, domain) })
  const open = async (token: string) => (await fetch(`${h!.url}/steps/qa-gate/settings?stepId=41&jwtToken=${encodeURIComponent(token)}`)).status
  return { tokens, open }
}

describe('settings tokens bind an organization to its domain', () => {
  it('bind an organization to the connected domain its token names, and deliveries then go under it whatever their header says', async () => {
    const { tokens, open } = await setup()
    expect(await open(await signToken())).toBe(200)
    expect(await tokens.domainOf(ORG)).toBe('acme')
    expect(await tokens.organizationOf('acme')).toBe(ORG)
    expect(await createDomainResolver(tokens, silentLogger())(ORG, 'elsewhere')).toBe('acme')
  })

  it('bind nothing to a domain not connected here (spelled otherwise than the connected one)', async () => {
    const { tokens, open } = await setup()
    expect(await open(await signToken({ domain: 'acme.example.com' }))).toBe(200)
    expect(await tokens.domainOf(ORG)).toBeUndefined()
    expect(await tokens.organizationOf('acme.example.com')).toBeUndefined()
  })

  it('never take a domain bound to another organization; move one connected again under a new domain', async () => {
    const { tokens, open } = await setup(['acme', 'acme-new', 'globex'])
    await tokens.rememberOrganization('999', 'globex')
    expect(await open(await signToken({ org: 300, domain: 'globex' }))).toBe(200)
    expect(await tokens.domainOf('300')).toBeUndefined()
    expect(await tokens.organizationOf('globex')).toBe('999')

    await tokens.rememberOrganization(ORG, 'acme')
    expect(await open(await signToken({ domain: 'acme-new' }))).toBe(200)
    expect(await tokens.domainOf(ORG)).toBe('acme-new')
    expect(await tokens.organizationOf('acme-new')).toBe(ORG)
  })

  it("take a domain whose earlier organization moved to another domain: the domain's old link to it does not count", async () => {
    const { tokens, open } = await setup(['acme', 'acme-new'])
    await tokens.rememberOrganization(ORG, 'acme')
    await tokens.rememberOrganization(ORG, 'acme-new')
    // Another organization has acme now, and acme was connected again for it (its token names no organization).
    await tokens.saveTokenResponse('acme', grant())
    expect(await open(await signToken({ org: 300, domain: 'acme' }))).toBe(200)
    expect(await tokens.domainOf('300')).toBe('acme')
    expect(await tokens.organizationOf('acme')).toBe('300')
    expect(await createDomainResolver(tokens, silentLogger())('300', 'acme')).toBe('acme')
    // The organization that moved keeps its new domain.
    expect(await tokens.domainOf(ORG)).toBe('acme-new')
    expect(await createDomainResolver(tokens, silentLogger())(ORG, 'acme')).toBe('acme-new')
  })

  it('bind nothing for a token it refuses', async () => {
    const { tokens, open } = await setup()
    expect(await open(await signToken({ secret: 'another-secret-of-at-least-32-bytes!!' }))).toBe(401)
    expect(await tokens.domainOf(ORG)).toBeUndefined()
    expect(await tokens.organizationOf('acme')).toBeUndefined()
  })
})
