// The stored form of sealed tokens and of the key, checked against node:crypto directly, so a token
// sealed by one version opens in the next and an operator's key is read as documented: sealed
// records are `v1.<iv>.<tag>.<ciphertext>` (base64url, AES-256-GCM, 16-byte tag, additional data
// `switchyard:v1:<domain>`, UTF-8 JSON); keys are 64 hex digits or base64/base64url of 32 bytes;
// derived keys are HKDF-SHA256 with info `switchyard:<purpose>`.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { deriveKey, hmac, loadTokenKey, open, parseTokenKey, safeEqual, seal, TokenDecryptError, TokenKeyError, TOKEN_KEY_FILE } from '../../src/platform/token-crypto.js'
import { createLogger } from '../../src/util/logger.js'

const key = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex')
const value = { accessToken: 'jeton-é-✓', refreshToken: 'rt' }

function sealIndependently(context: string, text = JSON.stringify(value)): string {
  const iv = Buffer.alloc(12, 7)
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 })
  cipher.setAAD(Buffer.from(`switchyard:v1:${context}`, 'utf8'))
  const ct = Buffer.concat([cipher.update(Buffer.from(text, 'utf8')), cipher.final()])
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.')
}

const caught = (f: () => unknown): Error => {
  try {
    f()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

describe('sealed token format', () => {
  it('seals as documented: node:crypto opens it with the domain as additional data', () => {
    const [version, iv, tag, ct] = seal(key, value, 'acmé.example').split('.') as [string, string, string, string]
    expect(version).toBe('v1')
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 })
    decipher.setAAD(Buffer.from('switchyard:v1:acmé.example', 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    const plain = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()])
    expect(JSON.parse(plain.toString('utf8'))).toEqual(value)
  })

  it('opens a record sealed as documented', () => {
    expect(open(key, sealIndependently('acme'), 'acme')).toEqual(value)
  })

  it('names an unknown format, and tells a wrong key or altered data apart from it', () => {
    const good = sealIndependently('acme')
    const [, iv, tag, ct] = good.split('.')
    for (const bad of [`v2.${iv}.${tag}.${ct}`, `v1.${iv}.${tag}`, `${good}.extra`]) {
      const error = caught(() => open(key, bad, 'acme'))
      expect(error).toBeInstanceOf(TokenDecryptError)
      expect(error.name).toBe('TokenDecryptError')
      expect(error.message).toMatch(/unknown format/)
    }
    const wrongKey = caught(() => open(randomBytes(32), good, 'acme'))
    expect(wrongKey).toBeInstanceOf(TokenDecryptError)
    expect(wrongKey.message).toMatch(/wrong TOKEN_KEY/)
  })

  it('refuses a shortened authentication tag', () => {
    const [, iv, tag, ct] = sealIndependently('acme').split('.') as [string, string, string, string]
    const short = Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url')
    expect(() => open(key, `v1.${iv}.${short}.${ct}`, 'acme')).toThrow(TokenDecryptError)
  })
})

describe('token key text', () => {
  it('reads base64url keys with - and _ as the bytes they stand for', () => {
    const raw = Buffer.alloc(32, 0xfb) // base64 "+/..." , base64url "-_..."
    expect(raw.toString('base64url')).toMatch(/[-_]/)
    expect(parseTokenKey(raw.toString('base64url')).equals(raw)).toBe(true)
    expect(parseTokenKey(raw.toString('base64')).equals(raw)).toBe(true)
  })

  it('refuses a key with stray characters rather than reading around them', () => {
    const b64 = randomBytes(32).toString('base64')
    const hex = randomBytes(32).toString('hex')
    for (const text of [`${b64.slice(0, 10)}*${b64.slice(10)}`, `*${b64}`, `${b64}*`, `${hex}AAAA`, `${hex}!`]) {
      const error = caught(() => parseTokenKey(text))
      expect(error).toBeInstanceOf(TokenKeyError)
      expect(error.name).toBe('TokenKeyError')
      expect(error.message).toContain('create one with: node -e')
    }
  })
})

describe('derived keys, MACs and comparison', () => {
  it('derives keys with HKDF-SHA256 per purpose, never the key itself', () => {
    const cookie = deriveKey(key, 'cookie')
    expect(cookie.equals(Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'switchyard:cookie', 32)))).toBe(true)
    expect(cookie.equals(deriveKey(key, 'other'))).toBe(false)
    expect(cookie.equals(key)).toBe(false)
  })

  it('signs with HMAC-SHA256 in base64url', () => {
    expect(hmac(key, 'state-1')).toBe(createHmac('sha256', key).update('state-1').digest('base64url'))
  })

  it('compares strings of any length without throwing', () => {
    expect(safeEqual('abc', 'abc')).toBe(true)
    expect(safeEqual('abc', 'abd')).toBe(false)
    expect(safeEqual('abc', 'abcd')).toBe(false)
    expect(safeEqual('', '')).toBe(true)
  })
})

describe('where the key comes from', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })
  const temp = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'switchyard-keyfile-'))
    dirs.push(d)
    return d
  }
  const capture = () => {
    const lines: Array<Record<string, unknown>> = []
    const log = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } as never })
    return { log, lines }
  }

  it('keeps any memory:// store off the disk', () => {
    const dir = path.join(temp(), 'unused')
    const { log, lines } = capture()
    expect(loadTokenKey({ tokenKey: '', dataDir: dir, storeUrl: 'memory://tokens' }, log).source).toBe('ephemeral')
    expect(lines.map((l) => l.msg).join('\n')).toMatch(/lives only in this process/)
  })

  it('warns that a shared store needs TOKEN_KEY on every instance, and not for SQLite', () => {
    const shared = capture()
    loadTokenKey({ tokenKey: '', dataDir: temp(), storeUrl: 'redis://127.0.0.1:6379' }, shared.log)
    const warned = shared.lines.find((l) => /store is shared/.test(String(l.msg)))
    expect(warned).toBeDefined()
    expect(String(warned!.file)).toMatch(/token\.key$/)
    const local = capture()
    const dir = temp()
    loadTokenKey({ tokenKey: '', dataDir: dir, storeUrl: `sqlite://${dir}/s.sqlite` }, local.log)
    expect(local.lines.some((l) => /store is shared/.test(String(l.msg)))).toBe(false)
  })

  it('loads an existing key file, and warns when others may read it', () => {
    const dir = temp()
    mkdirSync(dir, { recursive: true })
    const file = path.join(dir, TOKEN_KEY_FILE)
    writeFileSync(file, `${key.toString('base64')}\n`)
    const config = { tokenKey: '', dataDir: dir, storeUrl: `sqlite://${dir}/s.sqlite` }
    chmodSync(file, 0o600)
    const private_ = capture()
    const loaded = loadTokenKey(config, private_.log)
    expect(loaded).toMatchObject({ source: 'file', file })
    expect(loaded.key.equals(key)).toBe(true)
    expect(private_.lines.filter((l) => l.level === 40)).toEqual([])
    expect(private_.lines.find((l) => /loaded from key file/.test(String(l.msg)))).toMatchObject({ file })

    chmodSync(file, 0o644)
    const open_ = capture()
    expect(loadTokenKey(config, open_.log).key.equals(key)).toBe(true)
    expect(open_.lines.find((l) => /readable by other users/.test(String(l.msg)))).toMatchObject({ file, mode: '644' })
  })
})
