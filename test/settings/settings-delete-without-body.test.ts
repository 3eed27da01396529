// Section 4.6 of the interface document: "Step deleted | DELETE <deleteSettingsUrl> | (body) none shown | any 2XX status; the
// app may delete all stored settings of that step". Section 7: a deletion not answered with 2XX
// is not confirmed. A DELETE that carries no body (nothing names the step) must still be
// confirmed with a 2XX, touching nothing; the worker answered 400 ("request body is invalid").
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORG, signToken, startHarness, type Harness } from './helpers.js'

let h: Harness
beforeAll(async () => {
  h = await startHarness()
})
afterAll(async () => h.close())

describe('DELETE deleteSettingsUrl without a body', () => {
  it('is confirmed with a 2XX and deletes nothing', async () => {
    const token = await signToken()
    const ref = { organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }
    await h.service.put(ref, { tone: 'informal' })
    const res = await fetch(`${h.url}/steps/qa-gate/settings`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBeGreaterThanOrEqual(200)
    expect(res.status).toBeLessThan(300)
    expect(await h.service.get(ref)).toEqual({ tone: 'informal' })
  })

  it('still refuses a token that is not valid (401)', async () => {
    const res = await fetch(`${h.url}/steps/qa-gate/settings`, { method: 'DELETE' })
    expect(res.status).toBe(401)
  })
})
