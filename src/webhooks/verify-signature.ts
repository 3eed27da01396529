// Webhook signatures (src/protocol/webhook-signature.ts), lower-case hex, optionally prefixed
// `sha256=` (platform notes). Verified before anything parses the body, in constant time, against
// every configured secret so that secrets can be rotated.
import { timingSafeEqual } from 'node:crypto'
import { signatureBytes } from '../protocol/webhook-signature.js'

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/

/**
 * Does `header` carry a valid signature of `body` under one of `secrets`? Every secret is tried
 * (no early exit on the first mismatch, so timing does not tell which secret is in use).
 */
export function verifySignature(body: Buffer, header: string | undefined, secrets: readonly string[]): boolean {
  return matchSignature(body, header, secrets) !== -1
}

/**
 * The index of the secret `header` is a valid signature of `body` under, or -1. Every secret is
 * tried, whatever matched first, so the time taken says nothing about which one (or whether one) did.
 */
export function matchSignature(body: Buffer, header: string | undefined, secrets: readonly string[]): number {
  if (!header || secrets.length === 0) return -1
  const value = header.trim().replace(/^sha256=/i, '')
  // A malformed value can't match; the length check comes before timingSafeEqual, which throws on
  // unequal lengths. Its result depends only on the header, never on a secret.
  if (!HEX_SHA256.test(value)) return -1
  const given = Buffer.from(value, 'hex')
  let matched = -1
  for (let i = 0; i < secrets.length; i++) {
    const expected = signatureBytes(body, secrets[i]!)
    const equal = timingSafeEqual(expected, given)
    if (equal && matched === -1) matched = i
  }
  return matched
}
