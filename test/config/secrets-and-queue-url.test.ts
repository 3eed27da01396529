// Values that worked before the configuration checks were tightened must go on working: a secret
// is taken as written, and QUEUE_REDIS_URL in every form ioredis takes.
import { expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'

it('a METRICS_TOKEN of spaces does not leave /metrics open (it was closed before: no bearer matches it)', () => {
  // A token of spaces is a token (no bearer matches it): taken for unset, /metrics would open.
  expect(loadConfig({ METRICS_TOKEN: '   ' }).metricsToken).toBeTruthy()
})

it('a QUEUE_REDIS_URL that ioredis takes (host:port, a socket path, upper-case scheme) is still accepted', () => {
  for (const url of ['redis-queue:6379', '/var/run/redis/redis.sock', 'REDIS://redis-queue:6379']) {
    expect(() => loadConfig({ QUEUE: 'bullmq', QUEUE_REDIS_URL: url }), url).not.toThrow()
  }
})
