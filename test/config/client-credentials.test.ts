// The start-up check refuses CLIENT_ID without CLIENT_SECRET: the worker could start an
// authorization (the id is enough for that) but never exchange or refresh a token, and it could
// not verify a single settings callback. Failing at start says what to set, instead of an
// organization that connects and then silently stops.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli/main.js'
import { ConfigError, loadConfig } from '../../src/config/load-config.js'

describe('CLIENT_ID without CLIENT_SECRET', () => {
  it('fails loadConfig with a message naming what to set', () => {
    let error: unknown
    try {
      loadConfig({ CLIENT_ID: 'app-1' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const [message] = (error as ConfigError).errors.filter((e) => e.startsWith('CLIENT_SECRET'))
    expect(message).toMatch(/CLIENT_SECRET: required when CLIENT_ID is set/)
    expect(message).toMatch(/refresh/)
  })

  it('accepts both, and neither (a worker without OAuth is valid, just not connectable)', () => {
    expect(loadConfig({ CLIENT_ID: 'app-1', CLIENT_SECRET: 's' }).clientSecret).toBe('s')
    expect(loadConfig({}).clientId).toBe('')
    expect(loadConfig({ CLIENT_SECRET: 's' }).clientId).toBe('')
  })

  describe('switchyard config --check', () => {
    const saved = { ...process.env }
    afterEach(() => {
      process.env = { ...saved }
      vi.restoreAllMocks()
    })

    it('exits 2 and prints the error', async () => {
      // vitest puts BASE_URL=/ (vite's) in the environment; the worker would refuse it too.
      process.env = { ...saved, BASE_URL: '', CLIENT_ID: 'app-1', CLIENT_SECRET: '' }
      const errors: string[] = []
      vi.spyOn(console, 'error').mockImplementation((s: unknown) => void errors.push(String(s)))
      vi.spyOn(console, 'log').mockImplementation(() => {})
      expect(await main(['config', '--check'])).toBe(2)
      expect(errors.join('\n')).toMatch(/CLIENT_SECRET: required when CLIENT_ID is set/)
    })
  })
})
