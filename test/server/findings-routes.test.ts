// GET /findings: the findings log as JSON or as a page, behind the operator password, through the
// worker `switchyard serve` starts; and the operator page's search form that leads to it.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startServe } from '../../src/cli/serve.js'
import { loadConfig } from '../../src/config/load-config.js'
import { parseFindingsQuery, renderFindingsPage } from '../../src/server/findings-routes.js'
import { renderOperatorPage } from '../../src/server/operator-page.js'
import { silentLogger } from '../../src/util/logger.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-findings-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const basic = (password: string) => `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`
const entry = {
  domain: 'acme', projectId: 7, languageId: 'de', stringId: 1234, at: '2026-11-23T01:00:00.000Z', organizationId: '1', stepId: 11,
  key: 'welcome.title', pipeline: 'qa-gate', outcome: 'translated', output: 'failed', sentBack: true,
  findings: [{ check: 'tags', severity: 'error' as const, message: 'Tag <b> is not closed.', quote: '<b>Hallo', in: 'translation' as const }],
}

describe('GET /findings', () => {
  it('needs the operator password, then answers JSON by string id or key', async () => {
    const config = loadConfig({}, { port: 0, host: '127.0.0.1', storeUrl: 'memory://', dataDir: dir, operatorPassword: 'correct horse', reconcileIntervalMs: 0 })
    const running = await startServe(config, silentLogger())
    try {
      const url = running.worker.url
      await running.worker.findings.record(entry)
      expect((await fetch(`${url}/findings?stringId=1234`)).status).toBe(401)
      expect((await fetch(`${url}/findings?stringId=1234`, { headers: { authorization: basic('wrong') } })).status).toBe(401)
      const auth = { authorization: basic('correct horse') }
      const byId = await fetch(`${url}/findings?stringId=1234`, { headers: auth })
      expect(byId.status).toBe(200)
      expect(byId.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await byId.json()).toEqual({ data: [entry] })
      expect(await (await fetch(`${url}/findings?key=welcome.title`, { headers: auth })).json()).toEqual({ data: [entry] })
      expect(await (await fetch(`${url}/findings?stringId=999`, { headers: auth })).json()).toEqual({ data: [] })
      const bad = await fetch(`${url}/findings?stringId=abc`, { headers: auth })
      expect(bad.status).toBe(400)
      expect(await bad.json()).toEqual({ error: { code: 'bad_query', message: 'stringId must be a number' } })
      // A browser gets the page, escaped.
      const page = await fetch(`${url}/findings?stringId=1234`, { headers: { ...auth, accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } })
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/)
      const html = await page.text()
      expect(html).toContain('Tag &lt;b&gt; is not closed.')
      expect(html).toContain('<code>&lt;b&gt;Hallo</code>')
      expect(html).not.toContain('<b>Hallo')
    } finally {
      await running.stop()
    }
  })
})

describe('findings page and query', () => {
  it.each([
    [{ stringId: '12' }, { ok: true, query: { stringId: 12 } }],
    [{ key: ' a.b ', languageId: 'de' }, { ok: true, query: { key: 'a.b', languageId: 'de' } }],
    [{}, { ok: false, error: 'give a stringId or a key' }],
    [{ stringId: '1e3' }, { ok: false, error: 'stringId must be a number' }],
  ])('parseFindingsQuery(%j)', (q, expected) => expect(parseFindingsQuery(q)).toEqual(expected))

  it('says when nothing is logged, and the operator page links to the search', () => {
    expect(renderFindingsPage({ stringId: 5 }, [])).toContain('Nothing is logged for this string')
    const config = loadConfig({}, {})
    expect(renderOperatorPage(config, [])).toMatch(/<h2>Findings<\/h2>[\s\S]*<form method="get" action="\/findings">/)
  })
})
