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
  if (!signatureOf(header) || secrets.length === 0) return -1
  return matchDigests(secrets.map((secret) => signatureBytes(body, secret)), header)
}

/**
 * matchSignature for a body whose HMAC under each secret was computed as it was read (a large
 * body written to disk, large-body.ts): the index of the digest `header` carries, or -1.
 */
export function matchDigests(digests: readonly Buffer[], header: string | undefined): number {
  const given = signatureOf(header)
  if (!given) return -1
  let matched = -1
  for (let i = 0; i < digests.length; i++) {
    const equal = timingSafeEqual(digests[i]!, given)
    if (equal && matched === -1) matched = i
  }
  return matched
}

/**
 * The bytes a signature header carries, or undefined for a malformed value (which can't match).
 * The length check comes before timingSafeEqual, which throws on unequal lengths; its result
 * depends only on the header, never on a secret.
 */
function signatureOf(header: string | undefined): Buffer | undefined {
  if (!header) return undefined
  const value = header.trim().replace(/^sha256=/i, '')
  return HEX_SHA256.test(value) ? Buffer.from(value, 'hex') : undefined
}
