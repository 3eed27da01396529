import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLIENT_SECRET, makeTarget, ORG, signToken, startHarness, unsecuredToken, type Harness } from './helpers.js'

let h: Harness
let noSecret: Harness
let noClientId: Harness

beforeAll(async () => {
  h = await startHarness()
  noSecret = await startHarness({ clientSecret: '' })
  noClientId = await startHarness({ clientId: '' })
})
afterAll(async () => {
  await h.close()
  await noSecret.close()
  await noClientId.close()
})

const projectBody = (settings?: unknown) => ({ organizationId: Number(ORG), projectId: 7, workflowId: 11, stepId: 41, ...(settings === undefined ? {} : { settings }) })
const templateBody = (settings?: unknown) => ({ organizationId: ORG, templateId: 5, stepId: 42, ...(settings === undefined ? {} : { settings }) })

async function call(method: string, path: string, options: { token?: string; body?: unknown; raw?: string; type?: string; base?: Harness; query?: boolean } = {}) {
  const base = options.base ?? h
  const headers: Record<string, string> = {}
  let url = `${base.url}${path}`
  if (options.token && !options.query) headers.authorization = `Bearer ${options.token}`
  if (options.token && options.query) url += `${url.includes('?') ? '&' : '?'}jwtToken=${encodeURIComponent(options.token)}`
  let body: string | undefined
  if (options.raw !== undefined) body = options.raw
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined) headers['content-type'] = options.type ?? 'application/json'
  const res = await fetch(url, { method, headers, body })
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, text, json, headers: res.headers }
}

