// The three keys of a job: the string (whatever its revision), the job (string and revision: the
// de-duplication identity), and the group that shares one pipeline run and one status PATCH.
import { describe, expect, it } from 'vitest'
import { groupKeyOf, jobKeyOf, stringKeyOf } from '../../src/protocol/job.js'

const base = { organizationId: '1001', domain: 'acme', moduleKey: 'qa', projectId: 7, stepId: 11, languageId: 'pt-BR', stringId: 42, revision: 3 }

describe('job keys', () => {
  it('name a string by organization, project, step, language and string id', () => {
    expect(stringKeyOf(base)).toBe('1001|7|11|pt-BR|42')
    const newer = { ...base, revision: 4 }
    expect(stringKeyOf(newer)).toBe(stringKeyOf(base))
  })

  it('name a job by its string and revision', () => {
    expect(jobKeyOf(base)).toBe('1001|7|11|pt-BR|42|3')
    expect(jobKeyOf({ ...base, revision: 4 })).not.toBe(jobKeyOf(base))
  })

  it('group jobs by organization, domain, project, step, language and module, whatever the string', () => {
    expect(groupKeyOf(base)).toBe('1001|acme|7|11|pt-BR|qa')
    const other = { ...base, stringId: 43 }
    expect(groupKeyOf(other)).toBe(groupKeyOf(base))
    // Another organization under the same domain too: a run reads its first job's organization's settings.
    for (const change of [{ organizationId: '1002' }, { domain: 'beta' }, { projectId: 8 }, { stepId: 12 }, { languageId: 'de' }, { moduleKey: 'other' }]) {
      expect(groupKeyOf({ ...base, ...change })).not.toBe(groupKeyOf(base))
    }
  })
})
