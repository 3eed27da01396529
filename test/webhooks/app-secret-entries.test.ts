// APP_SECRET entries beyond the common forms: a scoped secret may end in base64 padding, an id is
// at most 64 characters of [A-Za-z0-9_.-], and the start-up summary names each organization with
// a secret of its own once (never a secret).
import { describe, expect, it } from 'vitest'
import { parseAppSecrets, scopedOrganizations } from '../../src/webhooks/app-secrets.js'

describe('APP_SECRET entries', () => {
  it('keeps base64 padding at the end of a scoped secret', () => {
    expect(parseAppSecrets(['1001=c2VjcmV0IQ==', 'org_2=abc='])).toEqual([
      { organizationId: '1001', secret: 'c2VjcmV0IQ==' },
      { organizationId: 'org_2', secret: 'abc=' },
    ])
  })

  it('reads an id of up to 64 characters as scoped, and a longer or odd one as part of a plain secret', () => {
    const id64 = 'a'.repeat(64)
    expect(parseAppSecrets([`${id64}=s`])).toEqual([{ organizationId: id64, secret: 's' }])
    expect(parseAppSecrets([`${id64}b=s`, 'org/1=s', 'org 1=s', 'Org-1.x=s'])).toEqual([
      { secret: `${id64}b=s` },
      { secret: 'org/1=s' },
      { secret: 'org 1=s' },
      { organizationId: 'Org-1.x', secret: 's' },
    ])
  })

  it('names the organizations with their own secret once each, and no secret', () => {
    const secrets = parseAppSecrets(['1001=a', '1001=b', '1002=c', 'plain'])
    expect(scopedOrganizations(secrets)).toEqual(['1001', '1002'])
    expect(scopedOrganizations(parseAppSecrets(['plain']))).toEqual([])
  })
})

// `APP_SECRET=1001=${SECRET_1001},1002=${SECRET_1002}` with one variable unset leaves `1001=`:
// taken as a plain secret, it would be a secret anyone who knows the organization's id can sign
// with, valid for every organization.
describe('an entry whose secret is missing (ORG_ID= with nothing after it)', () => {
  it('is never a plain secret: a body signed with "1001=" is refused for every organization', async () => {
    const { decodeBatch } = await import('../../src/webhooks/decode-batch.js')
    const { signBody } = await import('../../src/protocol/webhook-signature.js')
    expect(parseAppSecrets(['1001=', '1002=s2'])).toEqual([{ organizationId: '1002', secret: 's2' }])
    const body = Buffer.from(JSON.stringify({ events: [] }))
    const forged = signBody(body, '1001=')
    expect(decodeBatch(body, forged, ['1001=', '1002=s2'], '1002')).toMatchObject({ ok: false, code: 'bad_signature' })
  })

  it('stops the worker at start, naming the entry and not a secret', async () => {
    const { ConfigError, loadConfig } = await import('../../src/config/load-config.js')
    let error: unknown
    try {
      loadConfig({ APP_SECRET: '1001=,1002=s2' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const messages = (error as InstanceType<typeof ConfigError>).errors.filter((e) => e.startsWith('APP_SECRET'))
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(/"1001="/)
    expect(messages[0]).not.toContain('s2')
    // A plain base64 secret with its padding is still a secret.
    expect(loadConfig({ APP_SECRET: 'c2VjcmV0IQ=,1002=s2' }).appSecrets).toEqual(['c2VjcmV0IQ=', '1002=s2'])
  })
})
