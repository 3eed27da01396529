// The skip-or-fail decision of test/support/services.ts, against a closed port (never by stopping
// the real services, which other test runs use).
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { serviceStatus, serviceUrl } from './services.js'

describe('serviceStatus', () => {
  it('uses the local defaults, or the SWITCHYARD_TEST_*_URL override', () => {
    expect(serviceUrl('redis', {})).toBe('redis://127.0.0.1:6379')
    expect(serviceUrl('postgres', {})).toBe('postgres://postgres@127.0.0.1:5432/test')
    expect(serviceUrl('redis', { SWITCHYARD_TEST_REDIS_URL: 'redis://10.0.0.1:7000' })).toBe('redis://10.0.0.1:7000')
  })

  it('skips, naming the service, where it was looked for and how to start it, when nothing listens', async () => {
    const s = await serviceStatus('redis', { SWITCHYARD_TEST_REDIS_URL: 'redis://127.0.0.1:1' })
    expect(s.decision).toBe('skip')
    expect(s.reason).toMatch(/^redis is not reachable at 127\.0\.0\.1:1: skipping the redis tests; start one with `redis-server/)
    expect(s.reason).toContain('SWITCHYARD_TEST_REDIS_URL')
  })

  it('fails instead of skipping when CI is set', async () => {
    const s = await serviceStatus('postgres', { CI: 'true', SWITCHYARD_TEST_POSTGRES_URL: 'postgres://postgres@127.0.0.1:1/test' })
    expect(s.decision).toBe('fail')
    expect(s.reason).toMatch(/^postgres is not reachable at 127\.0\.0\.1:1 and CI is set/)
  })

  it('runs the tests when something accepts connections there', async () => {
    const server = net.createServer((socket) => socket.destroy())
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as net.AddressInfo
    try {
      const s = await serviceStatus('redis', { CI: 'true', SWITCHYARD_TEST_REDIS_URL: `redis://127.0.0.1:${port}` })
      expect(s).toMatchObject({ decision: 'available', host: '127.0.0.1', port, reason: '' })
    } finally {
      await new Promise((r) => server.close(r))
    }
  })
})
