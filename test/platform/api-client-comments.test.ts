// The comments API calls of the API client: the paths and bodies of the platform notes, and a
// POST that creates is retried only on answers that say it was not applied.
import { describe, expect, it } from 'vitest'
import { ApiClient } from '../../src/platform/api-client.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { silentLogger } from '../../src/util/logger.js'

function client(answers: number[]) {
  const seen: Array<{ method: string; url: string; body: unknown }> = []
  const fetchImpl = (async (url: string, init: RequestInit) => {
    seen.push({ method: init.method!, url: String(url), body: init.body ? JSON.parse(String(init.body)) : undefined })
    const status = answers.shift() ?? 200
    const body = status === 201 ? { data: { id: 9, text: 't', stringId: 1, type: 'issue', issueStatus: 'unresolved' } } : status === 200 ? { data: [{ data: { id: 3, text: 'x', stringId: 1, type: 'issue' } }] } : { error: { code: status } }
    return new Response(JSON.stringify(body), { status, headers: status === 429 ? { 'retry-after': '0' } : {} })
  }) as unknown as typeof fetch
  const api = new ApiClient({ config: { apiUrl: 'http://service.test', apiMaxInFlight: 20, apiMaxAttempts: 5, apiTimeoutMs: 5000 }, tokens: new StaticTokenProvider(new Map([['*', 't']])), log: silentLogger(), fetch: fetchImpl, baseDelayMs: 1 })
  return { api, seen }
}

describe('ApiClient: comments', () => {
  it('POST, GET and PATCH as the platform notes describe them', async () => {
    const { api, seen } = client([201, 200, 200])
    expect(await api.createComment('acme', 7, { stringId: 1, targetLanguageId: 'de', text: 't', type: 'issue', issueType: 'translation_mistake' })).toMatchObject({ id: 9 })
    expect(await api.listOpenIssues('acme', 7, 1, 'de')).toEqual([{ id: 3, text: 'x', stringId: 1, type: 'issue' }])
    await api.resolveIssue('acme', 7, 3)
    expect(seen.map((s) => `${s.method} ${s.url.replace('http://service.test', '')}`)).toEqual([
      'POST /api/v2/projects/7/comments',
      'GET /api/v2/projects/7/comments?stringId=1&type=issue&targetLanguageId=de&issueStatus=unresolved&limit=500&offset=0',
      'PATCH /api/v2/projects/7/comments/3',
    ])
    expect(seen[0]!.body).toEqual({ stringId: 1, targetLanguageId: 'de', text: 't', type: 'issue', issueType: 'translation_mistake' })
    expect(seen[2]!.body).toEqual([{ op: 'replace', path: '/issueStatus', value: 'resolved' }])
  })

  it('a POST is retried after 429 (not applied), never after a 5XX (maybe applied)', async () => {
    const retried = client([429, 201])
    await retried.api.createComment('acme', 7, { stringId: 1, targetLanguageId: 'de', text: 't', type: 'issue', issueType: 'translation_mistake' })
    expect(retried.seen).toHaveLength(2)
    const once = client([502, 201])
    await expect(once.api.createComment('acme', 7, { stringId: 1, targetLanguageId: 'de', text: 't', type: 'issue', issueType: 'translation_mistake' })).rejects.toMatchObject({ status: 502 })
    expect(once.seen).toHaveLength(1)
    // The look-up and the resolution are safe to repeat.
    const get = client([503, 200])
    expect(await get.api.listOpenIssues('acme', 7, 1, 'de')).toHaveLength(1)
  })
})
