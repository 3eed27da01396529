import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { renderOperatorPage } from '../../src/server/operator-page.js'

describe('operator page: recent events', () => {
  const config = loadConfig({}, { clientId: 'c', clientSecret: 's', authUrl: 'http://127.0.0.1:9' })
  it('lists the activity log, escaped', () => {
    const html = renderOperatorPage(config, [], Date.now(), [
      { at: '2026-11-21T08:00:00.000Z', event: 'project.translated', domain: 'acme' },
      { at: '2026-11-21T08:00:01.000Z', event: '<script>alert(1)</script>', domain: 'acme' },
    ])
    expect(html).toContain('<h2>Recent events</h2>')
    expect(html).toContain('<code>project.translated</code>')
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html).not.toContain('<script>alert(1)</script>')
  })
  it('says so when nothing arrived', () => {
    expect(renderOperatorPage(config, [], Date.now(), [])).toContain('No events other than strings have arrived yet.')
  })
})
