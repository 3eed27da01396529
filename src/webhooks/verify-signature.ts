// Webhook signatures: HMAC-SHA256 of the raw body bytes with the installation's app secret,
// lower-case hex, optionally prefixed `sha256=` (platform notes). Verified before anything parses
// the body, in constant time, against every configured secret so that secrets can be rotated.
import { createHmac, timingSafeEqual } from 'node:crypto'

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/

/** The signature the service would send for this body. */
export function signBody(body: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/**
 * Does `header` carry a valid signature of `body` under one of `secrets`? Every secret is tried
 * (no early exit on the first mismatch, so timing does not tell which secret is in use).
 */
export function verifySignature(body: Buffer, header: string | undefined, secrets: readonly string[]): boolean {
  if (!header || secrets.length === 0) return false
  const value = header.trim().replace(/^sha256=/i, '')
  // A malformed value can't match; the length check comes before timingSafeEqual, which throws on
  // unequal lengths. Its result depends only on the header, never on a secret.
  if (!HEX_SHA256.test(value)) return false
  const given = Buffer.from(value, 'hex')
  let ok = false
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(body).digest()
    ok = timingSafeEqual(expected, given) || ok
  }
  return ok
}
