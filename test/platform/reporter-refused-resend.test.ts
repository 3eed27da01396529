// A refused output is sent again as "" (outcomes.ts: rejected -> report ""), while the update
// that was refused is still under way (its bisection): those "" decisions wait for it. When as many
// of them as fill a PATCH come back together, they must go, not wait for their own wait again.
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { ApiClient } from '../../src/platform/api-client.js'
import { Reporter, type ReporterHooks } from '../../src/platform/reporter.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import type { Job } from '../../src/protocol/job.js'
import { createLogger } from '../../src/util/logger.js'
import { language } from '../support/events.js'
import { contractFake } from '../support/contract-fake.js'

const API = 'http://api.test'

function job(stringId: number): Job {
  return {
    key: `k${stringId}`, organizationId: '200000', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1,
    string: { key: `key.${stringId}`, context: '', maxLength: 0, text: 'Text', isPlural: false, fileType: 'json', filePath: '/ui.json', labelIds: [] },
    sourceLanguage: language('en'), targetLanguage: language('de'), batchId: 'b1', attempts: 0,
  }
}

describe('Reporter: outputs refused and sent again as ""', () => {
  it.each([
    [4, 4, 5],
    [6, 4, 5],
    [500, 500, 250],
  ])('a whole PATCH of refused strings (%i, PATCHes of %i) parked with "" after the refusal, once each, without spinning', async (n, maxBatch, lingerMs) => {
    const fake = contractFake({ apiUrl: API, ports: ['approved'] })
    const log = createLogger({ level: 'silent' })
    const config = loadConfig({}, { apiUrl: API, apiMaxAttempts: 1 })
    const api = new ApiClient({ config, tokens: new StaticTokenProvider(new Map([['*', 'token']])), log, fetch: fake.fetch, baseDelayMs: 1, maxDelayMs: 5 })
    const reported: number[] = []
    let adds = 0
    let reporter!: Reporter
    const hooks: ReporterHooks = {
      reported: (ds) => void reported.push(...ds.map((d) => d.job.stringId)),
      superseded: () => undefined,
      // As outcomes.ts does: the string is parked at the service with "".
      rejected: (d) => reporter.add({ job: d.job, port: '' }),
      dropped: () => undefined,
      parked: () => undefined,
      held: () => undefined,
    }
    reporter = new Reporter({ api, log, lingerMs, maxBatch, hooks })
    // A guard: the bug re-adds the same decisions for ever in microtasks (the event loop starves).
    const add = reporter.add.bind(reporter)
    reporter.add = (d) => {
      if (++adds > 10 * n) throw new Error('the reporter keeps re-adding the same decisions')
      add(d)
    }
    for (let i = 1; i <= n; i++) reporter.add({ job: job(i), port: 'retired' })
    await reporter.flush()
    expect(adds).toBeLessThan(4 * n)
    expect(reported.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1))
    const parkedWithEmpty = fake.patches.flatMap((p) => p.ops).filter((o) => o.value === '').map((o) => o.path)
    expect(parkedWithEmpty).toHaveLength(n)
  })
})
