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
