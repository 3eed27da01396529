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
