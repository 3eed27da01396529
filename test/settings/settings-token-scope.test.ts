// A settings token reaches only what it names: the project of its context (not another project,
// not a template), for at most a day, and not from the future (issue 17).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORG, signToken, startHarness, type Harness } from './helpers.js'

let h: Harness
beforeAll(async () => {
  h = await startHarness()
})
afterAll(async () => {
  await h.close()
})

const now = () => Math.floor(Date.now() / 1000)

async function call(method: string, token: string, body?: unknown, query = '') {
  const res = await fetch(`${h.url}/steps/qa-gate/settings${query}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, text: await res.text() }
}

describe('scope of a settings token', () => {
  it('a project_id that is present but no project id is refused (401), never taken for the template editor\'s wider reach', async () => {
    const body = { organizationId: ORG, projectId: 99, workflowId: 1, stepId: 5, settings: { tone: 'formal' } }
    for (const projectId of ['abc', -3, 1.5, true] as unknown as number[]) {
      const res = await call('POST', await signToken({ projectId }), body)
      expect([projectId, res.status, res.text]).toEqual([projectId, 401, expect.stringMatching(/project_id is not a project id/)])
    }
    expect(await h.service.get({ organizationId: ORG, projectId: 99, stepId: 5, moduleKey: 'qa-gate' })).toBeUndefined()
    // No project at all (null): the template editor's token, as before.
    expect((await call('POST', await signToken({ projectId: null }), body)).status).toBe(200)
  })

  it('a token for project 42 saves and deletes project 42 only', async () => {
    const token = await signToken({ projectId: 42 })
    const own = { organizationId: ORG, projectId: 42, workflowId: 1, stepId: 5 }
    expect((await call('POST', token, { ...own, settings: { tone: 'formal' } })).status).toBe(200)
    const other = { organizationId: ORG, projectId: 777, workflowId: 1, stepId: 5 }
    const saved = await call('POST', token, { ...other, settings: { tone: 'informal' } })
    expect(saved.status).toBe(403)
    expect(saved.text).toMatch(/project/)
    expect(await h.service.get({ organizationId: ORG, projectId: 777, stepId: 5, moduleKey: 'qa-gate' })).toBeUndefined()
    await h.service.put({ organizationId: ORG, projectId: 777, stepId: 6, moduleKey: 'qa-gate' }, { tone: 'formal' })
    expect((await call('DELETE', token, { ...other, stepId: 6 })).status).toBe(403)
    expect(await h.service.get({ organizationId: ORG, projectId: 777, stepId: 6, moduleKey: 'qa-gate' })).toEqual({ tone: 'formal' })
    expect((await call('DELETE', token, own)).status).toBe(200)
  })

  it('a token for a project may not touch a template, nor read it', async () => {
    const token = await signToken({ projectId: 42 })
    const template = { organizationId: ORG, templateId: 9, stepId: 5 }
    expect((await call('POST', token, { ...template, settings: { tone: 'formal' } })).status).toBe(403)
    await h.service.put({ organizationId: ORG, templateId: 9, stepId: 7, moduleKey: 'qa-gate' }, { tone: 'formal' })
    expect((await call('DELETE', token, { ...template, stepId: 7 })).status).toBe(403)
    expect(await h.service.get({ organizationId: ORG, templateId: 9, stepId: 7, moduleKey: 'qa-gate' })).toEqual({ tone: 'formal' })
    expect((await call('GET', token, undefined, '?stepId=7&templateId=9')).status).toBe(403)
  })

  it('a token without a project (the template editor) still manages templates', async () => {
    const token = await signToken({ projectId: null })
    expect((await call('POST', token, { organizationId: ORG, templateId: 9, stepId: 8, settings: { tone: 'formal' } })).status).toBe(200)
  })

  it('refuses a token valid for more than a day', async () => {
    const token = await signToken({ iat: now(), expiresIn: now() + 365 * 86400 })
    const res = await call('POST', token, { organizationId: ORG, projectId: 7, workflowId: 1, stepId: 5, settings: { tone: 'formal' } })
    expect(res.status).toBe(401)
    expect(res.text).toMatch(/day|lifetime/)
  })

  it('refuses a token issued in the future, allowing a minute of skew', async () => {
    const body = { organizationId: ORG, projectId: 7, workflowId: 1, stepId: 5, settings: { tone: 'formal' } }
    const future = await signToken({ iat: now() + 3600, expiresIn: now() + 3900 })
    const res = await call('POST', future, body)
    expect(res.status).toBe(401)
    expect(res.text).toMatch(/future|iat/)
    const skewed = await signToken({ iat: now() + 30, expiresIn: now() + 330 })
    expect((await call('POST', skewed, body)).status).toBe(200)
  })
})
