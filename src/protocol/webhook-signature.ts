// How the service signs a webhook (platform notes): HMAC-SHA256 of the raw body bytes with the
// installation's app secret, sent as lower-case hex. The worker verifies with it
// (src/webhooks/verify-signature.ts); the emulator and tests sign with it.
import { createHmac } from 'node:crypto'

/** The HMAC of the body: the bytes the hex signature encodes. */
export function signatureBytes(body: Buffer | string, secret: string): Buffer {
  return createHmac('sha256', secret).update(body).digest()
}

/** The signature the service sends for this body. */
export function signBody(body: Buffer | string, secret: string): string {
  return signatureBytes(body, secret).toString('hex')
}
