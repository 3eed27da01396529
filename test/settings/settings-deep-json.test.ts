// a settings callback whose JSON body is nested deeply (well under the 100 kb body limit)
// must be refused with a clear 4XX, like any other invalid settings, not answered 500.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { makeTarget, ORG, signToken, startHarness, type Harness } from './helpers.js'

let h: Harness
beforeAll(async () => {
  // An open schema, as a pipeline's `settings:` is by default (no additionalProperties: false).
  h = await startHarness({}, [makeTarget('qa-gate', { type: 'object', properties: { tone: { type: 'string', default: 'formal' } } })])
})
afterAll(async () => {
  await h.close()
})

it('refuses deeply nested settings with a 4XX and a reason, not a 500', async () => {
  const depth = 10_000 // 20 kB of brackets
  const body = `{"organizationId":"${ORG}","projectId":7,"workflowId":1,"stepId":4,"settings":{"tone":"formal","extra":${'['.repeat(depth)}${']'.repeat(depth)}}}`
  expect(Buffer.byteLength(body)).toBeLessThan(100 * 1024)
  const res = await fetch(`${h.url}/steps/qa-gate/settings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await signToken()}`, 'content-type': 'application/json' },
    body,
  })
  const text = await res.text()
  expect(res.status, text).toBe(400)
  expect(JSON.parse(text)).toMatchObject({ error: 'settings are invalid', errors: ['settings: nested deeper than 32 levels'] })
})

it('takes settings nested as deep as a step may need', async () => {
  const nested = (n: number): unknown => (n === 0 ? 'x' : { a: nested(n - 1) })
  const res = await fetch(`${h.url}/steps/qa-gate/settings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await signToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organizationId: ORG, projectId: 7, workflowId: 1, stepId: 4, settings: { tone: 'formal', extra: nested(30) } }),
  })
  expect(res.status, await res.text()).toBe(200)
})
