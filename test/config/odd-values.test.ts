// Odd values an operator's environment holds: spaces, other number notations, waits longer than a
// timer can make, a malformed TOKEN_KEY. Each is either read as meant or refused at the check, never
// accepted and then acted on as something else at run time.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config/load-config.js'
import { runConfig } from '../../src/cli/config.js'

describe('odd values in the environment', () => {
  it('takes a value of spaces as unset, not as the number 0', () => {
    const config = loadConfig({ PORT: ' ', SHUTDOWN_TIMEOUT_MS: '  ', RECONCILE_INTERVAL_MS: '\t', DEDUPE_MAX: ' ' })
    expect(config.port).toBe(3000)
    expect(config.shutdownTimeoutMs).toBe(20000)
    expect(config.reconcileIntervalMs).toBe(300000)
    expect(config.dedupeMax).toBe(100000)
  })

  it('reads whole numbers in decimal only', () => {
    expect(loadConfig({ PORT: ' 8080 ' }).port).toBe(8080)
    expect(() => loadConfig({ PORT: '0x50' })).toThrow(/PORT: "0x50" is not a whole number/)
    expect(() => loadConfig({ CONCURRENCY: '1e2' })).toThrow(/CONCURRENCY: "1e2"/)
  })

  it('refuses a wait longer than a timer can make (Node fires such a timer at once)', () => {
    for (const env of ['PARKED_RETRY_MS', 'RECONCILE_INTERVAL_MS', 'API_TIMEOUT_MS', 'SHUTDOWN_TIMEOUT_MS', 'QUEUE_LOCK_MS', 'REPORT_LINGER_MS', 'CHECK_TIME_BUDGET_MS', 'INGEST_THREAD_IDLE_MS']) {
      // 30 days: a monthly retry of parked strings would otherwise run every millisecond.
      expect(() => loadConfig({ [env]: String(30 * 24 * 3600_000) }), env).toThrow(ConfigError)
      expect(() => loadConfig({ [env]: String(30 * 24 * 3600_000) }), env).toThrow(new RegExp(`${env}: .*timer`))
      expect(loadConfig({ [env]: '2147483647' })).toBeDefined()
    }
    // A value under the minimum is refused without the timer's explanation.
    expect(() => loadConfig({ CHECK_TIME_BUDGET_MS: '50' })).toThrow(/CHECK_TIME_BUDGET_MS: "50" is not a whole number in 100\.\.2147483647$/m)
  })

  it('refuses a malformed TOKEN_KEY with the other problems, and config --check says so', async () => {
    expect(() => loadConfig({ TOKEN_KEY: 'short', PORT: 'x' })).toThrow(/TOKEN_KEY must be 32 random bytes[\s\S]*PORT|PORT[\s\S]*TOKEN_KEY must be 32 random bytes/)
    expect(loadConfig({ TOKEN_KEY: Buffer.alloc(32, 7).toString('base64') }).tokenKey).toBeTruthy()
    const saved = process.env.TOKEN_KEY
    process.env.TOKEN_KEY = 'short'
    try {
      await expect(runConfig(['--check'])).rejects.toThrow(/TOKEN_KEY must be 32 random bytes/)
    } finally {
      if (saved === undefined) delete process.env.TOKEN_KEY
      else process.env.TOKEN_KEY = saved
    }
  })

  it('keeps no spaces around an address', () => {
    expect(loadConfig({ BASE_URL: 'https://w.example.com/ ' }).baseUrl).toBe('https://w.example.com')
    expect(loadConfig({ AUTH_URL: ' https://auth.example.com' }).authUrl).toBe('https://auth.example.com')
  })

  it('refuses an address without http:// or https://, which the URL parser reads as a scheme', () => {
    // `localhost:11434/v1` parses as a URL of the scheme `localhost:`: every AI request then failed.
    expect(() => loadConfig({ OPENAI_BASE_URL: 'localhost:11434/v1' })).toThrow(/OPENAI_BASE_URL: "localhost:11434\/v1" must start with http:\/\/ or https:\/\//)
    // ... and BASE_URL went into the manifest as it was.
    expect(() => loadConfig({ BASE_URL: 'switchyard.example.com:443' })).toThrow(/BASE_URL: .* must start with http:\/\/ or https:\/\//)
    expect(() => loadConfig({ AUTH_URL: 'ftp://auth.example.com' })).toThrow(/AUTH_URL: .* must start with http:\/\/ or https:\/\//)
    expect(() => loadConfig({ AUTH_URL: 'redis://:pw@auth.example.com' })).toThrow(/AUTH_URL: "redis:\/\/:\*\*\*@auth.example.com"/)
    expect(loadConfig({ OPENAI_BASE_URL: 'http://localhost:11434/v1' }).openaiBaseUrl).toBe('http://localhost:11434/v1')
    expect(loadConfig({ BASE_URL: 'HTTPS://W.example.com' }).baseUrl).toBe('HTTPS://W.example.com')
  })

  it("refuses the settings page's options the worker would refuse at its start, and config --check says so", async () => {
    expect(() => loadConfig({ SETTINGS_SCRIPT_URL: 'cdn.example.com/iframe.js' })).toThrow(/SETTINGS_SCRIPT_URL: "cdn.example.com\/iframe.js" is not a URL/)
    expect(() => loadConfig({ SETTINGS_SCRIPT_URL: 'javascript:alert(1)' })).toThrow(/SETTINGS_SCRIPT_URL: .* must be an http\(s\) URL/)
    expect(() => loadConfig({ SETTINGS_FRAME_ANCESTORS: 'https://a.example.com, https://b.example.com' })).toThrow(/SETTINGS_FRAME_ANCESTORS: .* separated by spaces/)
    expect(loadConfig({ SETTINGS_SCRIPT_URL: '/iframe.js', SETTINGS_FRAME_ANCESTORS: 'https://a.example.com https://b.example.com' }).settingsScriptUrl).toBe('/iframe.js')
    const saved = process.env.SETTINGS_FRAME_ANCESTORS
    process.env.SETTINGS_FRAME_ANCESTORS = "*; script-src 'unsafe-inline'"
    try {
      await expect(runConfig(['--check'])).rejects.toThrow(/SETTINGS_FRAME_ANCESTORS/)
    } finally {
      if (saved === undefined) delete process.env.SETTINGS_FRAME_ANCESTORS
      else process.env.SETTINGS_FRAME_ANCESTORS = saved
    }
  })
})

describe('QUEUE=bullmq without Redis', () => {
  it('is refused by the configuration check, not only once the worker starts', () => {
    expect(() => loadConfig({ QUEUE: 'bullmq' })).toThrow(/QUEUE=bullmq needs Redis/)
    expect(() => loadConfig({ QUEUE: 'bullmq', QUEUE_REDIS_URL: 'postgres://u:pw@db/x' })).toThrow(/QUEUE_REDIS_URL: "postgres:\/\/u:\*\*\*@db\/x" must start with redis:\/\//)
    expect(loadConfig({ QUEUE: 'bullmq', STORE_URL: 'redis://127.0.0.1:6379/14' }).queue).toBe('bullmq')
    expect(loadConfig({ QUEUE: 'bullmq', QUEUE_REDIS_URL: 'redis://127.0.0.1:6379/14' }).queue).toBe('bullmq')
  })
})

describe('what config --check says is missing', () => {
  it('names TOKEN_KEY on a shared store (docs/deployment.md: mandatory there), not on SQLite', async () => {
    const { missingForProduction } = await import('../../src/config/load-config.js')
    const missing = (env: Record<string, string>) => missingForProduction(loadConfig(env)).join('\n')
    expect(missing({ STORE_URL: 'redis://127.0.0.1:6379/13' })).toMatch(/^TOKEN_KEY \(the store is shared/m)
    expect(missing({ STORE_URL: 'postgres://u@db/x' })).toMatch(/^TOKEN_KEY/m)
    expect(missing({ STORE_URL: 'redis://127.0.0.1:6379/13', TOKEN_KEY: Buffer.alloc(32, 7).toString('base64') })).not.toMatch(/TOKEN_KEY/)
    expect(missing({})).not.toMatch(/TOKEN_KEY/)
    expect(missing({ STORE_URL: 'memory://' })).not.toMatch(/TOKEN_KEY/)
  })

  // serve said "running on defaults; to connect a real organization set: TOKEN_KEY ..." for a
  // worker on Redis with everything set but TOKEN_KEY, which connects and works (one instance),
  // and left out "webhook secrets loaded"; loadTokenKey warns about the shared store already.
  it('does not count TOKEN_KEY as missing to connect an organization (serve), only for production (config --check)', async () => {
    const { missingForProduction, missingToConnect } = await import('../../src/config/load-config.js')
    const config = loadConfig({
      STORE_URL: 'redis://127.0.0.1:6379/13', APP_SECRET: 's', CLIENT_ID: 'c', CLIENT_SECRET: 'cs', AUTH_URL: 'https://auth.example.com',
      API_URL: 'https://{organization_domain}.api.example.com', BASE_URL: 'https://switchyard.example.com', OPERATOR_PASSWORD: 'pw',
    })
    expect(missingToConnect(config)).toEqual([])
    expect(missingForProduction(config)).toEqual([expect.stringMatching(/^TOKEN_KEY \(the store is shared/)])
    const partial = loadConfig({ STORE_URL: 'postgres://u@db/x' })
    expect(missingForProduction(partial)).toEqual([...missingToConnect(partial), expect.stringMatching(/^TOKEN_KEY/)])
  })
})
