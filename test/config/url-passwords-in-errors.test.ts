// A configuration error quotes the URL it is about (STORE_URL, QUEUE_REDIS_URL, API_URL) with the
// password of its user info replaced. Generated passwords hold `/`, `+`, `#`, `?` (base64,
// password managers); the password must go whatever characters it holds, not only [^/?#].
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, withoutPassword } from '../../src/config/load-config.js'

const PASSWORDS = ['s3cr#tPass', 'pa?ssword9', 'Zm9v/YmFy+cXV4', 'a@b#c/d?e']

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('expected a ConfigError')
}

describe('URL passwords in configuration errors', () => {
  for (const password of PASSWORDS) {
    it(`never quotes the password ${JSON.stringify(password)}`, () => {
      const envs: Array<Record<string, string>> = [
        { STORE_URL: `redix://:${password}@cache.internal:6379` },
        { STORE_URL: `postgress://app:${password}@db.internal/switchyard` },
        { QUEUE: 'bullmq', QUEUE_REDIS_URL: `http://default:${password}@cache.internal` },
        { API_URL: `ftp://user:${password}@api.internal` },
      ]
      for (const env of envs) {
        const message = errorOf(env)
        expect(message).not.toContain(password)
        expect(message).not.toContain(password.slice(2))
        expect(message).toContain(':***@')
      }
    })
  }

  it('keeps what an operator needs to see: scheme, user and host', () => {
    expect(withoutPassword('redix://app:Zm9v/YmFy@cache.internal:6379/0')).toBe('redix://app:***@cache.internal:6379/0')
    expect(withoutPassword('redis://cache.internal:6379/0')).toBe('redis://cache.internal:6379/0')
    // One slash (or none) after the scheme: still masked.
    expect(withoutPassword('redis:/:Zm9v/YmFy@cache.internal')).toBe('redis:/:***@cache.internal')
    expect(withoutPassword('redis:app:Zm9v@cache.internal')).toBe('redis:app:***@cache.internal')
  })
})
