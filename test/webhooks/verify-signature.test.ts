import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { verifySignature } from '../../src/webhooks/verify-signature.js'

const secret = 'app-secret-1'
const body = Buffer.from(JSON.stringify({ events: [{ event: 'project.translated', project: { id: 1 } }] }))
const hmac = (b: Buffer | string, s: string) => createHmac('sha256', s).update(b).digest('hex')

describe('verifySignature', () => {
  it('accepts the lower-case hex HMAC-SHA256 of the raw body', () => {
    expect(verifySignature(body, hmac(body, secret), [secret])).toBe(true)
  })
  it('accepts the sha256= prefix and upper-case hex', () => {
    expect(verifySignature(body, `sha256=${hmac(body, secret)}`, [secret])).toBe(true)
    expect(verifySignature(body, hmac(body, secret).toUpperCase(), [secret])).toBe(true)
  })
  it('accepts a body signed with the second of two secrets (rotation)', () => {
    expect(verifySignature(body, hmac(body, 'new-secret'), [secret, 'new-secret'])).toBe(true)
  })
  it('refuses a signature made with another secret', () => {
    expect(verifySignature(body, hmac(body, 'wrong'), [secret])).toBe(false)
  })
  it('refuses a body with one byte changed', () => {
    const sig = hmac(body, secret)
    const changed = Buffer.from(body)
    changed[10] = changed[10]! ^ 1
    expect(verifySignature(changed, sig, [secret])).toBe(false)
  })
  it('refuses a missing, empty, truncated or non-hex header', () => {
    const sig = hmac(body, secret)
    expect(verifySignature(body, undefined, [secret])).toBe(false)
    expect(verifySignature(body, '', [secret])).toBe(false)
    expect(verifySignature(body, sig.slice(0, 63), [secret])).toBe(false)
    expect(verifySignature(body, `${sig.slice(0, 62)}zz`, [secret])).toBe(false)
    expect(verifySignature(body, `${sig}00`, [secret])).toBe(false)
  })
  it('refuses everything when no secret is configured', () => {
    expect(verifySignature(body, hmac(body, secret), [])).toBe(false)
  })
  it('signs the raw bytes: multi-byte UTF-8 and unusual whitespace are not normalised', () => {
    const raw = Buffer.from('{ "events" :\t[ {"event":"x", "text":"Größe 😀 日本語\u00a0\u2028 "} ]\r\n}', 'utf8')
    const sig = hmac(raw, secret)
    expect(signBody(raw, secret)).toBe(sig)
    expect(verifySignature(raw, sig, [secret])).toBe(true)
    // The same JSON re-serialised is a different byte string, so the signature no longer holds.
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))))
    expect(verifySignature(reserialised, sig, [secret])).toBe(false)
    // Decoding as latin1 and re-encoding changes the bytes too.
    expect(verifySignature(Buffer.from(raw.toString('latin1'), 'utf8'), sig, [secret])).toBe(false)
  })
})
