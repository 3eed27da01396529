// Config is derived from OPTIONS: one field per option, typed by its kind, with literal defaults
// typed and computed defaults declared with their option.
import path from 'node:path'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { ConfigError, loadConfig, PACKAGE_ROOT, readOption, type Config } from '../../src/config/load-config.js'
import { defaultIngestThreads, defaultPipelineThreads, OPTIONS, type OptionName } from '../../src/config/options.js'
import { optionsTable } from '../../src/config/options-table.js'

describe('Config from OPTIONS', () => {
  it('has exactly the fields of OPTIONS, typed by kind', () => {
    expectTypeOf<keyof Config>().toEqualTypeOf<OptionName>()
    expectTypeOf<Config['port']>().toEqualTypeOf<number>()
    expectTypeOf<Config['appSecrets']>().toEqualTypeOf<string[]>()
    expectTypeOf<Config['operatorOpen']>().toEqualTypeOf<boolean>()
    expectTypeOf<Config['queue']>().toEqualTypeOf<'memory' | 'bullmq'>()
    expectTypeOf<Config['baseUrl']>().toEqualTypeOf<string>()
    expect(Object.keys(loadConfig({})).sort()).toEqual(Object.keys(OPTIONS).sort())
  })

  it('gives every option the value of its kind', () => {
    const config = loadConfig({ APP_SECRET: 'a, b', OPERATOR_OPEN: 'yes', PORT: '8080', QUEUE: 'bullmq', QUEUE_REDIS_URL: 'redis://127.0.0.1:6379' })
    expect(config.appSecrets).toEqual(['a', 'b'])
    expect(config.operatorOpen).toBe(true)
    expect(config.port).toBe(8080)
    expect(config.queue).toBe('bullmq')
  })

  it('reads a bool in any case, and refuses a value that is neither true nor false', () => {
    expect(loadConfig({ OPERATOR_OPEN: 'TRUE' }).operatorOpen).toBe(true)
    expect(loadConfig({ OPERATOR_OPEN: 'No' }).operatorOpen).toBe(false)
    expect(() => loadConfig({ OPERATOR_OPEN: 'ture' })).toThrow(/OPERATOR_OPEN: "ture" is not true or false/)
  })

  it('applies typed literal defaults', () => {
    const config = loadConfig({})
    expect(config.port).toBe(3000)
    expect(config.bodyLimit).toBe(128 * 1024 * 1024)
    expect(config.bodyMemoryLimit).toBe(10 * 1024 * 1024)
    expect(config.operatorOpen).toBe(false)
    expect(config.oauthTokenFormat).toBe('json')
    expect(config.appSecrets).toEqual([])
    expect(config.clientId).toBe('')
  })

  it('computes defaults from other options when the option is not set', () => {
    const config = loadConfig({ PORT: '4100', DATA_DIR: '/var/lib/sy' })
    expect(config.baseUrl).toBe('http://localhost:4100')
    expect(config.storeUrl).toBe(`sqlite://${path.join('/var/lib/sy', 'switchyard.sqlite')}`)
    expect(config.pipelinesDir).toBe(path.join(PACKAGE_ROOT, 'pipelines'))
    expect(config.ingestThreads).toBe(defaultIngestThreads())
    expect(config.pipelineThreads).toBe(defaultPipelineThreads())
    // An empty variable counts as unset.
    expect(loadConfig({ BASE_URL: '', PORT: '5' }).baseUrl).toBe('http://localhost:5')
  })

  it('reads overrides before computing, and never computes over a value given', () => {
    expect(loadConfig({}, { port: 9 }).baseUrl).toBe('http://localhost:9')
    expect(loadConfig({ BASE_URL: 'https://w.example.com/' }).baseUrl).toBe('https://w.example.com')
    expect(loadConfig({}, { storeUrl: 'memory://' }).storeUrl).toBe('memory://')
    expect(loadConfig({ PIPELINE_THREADS: '0', INGEST_THREADS: '0' }).pipelineThreads).toBe(0)
    expect(loadConfig({}, { ingestThreads: 0 }).ingestThreads).toBe(0)
    expect(loadConfig({ INGEST_THREADS: '3' }).ingestThreads).toBe(3)
  })

  it('keeps the thread defaults within their bounds', () => {
    expect([1, 2, 4, 16].map((c) => defaultIngestThreads(c))).toEqual([0, 2, 4, 4])
    expect([1, 2, 4, 16].map((c) => defaultPipelineThreads(c))).toEqual([1, 1, 3, 4])
  })

  it('prints literal defaults in the table and leaves computed ones to the description', () => {
    const table = optionsTable()
    expect(table).toContain('| `PORT` | int | `3000` |')
    expect(table).toContain('| `OPERATOR_OPEN` | bool | `false` |')
    expect(table).toContain('| `BODY_LIMIT` | int | `134217728` |')
    expect(table).toContain('| `BASE_URL` | url |  | Public address')
    expect(table).toContain('| `PIPELINE_THREADS` | int |  | Threads that run')
  })

  it('takes a BullMQ queue name that cannot reach into another deployment\'s keys', () => {
    expect(loadConfig({}).queueName).toBe('switchyard-strings')
    expect(loadConfig({ QUEUE_NAME: 'eu_west-2' }).queueName).toBe('eu_west-2')
    for (const bad of ['a:b', 'with space', 'x'.repeat(101), '{tag}']) expect(() => loadConfig({ QUEUE_NAME: bad }), bad).toThrow(/QUEUE_NAME: .*letters, digits, - or _/)
  })

  it('reads one option alone as loadConfig reads it (switchyard try\'s CHECK_TIME_BUDGET_MS)', () => {
    expect(readOption('checkTimeBudgetMs', {})).toEqual({ ok: true, value: 2000 })
    expect(readOption('checkTimeBudgetMs', { CHECK_TIME_BUDGET_MS: '' })).toEqual({ ok: true, value: 2000 })
    expect(readOption('checkTimeBudgetMs', { CHECK_TIME_BUDGET_MS: '300' })).toEqual({ ok: true, value: 300 })
    for (const bad of ['50', 'abc', '1.5']) {
      const read = readOption('checkTimeBudgetMs', { CHECK_TIME_BUDGET_MS: bad })
      expect(read).toEqual({ ok: false, error: `CHECK_TIME_BUDGET_MS: "${bad}" is not a whole number in 100..2147483647` })
      // The same words as the worker's start.
      expect(() => loadConfig({ CHECK_TIME_BUDGET_MS: bad })).toThrow(ConfigError)
      try { loadConfig({ CHECK_TIME_BUDGET_MS: bad }) } catch (e) { expect((e as ConfigError).errors).toEqual([(read as { error: string }).error]) }
    }
    expect(() => readOption('baseUrl', {})).toThrow(/computed from other options/)
  })

  it('reports every bad value at once, naming the variable', () => {
    expect(() => loadConfig({ PORT: 'x', QUEUE: 'kafka', BASE_URL: 'not a url' })).toThrow(/PORT: "x".*\n.*BASE_URL.*\n.*QUEUE: "kafka"/)
  })

  // Rule: a configuration error may quote a value, never a password in it: the message goes to
  // the log (and to whoever reads the container's output), and a mistyped scheme is an easy slip.
  it('quotes a store URL it refuses without the password in it', () => {
    const message = (env: Record<string, string>) => {
      try {
        loadConfig(env)
      } catch (error) {
        return (error as Error).message
      }
      return ''
    }
    const store = message({ STORE_URL: 'mysql://app:s3cr3t-pw@db.internal:3306/switchyard' })
    expect(store).toMatch(/STORE_URL: "mysql:\/\/app:\*\*\*@db\.internal:3306\/switchyard" must start with/)
    expect(store).not.toContain('s3cr3t-pw')
    expect(message({ STORE_URL: 'REDIS://:s3cr3t-pw@cache:6379' })).not.toContain('s3cr3t-pw')
    expect(message({ API_URL: 'ftp://bot:s3cr3t-pw@api.example' })).not.toContain('s3cr3t-pw')
    expect(message({ AUTH_URL: 'https://bot:s3cr3t-pw@[bad' })).not.toContain('s3cr3t-pw')
  })
})
