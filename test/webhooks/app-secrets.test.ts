// APP_SECRET entries and which organization a delivery is verified for (decode-batch.ts).
import { describe, expect, it } from 'vitest'
import { parseAppSecrets, secretsFor } from '../../src/webhooks/app-secrets.js'
import { decodeBatch } from '../../src/webhooks/decode-batch.js'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'

describe('parseAppSecrets', () => {
  it('reads ORG_ID=SECRET as scoped and anything else as plain, base64 padding included', () => {
    expect(parseAppSecrets(['1001=s1', ' 1001=s1b ', 'plain', 'abc=', 'abc==', 'x y=z', '=lead', 'org.two=a=b', ''])).toEqual([
      { organizationId: '1001', secret: 's1' },
      { organizationId: '1001', secret: 's1b' },
      { secret: 'plain' },
      { secret: 'abc=' },
      { secret: 'abc==' },
      { secret: 'x y=z' },
      { secret: '=lead' },
      { organizationId: 'org.two', secret: 'a=b' },
    ])
  })
  it("offers an organization its own secrets and the plain ones, and another organization's never", () => {
    const all = parseAppSecrets(['1001=a', '1002=b', 'shared'])
    expect(secretsFor(all, '1001').map((s) => s.secret)).toEqual(['a', 'shared'])
    expect(secretsFor(all, '1003').map((s) => s.secret)).toEqual(['shared'])
    expect(secretsFor(all, '').map((s) => s.secret)).toEqual(['a', 'b', 'shared'])
  })
})

describe('decodeBatch: the organization of a delivery', () => {
  const body = (org: string, n = 2) => JSON.stringify({ events: Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: i + 1, organizationId: org })) })
  const secrets = ['1001=secret-one', '1002=secret-two']

  it("verifies with the claimed organization's own secret", () => {
    const b = body('1001')
    expect(decodeBatch(Buffer.from(b), signBody(b, 'secret-one'), secrets, '1001')).toMatchObject({ ok: true, organizationId: '1001', count: 2 })
  })
  it("refuses a body signed with another organization's secret, even if the header names that one", () => {
    const b = body('1001')
    expect(decodeBatch(Buffer.from(b), signBody(b, 'secret-two'), secrets, '1001')).toMatchObject({ ok: false, status: 401, code: 'bad_signature' })
    expect(decodeBatch(Buffer.from(b), signBody(b, 'secret-two'), secrets, '1002')).toMatchObject({ ok: false, status: 401, code: 'organization_mismatch' })
  })
  it('refuses a signed body replayed under another id header', () => {
    const b = body('1001')
    expect(decodeBatch(Buffer.from(b), signBody(b, 'secret-one'), ['secret-one'], '1002')).toMatchObject({ ok: false, status: 401, code: 'organization_mismatch' })
  })
  it('refuses an organization with no secret of its own and no plain one', () => {
    const b = body('1009')
    expect(decodeBatch(Buffer.from(b), signBody(b, 'secret-one'), secrets, '1009')).toMatchObject({ ok: false, status: 401, code: 'unknown_organization' })
  })
  it('without an id header, takes the organization from the matching secret and the body, which must agree', () => {
    const b = body('1002')
    expect(decodeBatch(Buffer.from(b), signBody(b, 'secret-two'), secrets, '')).toMatchObject({ ok: true, organizationId: '1002' })
    expect(decodeBatch(Buffer.from(b), signBody(b, 'secret-one'), secrets, '')).toMatchObject({ ok: false, code: 'organization_mismatch' })
    const mixed = JSON.stringify({ events: [recalculationEvent({ stringId: 1, organizationId: '1001' }), recalculationEvent({ stringId: 2, organizationId: '1002' })] })
    expect(decodeBatch(Buffer.from(mixed), signBody(mixed, 'shared'), ['shared'], '')).toMatchObject({ ok: false, code: 'organization_mismatch' })
  })
  it('a plain secret verifies any organization, and the body must still agree with the header', () => {
    const b = body('42')
    expect(decodeBatch(Buffer.from(b), signBody(b, 'shared'), ['shared'], '42')).toMatchObject({ ok: true, organizationId: '42' })
    expect(decodeBatch(Buffer.from(b), signBody(b, 'shared'), ['shared'], '43')).toMatchObject({ ok: false, code: 'organization_mismatch' })
  })
})
