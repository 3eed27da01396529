// The format of TOKEN_KEY: 32 bytes as 64 hex digits or base64/base64url. Here, beside the other
// options, so that the configuration check (`switchyard config --check`, and the start) refuses a
// malformed key with every other problem, rather than the start failing on it once the pipelines
// are loaded; src/platform/token-crypto.ts reads the key (and the key file) with it.

export class TokenKeyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TokenKeyError'
  }
}

/** Parse a 32-byte key given as hex (64 digits) or base64/base64url. The key never appears in errors. */
export function parseTokenKey(text: string, source = 'TOKEN_KEY'): Buffer {
  const raw = text.trim()
  let key: Buffer | undefined
  if (/^[0-9a-fA-F]{64}$/.test(raw)) key = Buffer.from(raw, 'hex')
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) key = Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  if (!key || key.length !== 32) {
    throw new TokenKeyError(
      `${source} must be 32 random bytes written as 64 hex digits or base64 (44 characters); ` +
        'create one with: node -e "console.log(require(\'crypto\').randomBytes(32).toString(\'base64\'))"',
    )
  }
  return key
}
