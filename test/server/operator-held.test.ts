import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { renderOperatorPage } from '../../src/server/operator-page.js'

describe('operator page: held strings', () => {
  const config = loadConfig({}, { clientId: 'c', clientSecret: 's', authUrl: 'http://127.0.0.1:9' })
  it('lists each held organization with its strings, why, and when it is tried again', () => {
    const now = Date.parse('2026-11-23T10:00:00Z')
    const html = renderOperatorPage(config, [], now, undefined, [
      { domain: 'acme', cause: 'forbidden', reason: '403: <may not> update', since: now - 60_000, strings: 1200, nextTryAt: now + 30_000 },
      { domain: 'beta', cause: 'disconnected', reason: 'refresh refused', since: now, strings: 3, nextTryAt: now + 1000 },
    ])
    expect(html).toContain('<h2>Held strings</h2>')
    expect(html).toMatch(/<strong>acme<\/strong><\/td><td>1200<\/td><td>the service refuses its status updates/)
    expect(html).toContain('403: &lt;may not&gt; update')
    expect(html).toContain('in 30 s')
    expect(html).toMatch(/<strong>beta<\/strong><\/td><td>3<\/td><td>no usable token: reconnect it/)
  })
  it('lists an organization being tried with its first since, its strings, and "trying now"', () => {
    const now = Date.parse('2026-11-23T10:00:00Z')
    const html = renderOperatorPage(config, [], now, undefined, [{ domain: 'acme', cause: 'forbidden', reason: '403', since: now - 240_000, strings: 200_000 }])
    expect(html).toMatch(/<strong>acme<\/strong><\/td><td>200000<\/td><td>the service refuses its status updates/)
    expect(html).toContain('<td>2026-11-23T09:56:00.000Z</td><td>trying now</td>')
    expect(html).not.toContain('NaN')
    expect(html).toContain('An organization stays listed while it is tried, until a status update for it goes through')
  })
  it('says nothing about held strings when there are none', () => {
    expect(renderOperatorPage(config, [], Date.now(), undefined, [])).not.toContain('Held strings')
  })
})
