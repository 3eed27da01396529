// A queued job as the job processor gets it (one string of project 7, step 11, German), for tests
// that drive createJobProcessor directly.
import type { Job } from '../../src/protocol/job.js'

export const lang = (id: string) => ({ id, name: id, locale: id, pluralCategoryNames: ['one', 'other'] }) as never

export const job = (stringId: number, extra: Partial<Job> = {}): Job =>
  ({
    key: `k${stringId}`, organizationId: '1', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'de', stringId, revision: 1, batchId: `b${stringId}`, attempts: 0,
    string: { key: `s.${stringId}`, context: 'ctx', maxLength: 20, text: `source ${stringId}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [3] },
    sourceLanguage: lang('en'), targetLanguage: lang('de'),
    ...extra,
  }) as Job

/**
 * String `i` of an organization (project 1, step 2, German), keyed as the queue keys it: for tests
 * of the journals, where organizations are told apart and strings counted.
 */
export const orgJob = (organization: string, i: number): Job => ({
  key: `${organization}|1|2|de|${i}|1`, organizationId: organization, domain: organization.toLowerCase(), moduleKey: 'm', projectId: 1, stepId: 2, languageId: 'de', stringId: i, revision: 1,
  string: { key: `k${i}`, context: '', maxLength: 0, text: `t${i}`, isPlural: false, fileType: 'json', filePath: '/a.json', labelIds: [] },
  sourceLanguage: { id: 'en' } as Job['sourceLanguage'], targetLanguage: { id: 'de' } as Job['targetLanguage'], batchId: 'b', attempts: 0,
})

/** Strings `from` .. `from + n - 1` of an organization. */
export const orgBatch = (organization: string, from: number, n: number): Job[] => Array.from({ length: n }, (_, i) => orgJob(organization, from + i))
