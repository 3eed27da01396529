import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/util/logger.js'
import { loadTokenKey, open, parseTokenKey, seal, TokenDecryptError, TokenKeyError, TOKEN_KEY_FILE } from '../../src/platform/token-crypto.js'

function capturingLogger() {
  const lines: string[] = []
  const log = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } })
  return { log, lines }
}

const dirs: string[] = []
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'switchyard-key-'))
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('seal/open (AES-256-GCM)', () => {
  const key = randomBytes(32)
  const value = { accessToken: 'at-123', refreshToken: 'rt-456' }

  it('round-trips a value and never shows it in the sealed text', () => {
    const sealed = seal(key, value, 'acme')
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(sealed).not.toContain('at-123')
    expect(Buffer.from(sealed.split('.')[3]!, 'base64url').toString('latin1')).not.toContain('rt-456')
    expect(open(key, sealed, 'acme')).toEqual(value)
  })

  it('uses a fresh IV each time', () => {
    expect(seal(key, value, 'acme')).not.toBe(seal(key, value, 'acme'))
  })

  it.each([
    ['ciphertext', 3],
    ['auth tag', 2],
    ['iv', 1],
  ])('detects a changed %s', (_name, part) => {
    const parts = seal(key, value, 'acme').split('.')
    const bytes = Buffer.from(parts[part]!, 'base64url')
    bytes[0] = bytes[0]! ^ 0x01
    parts[part] = bytes.toString('base64url')
    expect(() => open(key, parts.join('.'), 'acme')).toThrow(TokenDecryptError)
  })

  it('refuses a record moved to another organization, a wrong key and a bad format', () => {
    const sealed = seal(key, value, 'acme')
    expect(() => open(key, sealed, 'other')).toThrow(TokenDecryptError)
    expect(() => open(randomBytes(32), sealed, 'acme')).toThrow(TokenDecryptError)
    expect(() => open(key, 'v2.a.b.c', 'acme')).toThrow(TokenDecryptError)
    expect(() => open(key, sealed.slice(0, -4), 'acme')).toThrow(TokenDecryptError)
  })
})

describe('parseTokenKey', () => {
  const raw = randomBytes(32)
  it('accepts hex, base64 and base64url', () => {
    expect(parseTokenKey(raw.toString('hex')).equals(raw)).toBe(true)
    expect(parseTokenKey(raw.toString('base64')).equals(raw)).toBe(true)
    expect(parseTokenKey(`${raw.toString('base64url')}\n`).equals(raw)).toBe(true)
  })
  it('refuses keys of the wrong size without echoing them', () => {
    const short = randomBytes(16).toString('base64')
    let err: unknown
    try {
      parseTokenKey(short)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(TokenKeyError)
    expect((err as Error).message).toContain('TOKEN_KEY must be 32 random bytes')
    expect((err as Error).message).not.toContain(short)
    expect(() => parseTokenKey('not a key!')).toThrow(TokenKeyError)
  })
})

describe('loadTokenKey', () => {
  it('uses TOKEN_KEY when set, and creates no file', () => {
    const dir = tempDir()
    const { log } = capturingLogger()
    const k = randomBytes(32)
    const loaded = loadTokenKey({ tokenKey: k.toString('hex'), dataDir: dir, storeUrl: `sqlite://${dir}/x.sqlite` }, log)
    expect(loaded.source).toBe('env')
    expect(loaded.key.equals(k)).toBe(true)
    expect(() => statSync(path.join(dir, TOKEN_KEY_FILE))).toThrow()
  })

  it('creates a 0600 key file on embedded defaults, says so without printing it, and reuses it', () => {
    const dir = path.join(tempDir(), 'nested', 'data')
    const { log, lines } = capturingLogger()
    const config = { tokenKey: '', dataDir: dir, storeUrl: `sqlite://${dir}/switchyard.sqlite` }
    const first = loadTokenKey(config, log)
    const file = path.join(dir, TOKEN_KEY_FILE)
    expect(first.source).toBe('file')
    expect(first.file).toBe(file)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const logged = lines.join('')
    expect(logged).toContain('created a token encryption key file')
    expect(logged).toContain(file)
    const text = readFileSync(file, 'utf8').trim()
    expect(logged).not.toContain(text)
    expect(logged).not.toContain(first.key.toString('hex'))

    const second = loadTokenKey(config, log)
    expect(second.key.equals(first.key)).toBe(true)
    expect(lines.join('')).not.toContain(text)
  })

  it('keeps memory:// stores off the disk with an ephemeral key', () => {
    const dir = path.join(tempDir(), 'unused')
    const { log } = capturingLogger()
    const loaded = loadTokenKey({ tokenKey: '', dataDir: dir, storeUrl: 'memory://' }, log)
    expect(loaded.source).toBe('ephemeral')
    expect(() => statSync(dir)).toThrow()
  })
})