describe('authentication of the settings routes', () => {
  const refusals: Array<[string, () => Promise<string | undefined>, RegExp]> = [
    ['missing token', async () => undefined, /missing token/],
    ['expired token', () => signToken({ iat: Math.floor(Date.now() / 1000) - 7200, expiresIn: Math.floor(Date.now() / 1000) - 3600 }), /expired/],
    ['alg none', async () => unsecuredToken(), /HS256|malformed/],
    ['HS512', () => signToken({ alg: 'HS512' }), /HS256/],
    ['wrong secret', () => signToken({ secret: 'not-the-client-secret-at-all-0123456789' }), /signature/],
    ['module mismatch', () => signToken({ module: 'other-step' }), /module "other-step"/],
    ['aud mismatch', () => signToken({ aud: 'someone-else' }), /audience/],
    ['garbage', async () => 'not.a.jwt', /malformed|verified/],
  ]
  for (const [name, make, reason] of refusals) {
    for (const method of ['GET', 'POST', 'DELETE']) {
      it(`refuses ${method} with ${name} (401, no token echoed)`, async () => {
        const token = await make()
        const res = await call(method, '/steps/qa-gate/settings', { token, body: method === 'GET' ? undefined : projectBody(method === 'POST' ? { tone: 'formal' } : undefined) })
        expect(res.status).toBe(401)
        expect(res.json?.error ?? res.text).toMatch(reason)
        if (method !== 'GET') expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
        if (token) expect(res.text).not.toContain(token)
        expect(res.text).not.toContain(CLIENT_SECRET)
      })
    }
  }

  it('refuses a token in the query string as well as in the header', async () => {
    const res = await call('GET', '/steps/qa-gate/settings', { token: await signToken({ module: 'other-step' }), query: true })
    expect(res.status).toBe(401)
  })

  it('refuses everything, saying why, when CLIENT_SECRET is not configured', async () => {
    const res = await call('POST', '/steps/qa-gate/settings', { base: noSecret, token: await signToken(), body: projectBody({ tone: 'formal' }) })
    expect(res.status).toBe(401)
    expect(res.json.error).toMatch(/CLIENT_SECRET is not configured/)
    const page = await call('GET', '/steps/qa-gate/settings', { base: noSecret, token: await signToken(), query: true })
    expect(page.status).toBe(401)
  })

  it('skips the audience check when CLIENT_ID is not set', async () => {
    const res = await call('POST', '/steps/qa-gate/settings', { base: noClientId, token: await signToken({ aud: 'anyone' }), body: projectBody({ tone: 'formal' }) })
    expect(res.status).toBe(200)
  })

  it('answers 404 for a module key with no pipeline, even with a token for it', async () => {
    const res = await call('POST', '/steps/nope/settings', { token: await signToken({ module: 'nope' }), body: projectBody({ tone: 'formal' }) })
    expect(res.status).toBe(404)
  })

  it('refuses a body for another organization with 403', async () => {
    const res = await call('POST', '/steps/qa-gate/settings', { token: await signToken({ org: 999 }), body: projectBody({ tone: 'formal' }) })
    expect(res.status).toBe(403)
    expect(res.json.error).toMatch(/organization/)
    expect(await h.service.get({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' })).toBeUndefined()
  })
})

describe('update and delete', () => {
  it('saves, reads back and deletes the settings of a project workflow step', async () => {
    const token = await signToken()
    const ref = { organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }
    const saved = await call('POST', '/steps/qa-gate/settings', { token, body: projectBody({ tone: 'informal', retries: 4 }) })
    expect(saved.status).toBe(200)
    expect(saved.json).toEqual({ status: 'saved' })
    expect(await h.service.get(ref)).toEqual({ tone: 'informal', retries: 4 })
    // Another module's step with the same id is a different step.
    expect(await h.service.get({ ...ref, moduleKey: 'other-step' })).toBeUndefined()

    const deleted = await call('DELETE', '/steps/qa-gate/settings', { token, body: projectBody() })
    expect(deleted.status).toBe(200)
    expect(deleted.json).toEqual({ status: 'deleted' })
    expect(await h.service.get(ref)).toBeUndefined()
  })

  it('saves template settings under the template, finds them for a job only when it names the template, and deletes them', async () => {
    const token = await signToken({ projectId: null })
    const saved = await call('POST', '/steps/qa-gate/settings', { token, body: templateBody({ tone: 'informal', strict: true }) })
    expect(saved.status).toBe(200)
    const template = { organizationId: ORG, templateId: 5, stepId: 42, moduleKey: 'qa-gate' }
    expect(await h.service.get(template)).toEqual({ tone: 'informal', strict: true })
    // A job from a project built on the template knows only organization, project and step: the
    // template is not guessed from the step id (docs/settings.md, projects created from a template).
    const job = { organizationId: ORG, projectId: 1234, stepId: 42, moduleKey: 'qa-gate' }
    expect(await h.service.get(job)).toBeUndefined()
    expect(await h.service.get({ ...job, templateId: 5 })).toEqual({ tone: 'informal', strict: true })

    const deleted = await call('DELETE', '/steps/qa-gate/settings', { token, body: templateBody() })
    expect(deleted.status).toBe(200)
    expect(await h.service.get(template)).toBeUndefined()
    expect(await h.service.get({ ...job, templateId: 5 })).toBeUndefined()
  })

  it('accepts a DELETE that names the step in the query string', async () => {
    const token = await signToken()
    await call('POST', '/steps/qa-gate/settings', { token, body: { ...projectBody({ tone: 'formal' }), stepId: 77 } })
    const res = await fetch(`${h.url}/steps/qa-gate/settings?organizationId=${ORG}&projectId=7&stepId=77`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
    expect(await h.service.get({ organizationId: ORG, projectId: 7, stepId: 77, moduleKey: 'qa-gate' })).toBeUndefined()
  })

  it('refuses invalid settings with 400 listing every field error, and stores nothing', async () => {
    const res = await call('POST', '/steps/qa-gate/settings', {
      token: await signToken(),
      body: { ...projectBody({ tone: 'rude', maxLengthRatio: 9, retries: 1.5, code: 'abc', extra: 1 }), stepId: 43 },
    })
    expect(res.status).toBe(400)
    expect(res.json.error).toBe('settings are invalid')
    const errors: string[] = res.json.errors
    expect(errors.some((e) => e.startsWith('tone:'))).toBe(true)
    expect(errors.some((e) => e.startsWith('maxLengthRatio:'))).toBe(true)
    expect(errors.some((e) => e.startsWith('retries:'))).toBe(true)
    expect(errors.some((e) => e.startsWith('code:'))).toBe(true)
    expect(errors.some((e) => e.includes('unknown option "extra"'))).toBe(true)
    expect(await h.service.get({ organizationId: ORG, projectId: 7, stepId: 43, moduleKey: 'qa-gate' })).toBeUndefined()
  })

  it('refuses settings the schema takes but a check would refuse (every string of the step would fail to start it), and stores nothing', async () => {
    const target = { ...makeTarget('qa-gate'), checkSettings: async (s: Record<string, unknown>) => (s.maxLengthRatio === 1 ? ['check "length": option maxRatio: must be > 1'] : s.maxLengthRatio === undefined ? ['the defaults were not put in'] : []) }
    const strict = await startHarness({}, [target])
    try {
      const refused = await call('POST', '/steps/qa-gate/settings', { base: strict, token: await signToken(), body: projectBody({ tone: 'formal', maxLengthRatio: 1 }) })
      expect(refused.status).toBe(400)
      expect(refused.json).toMatchObject({ error: 'settings are invalid', errors: ['check "length": option maxRatio: must be > 1'] })
      expect(await strict.service.get({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' })).toBeUndefined()
      // The check gets the settings as the pipeline runs them: with the schema's defaults.
      const saved = await call('POST', '/steps/qa-gate/settings', { base: strict, token: await signToken(), body: projectBody({ tone: 'formal' }) })
      expect(saved.status).toBe(200)
    } finally {
      await strict.close()
    }
  })

  // JSON.parse reads 1e400 as Infinity, which a schema `number` (and the check's options) take;
  // every store writes it as null, so the step ran with a null it never saved.
  it('refuses a number too large to be stored (1e400), naming where, and stores nothing', async () => {
    const token = await signToken()
    const where = { organizationId: ORG, projectId: 7, stepId: 44, moduleKey: 'qa-gate' }
    const raw = JSON.stringify({ ...projectBody({ tone: 'formal', maxLengthRatio: 2 }), stepId: 44 }).replace('"maxLengthRatio":2', '"maxLengthRatio":2,"limits":[1,-1e400]')
    const free = await startHarness({}, [makeTarget('qa-gate', { type: 'object', properties: { tone: { type: 'string' }, limits: { type: 'array', items: { type: 'number' } } } })])
    try {
      const res = await call('POST', '/steps/qa-gate/settings', { base: free, token, raw })
      expect(res.status).toBe(400)
      expect(res.json).toEqual({ error: 'settings are invalid', errors: ['settings.limits.1: must be a finite number (too large to be stored)'] })
      expect(await free.service.get(where)).toBeUndefined()
      const top = await call('POST', '/steps/qa-gate/settings', { base: free, token, raw: raw.replace('"limits":[1,-1e400]', '"limits":[1e400]') })
      expect(top.json.errors).toEqual(['settings.limits.0: must be a finite number (too large to be stored)'])
      // The largest finite double is stored as it was saved.
      expect((await call('POST', '/steps/qa-gate/settings', { base: free, token, raw: raw.replace('-1e400', '1.7976931348623157e308') })).status).toBe(200)
      expect(await free.service.get(where)).toMatchObject({ limits: [1, 1.7976931348623157e308] })
    } finally {
      await free.close()
    }
  })

  it('refuses a body without the step fields, listing each missing one', async () => {
    const res = await call('POST', '/steps/qa-gate/settings', { token: await signToken(), body: { settings: { tone: 'formal' } } })
    expect(res.status).toBe(400)
    expect(res.json.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^organizationId/), expect.stringMatching(/^stepId/), expect.stringMatching(/projectId or templateId/)]))
  })

  it('refuses missing or non-object settings', async () => {
    const token = await signToken()
    expect((await call('POST', '/steps/qa-gate/settings', { token, body: projectBody() })).status).toBe(400)
    expect((await call('POST', '/steps/qa-gate/settings', { token, body: projectBody([1, 2]) })).status).toBe(400)
  })

  it('answers 400 to malformed JSON, 415 to other content types, 413 to huge bodies', async () => {
    const token = await signToken()
    const bad = await call('POST', '/steps/qa-gate/settings', { token, raw: '{"organizationId": 200, "settings": {' })
    expect(bad.status).toBe(400)
    expect(bad.json.error).toMatch(/not valid JSON/)
    const form = await call('POST', '/steps/qa-gate/settings', { token, raw: 'organizationId=200', type: 'application/x-www-form-urlencoded' })
    expect(form.status).toBe(415)
    const huge = await call('POST', '/steps/qa-gate/settings', { token, body: projectBody({ tone: 'formal', note: 'x'.repeat(200_000) }) })
    expect(huge.status).toBe(413)
  })

  it('answers 400 naming the key to settings with a key named __proto__ (valid JSON, refused), and stores nothing', async () => {
    const token = await signToken()
    const raw = JSON.stringify(projectBody({ tone: 'formal' })).replace('"tone"', '"__proto__":{"admin":true},"tone"')
    const res = await call('POST', '/steps/qa-gate/settings', { token, raw })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatch(/key named "__proto__"/)
    expect(res.json.error).not.toMatch(/not valid JSON/)
    expect(({} as Record<string, unknown>).admin).toBeUndefined()
    expect(await h.service.get({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' })).toBeUndefined()
  })
})
