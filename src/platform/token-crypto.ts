// Encryption of OAuth tokens at rest: AES-256-GCM from node:crypto, with the organization's domain
// as additional authenticated data so a sealed record can't be moved to another organization.
// The key comes from TOKEN_KEY or, on embedded defaults, from a key file created in DATA_DIR.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Config } from '../config/load-config.js'
import type { Logger } from '../util/logger.js'
import { parseTokenKey } from '../config/token-key.js'

export { parseTokenKey, TokenKeyError } from '../config/token-key.js'

export const TOKEN_KEY_FILE = 'token.key'
const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/** The sealed value could not be opened: wrong key, or the data was altered. */
export class TokenDecryptError extends Error {
  constructor(message = 'sealed token data could not be decrypted (wrong TOKEN_KEY, or the stored data was altered)') {
    super(message)
    this.name = 'TokenDecryptError'
  }
}

export interface LoadedTokenKey {
  key: Buffer
  /** Where it came from, for the operator: 'env', 'file' or 'ephemeral'. */
  source: 'env' | 'file' | 'ephemeral'
  file?: string
}

/**
 * The token encryption key: TOKEN_KEY when set; an ephemeral key for memory:// stores (their
 * tokens die with the process anyway); otherwise DATA_DIR/token.key, created with mode 0600.
 */
export function loadTokenKey(config: Pick<Config, 'tokenKey' | 'dataDir' | 'storeUrl'>, log: Logger): LoadedTokenKey {
  if (config.tokenKey) return { key: parseTokenKey(config.tokenKey), source: 'env' }
  if (config.storeUrl.startsWith('memory://')) {
    log.debug('TOKEN_KEY not set and the store is memory://: tokens are encrypted with a key that lives only in this process')
    return { key: randomBytes(32), source: 'ephemeral' }
  }
  const file = path.resolve(config.dataDir, TOKEN_KEY_FILE)
  if (!/^sqlite:\/\//.test(config.storeUrl)) {
    log.warn(
      { file },
      'TOKEN_KEY is not set but the store is shared (redis/postgres): every instance needs the same key; set TOKEN_KEY on all of them',
    )
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    // 'wx': never overwrite a key another process just created (that would orphan its tokens).
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 })
    chmodSync(file, 0o600) // the umask can only remove bits, but be explicit
    log.warn(
      { file },
      'TOKEN_KEY is not set: created a token encryption key file (mode 0600). Back it up or move it to TOKEN_KEY; stored tokens cannot be read without it',
    )
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    const mode = statSync(file).mode & 0o777
    if (mode & 0o077) log.warn({ file, mode: mode.toString(8) }, 'token key file is readable by other users; run chmod 600 on it')
    log.info({ file }, 'token encryption key loaded from key file')
  }
  return { key: parseTokenKey(readFileSync(file, 'utf8'), file), source: 'file', file }
}

/** Seal a JSON value: `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function seal(key: Buffer, value: unknown, context: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(`switchyard:${VERSION}:${context}`, 'utf8'))
  const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.')
}

/** Open a sealed value; throws TokenDecryptError on any tampering, wrong key or wrong context. */
export function open<T = unknown>(key: Buffer, sealed: string, context: string): T {
  const parts = sealed.split('.')
  if (parts.length !== 4 || parts[0] !== VERSION) throw new TokenDecryptError('sealed token data has an unknown format')
  const [, ivText, tagText, ctText] = parts as [string, string, string, string]
  let plain: Buffer
  try {
    const iv = Buffer.from(ivText, 'base64url')
    const tag = Buffer.from(tagText, 'base64url')
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new TokenDecryptError()
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(`switchyard:${VERSION}:${context}`, 'utf8'))
    decipher.setAuthTag(tag)
    plain = Buffer.concat([decipher.update(Buffer.from(ctText, 'base64url')), decipher.final()])
  } catch {
    throw new TokenDecryptError()
  }
  return JSON.parse(plain.toString('utf8')) as T
}

/** A key for another purpose (cookie signing, ...), derived so the encryption key is never reused raw. */
export function deriveKey(key: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `switchyard:${purpose}`, 32))
}

export function hmac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url')
}

/** Constant-time string comparison (length checked first, as timingSafeEqual requires). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
