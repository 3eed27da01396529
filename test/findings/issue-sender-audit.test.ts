// The issue work against the comments API as the platform notes describe it and docs/findings.md
// promises it, in the cases an audit found wrong (each test failed on the code before its fix):
// resolving goes on past an issue that fails or is gone, an answer without a list is no answer,
// the look-up reads every page, a reviewer's issue quoting the worker's stays open, a refused
// look-up still resolves what is out of date, and a failing look-up costs 3 attempts, not 9.
import { expect, it } from 'vitest'
import { findingsHash } from '../../src/findings/finding-records.js'
import { FindingsLog, type FindingsEntry } from '../../src/findings/findings-log.js'
import { IssueSender, unsureMark, type IssueSenderOptions } from '../../src/findings/issue-sender.js'
import type { FindingRecord } from '../../src/protocol/findings.js'
import { ApiClient } from '../../src/platform/api-client.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { createStores, type Stores } from '../../src/store/create-stores.js'
import { silentLogger } from '../../src/util/logger.js'
import { fakeServiceFetch } from '../support/fake-pipelines.js'

const ref = { domain: 'acme', projectId: 7, languageId: 'de', stringId: 42 }
const missing: FindingRecord[] = [{ check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', quote: '{name}', in: 'source' }]
const tagged: FindingRecord[] = [{ check: 'tags', severity: 'error', message: 'Tag <b> is not closed.', quote: '<b>Save', in: 'translation' }]

function entryOf(records: FindingRecord[] | 'passed', r = ref): Omit<FindingsEntry, 'issues'> {
  const sentBack = records !== 'passed'
  return { ...r, at: new Date().toISOString(), organizationId: '1', stepId: 11, key: 'k', pipeline: 'qa-gate', outcome: sentBack ? 'translated' : 'approved', output: sentBack ? 'failed' : 'passed', sentBack, ...(sentBack ? {} : { resolves: true }), findings: sentBack ? records : [], ...(sentBack ? { hash: findingsHash(records) } : {}) }
}

async function setup(answer?: Parameters<typeof fakeServiceFetch>[0], wrap: (f: typeof fetch) => typeof fetch = (f) => f, extra: Partial<IssueSenderOptions> = {}) {
  const stores: Stores = await createStores('memory://')
  const service = fakeServiceFetch(answer, { apiUrl: 'http://service.test', accessTokens: ['t'] })
  const api = new ApiClient({ config: { apiUrl: 'http://service.test', apiMaxInFlight: 20, apiMaxAttempts: 8, apiTimeoutMs: 5000 }, tokens: new StaticTokenProvider(new Map([['*', 't']])), log: silentLogger(), fetch: wrap(service.fetch), baseDelayMs: 1, maxDelayMs: 2 })
  const findings = new FindingsLog(stores.findings, { retentionMs: 86_400_000, maxStrings: 100, lingerMs: 1 })
  const issues = new IssueSender({ api, findings, log: silentLogger(), concurrency: 2, retryDelayMs: 1, lateLandingMs: 0, ...extra })
  const outcome = async (records: FindingRecord[] | 'passed', r = ref) => {
    const saved = await findings.record(entryOf(records, r))
    if (records !== 'passed') issues.sentBack({ ...r, pipelineName: 'QA gate', findings: records })
    else if (saved.unsure || saved.issues?.some((i) => i.status === 'unresolved')) issues.passed(r)
    await issues.flush()
  }
  const open = () => service.comments.filter((c) => c.issueStatus === 'unresolved')
  return { stores, service, issues, findings, outcome, open }
}

// A pass resolves every issue the worker raised on the string: one that fails is left for later
// and the others still go (were the loop to stop at it, an issue that always fails first, such as
// one a person deleted, would keep the string's current issue open for good); one that is gone
// (404) is remembered as resolved.

it('a pass resolves the current issue even when an older one was deleted at the service (404)', async () => {
  let failPatchOf: number | undefined
  const s = await setup((req) => (req.method === 'PATCH' && failPatchOf !== undefined && req.url.endsWith(`/comments/${failPatchOf}`) ? { status: 503, body: { error: { code: 503 } } } : undefined))
  await s.outcome(missing) // issue 1
  failPatchOf = 1 // resolving the out-of-date issue fails for a while (5XX through the retries)
  await s.outcome(tagged) // issue 2 raised, issue 1 left open ("left for the catch-up or the string's next outcome")
  failPatchOf = undefined
  expect(s.open().map((c) => c.id)).toEqual([1, 2])
  // A person deletes the out-of-date issue 1 at the service.
  s.service.comments.splice(s.service.comments.findIndex((c) => c.id === 1), 1)
  // The string passes: its open issue 2 must be resolved (docs/findings.md, "When the string passes").
  await s.outcome('passed')
  expect(s.open().map((c) => c.id)).toEqual([])
  // The deleted one is remembered as resolved: not tried first at every pass and catch-up again.
  expect((await s.findings.get(ref))?.issues?.map((i) => [i.id, i.status])).toEqual([[1, 'resolved'], [2, 'resolved']])
  await s.stores.close()
})

it('a pass resolves the other issues when one PATCH fails with 5XX (as a raise and a 403 do)', async () => {
  let failPatchOf: number | undefined
  const s = await setup((req) => (req.method === 'PATCH' && failPatchOf !== undefined && req.url.endsWith(`/comments/${failPatchOf}`) ? { status: 503, body: { error: { code: 503 } } } : undefined))
  await s.outcome(missing)
  failPatchOf = 1
  await s.outcome(tagged)
  // The string passes while issue 1 still cannot be resolved: issue 2 should still go.
  await s.outcome('passed')
  expect(s.open().map((c) => c.id)).toEqual([1])
  await s.stores.close()
})

// A 2XX answer to the look-up without a `data` list is no answer (as for every read of the API
// client), never "no open issue": read as the service's word, it would mark the remembered open
// issues resolved without a PATCH (the issue then stays open at the service for good), or have a
// raise POST a second issue.

it('a pass after a lost POST resolves the open issue even if one look-up answers 200 without a list', async () => {
  let emptyGets = 0
  const s = await setup((req) => (req.method === 'GET' && emptyGets-- > 0 ? { status: 200, body: {} } : undefined))
  await s.outcome(missing) // issue 1, remembered open
  expect(s.open().map((c) => c.id)).toEqual([1])
  // A later raise's POST lost its answer: the entry is unsure (docs: "whoever reads the entry next looks").
  await s.findings.update(ref, (e) => e && { ...e, unsure: unsureMark() })
  emptyGets = 1 // a proxy answers the look-up 200 `{}`
  await s.outcome('passed')
  expect(s.open().map((c) => c.id)).toEqual([])
  await s.stores.close()
})

it('a raise after a lost POST does not POST a duplicate when the look-up answers 200 without a list', async () => {
  let emptyGets = 0
  const s = await setup((req) => (req.method === 'GET' && emptyGets-- > 0 ? { status: 200, body: {} } : undefined))
  await s.outcome(missing)
  await s.findings.update(ref, (e) => e && { ...e, unsure: unsureMark() })
  emptyGets = 1
  await s.outcome(missing)
  expect(s.service.comments.filter((c) => c.issueStatus === 'unresolved')).toHaveLength(1)
  await s.stores.close()
})

// The look-up reads every page (platform notes: GET comments pages with `limit` up to 500 and
// `offset`): a string with more than 500 unresolved issues in the language (reviewers' ones) may
// hold the worker's own on a later page, and a worker that forgot it would raise a second one.

/** A service that pages GET comments as the platform does (the contract fake answers everything at once). */
const paging = (f: typeof fetch) => (async (input: string | URL, init?: RequestInit) => {
  const url = new URL(String(input))
  const res = await f(input, init)
  if ((init?.method ?? 'GET') !== 'GET' || !/\/comments$/.test(url.pathname)) return res
  const body = (await res.json()) as { data: unknown[] }
  const limit = Number(url.searchParams.get('limit') ?? 25)
  const offset = Number(url.searchParams.get('offset') ?? 0)
  return new Response(JSON.stringify({ data: body.data.slice(offset, offset + limit), pagination: { offset, limit } }), { status: 200 })
}) as typeof fetch

it('finds its own issue beyond the first 500 unresolved ones of the string (memory lost)', async () => {
  const s = await setup(undefined, paging)
  for (let i = 0; i < 500; i++) s.service.comments.push({ id: 1000 + i, projectId: 7, stringId: 42, languageId: 'de', text: `reviewer note ${i}`, type: 'issue', issueType: 'general_question', issueStatus: 'unresolved' })
  await s.outcome(missing) // the worker's issue, the 501st unresolved one
  expect(s.service.comments.filter((c) => c.text.includes('[switchyard:'))).toHaveLength(1)
  await s.stores.findings.clear() // the store forgot (docs: "it asks the service ... recognises its own by the reference")
  await s.outcome(missing)
  expect(s.service.comments.filter((c) => c.text.includes('[switchyard:') && c.issueStatus === 'unresolved')).toHaveLength(1)
  await s.stores.close()
})

// The worker knows its own issues by their text as it writes it (first and last lines), not by the
// reference alone: a reviewer's issue quoting the worker's (reference included) is a person's and
// stays open (docs/findings.md: "only those: an issue a reviewer opened stays").

it('a reviewer\'s issue quoting the worker\'s issue text is not resolved as a copy', async () => {
  const s = await setup()
  await s.outcome(missing) // the worker's issue 1
  const own = s.service.comments[0]!
  // A reviewer disagrees, quoting the issue (its last line carries the reference).
  s.service.comments.push({ id: 2, projectId: 7, stringId: 42, languageId: 'de', type: 'issue', issueType: 'general_question', issueStatus: 'unresolved', text: `I think this check is wrong, see:\n> ${own.text.split('\n').at(-1)}` })
  expect(own.text).toContain(`[switchyard:${findingsHash(missing)}]`)
  await s.stores.findings.clear() // the store forgot: the next raise looks the string's issues up
  await s.outcome(missing)
  expect(s.service.comments.find((c) => c.id === 2)?.issueStatus).toBe('unresolved')
  await s.stores.close()
})

// docs/findings.md: a 403 on a look-up or a POST pauses raising in the project, and the out-of-date
// issues the worker knows of on the string are still resolved: on the look-up's path as on the
// POST's.

it('a look-up refused with 403 still resolves the out-of-date issue the worker knows of', async () => {
  let refuseGets = false
  const s = await setup((req) => (req.method === 'GET' && refuseGets ? { status: 403, body: { error: { code: 403, message: 'Forbidden' } } } : undefined))
  await s.outcome(missing) // issue 1, remembered open
  // An earlier POST lost its answer: the next raise looks first.
  await s.findings.update(ref, (e) => e && { ...e, unsure: unsureMark() })
  refuseGets = true
  await s.outcome(tagged) // new findings: issue 1 is out of date
  expect(s.issues.counts.refused).toBe(1)
  expect(s.open().map((c) => c.id)).toEqual([])
  await s.stores.close()
})

// docs/findings.md: a failed issue request (429, 5XX, network) is retried a bounded number of times
// (3 attempts). The raise runs again only when a POST's answer was lost, never for a look-up that
// failed: that would be 3 attempts for each of 3 runs, in the organization's budget, during an outage.

it('a look-up failing with 503 is attempted 3 times, not 9', async () => {
  const s = await setup((req) => (req.method === 'GET' ? { status: 503, body: { error: { code: 503 } } } : undefined), undefined, { maxAttempts: 3 })
  await s.outcome(missing)
  expect(s.issues.counts.failed).toBe(1)
  expect(s.service.log.filter((l) => l === 'GET comments').length).toBeLessThanOrEqual(3)
  await s.stores.close()
})
