// The emulator as the workflow editor (settings JWT, project and template bodies, the settings
// page address) and the string comments API (issues beside a string, one request per comment).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { jwtVerify } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { manifestProblems, startEmulator, type Emulator } from '../../src/emulator/index.js'

interface Seen { method: string; url: string; authorization?: string; body: string }

let emu: Emulator
let app: Server
let appUrl: string
const seen: Seen[] = []
let token: string

beforeAll(async () => {
  // A stand-in app: serves a manifest with one step module and records the settings calls.
  app = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/manifest.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            baseUrl: appUrl,
            modules: {
              'workflow-step-type': [{ key: 'qa-gate', updateSettingsUrl: '/steps/qa-gate/settings', deleteSettingsUrl: '/steps/qa-gate/settings', url: '/steps/qa-gate/settings' }],
              webhook: [{ key: 'switchyard-webhook', url: '/webhooks' }],
            },
          }),
        )
        return
      }
      seen.push({ method: req.method!, url: req.url!, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), body: Buffer.concat(chunks).toString() })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  emu = await startEmulator({ strings: 5, languages: ['de', 'fr'], clientId: 'app-1', clientSecret: 'client-secret-1', webhookUrl: `${appUrl}/webhooks`, organizations: [{ id: '300000', domain: 'globex', strings: 3, projectId: 77, stepId: 8001, templateId: 999 }] })
  token = (await emu.authorizeDirect()).access_token
})
afterAll(async () => {
  await emu.stop()
  app.closeAllConnections()
  await new Promise((resolve) => app.close(resolve))
})
beforeEach(() => {
  seen.length = 0
  emu.refuseComments(null)
})

const key = new TextEncoder().encode('client-secret-1')

describe('workflow editor', () => {
  it('saves project settings: POST updateSettingsUrl, HS256 JWT with the client secret, the project body', async () => {
    const res = await emu.editor.saveSettings({ maxLengthRatio: 2 })
    expect(res.status).toBe(204)
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/steps/qa-gate/settings' })
    expect(JSON.parse(seen[0]!.body)).toEqual({ organizationId: 200000, projectId: 42, workflowId: 11, stepId: 7001, settings: { maxLengthRatio: 2 } })
    const { payload, protectedHeader } = await jwtVerify(seen[0]!.authorization!.replace(/^Bearer /, ''), key, { audience: 'app-1' })
    expect(protectedHeader.alg).toBe('HS256')
    expect(payload).toMatchObject({ aud: 'app-1', sub: '9001', domain: 'acme', module: 'qa-gate', context: { project_id: 42, organization_id: 200000, user_id: 9001 } })
    expect(payload.exp! - payload.iat!).toBe(300)
  })

  it("saves a template step's settings with the template body, for another organization", async () => {
    await emu.editor.saveSettings({ a: 1 }, { organization: 'globex', template: true })
    expect(JSON.parse(seen[0]!.body)).toEqual({ organizationId: 300000, templateId: 999, stepId: 8001, settings: { a: 1 } })
    const { payload } = await jwtVerify(seen[0]!.authorization!.replace(/^Bearer /, ''), key)
    // A template has no project: the token names none (so it can't be taken for a project's).
    expect(payload).toMatchObject({ domain: 'globex', context: { organization_id: 300000 } })
    expect((payload.context as Record<string, unknown>).project_id).toBeUndefined()
  })

  it('deletes a step: DELETE deleteSettingsUrl with the same fields and no settings; JWT in the query when asked', async () => {
    await emu.editor.deleteStep({ jwtIn: 'query' })
    expect(seen[0]!.method).toBe('DELETE')
    expect(seen[0]!.authorization).toBeUndefined()
    expect(new URL(seen[0]!.url, appUrl).searchParams.get('jwtToken')).toMatch(/^ey/)
    expect(JSON.parse(seen[0]!.body)).toEqual({ organizationId: 200000, projectId: 42, workflowId: 11, stepId: 7001 })
  })

  it('mints expired or wrongly signed tokens on request, and gives the settings page address', async () => {
    await expect(jwtVerify(await emu.editor.mintJwt({ jwtTtlSeconds: -10 }), key)).rejects.toThrow(/exp/)
    await expect(jwtVerify(await emu.editor.mintJwt({ signingSecret: 'other' }), key)).rejects.toThrow(/signature/)
    const page = new URL(await emu.editor.settingsPageUrl())
    expect(`${page.origin}${page.pathname}`).toBe(`${appUrl}/steps/qa-gate/settings`)
    expect(page.searchParams.get('jwtToken')).toMatch(/^ey/)
    // The step it edits: the page cannot show its settings otherwise.
    expect(page.searchParams.get('stepId')).toBe('7001')
    expect(page.searchParams.get('templateId')).toBeNull()
    const template = new URL(await emu.editor.settingsPageUrl({ organization: 'globex', template: true }))
    expect([template.searchParams.get('stepId'), template.searchParams.get('templateId')]).toEqual(['8001', '999'])
    const viaControl = await fetch(`${emu.url}/_control/editor/save`, { method: 'POST', body: JSON.stringify({ settings: { b: 2 }, organization: 'globex' }) })
    expect(((await viaControl.json()) as any).status).toBe(204)
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ organizationId: 300000, projectId: 77, settings: { b: 2 } })
  })
})

describe('manifest checks', () => {
  const good = () => ({
    baseUrl: 'http://app.test',
    logo: '/logo.png',
    modules: {
      'workflow-step-type': [{
        key: 'qa-gate', name: 'QA gate', logo: '/steps/qa-gate/logo', description: 'Checks', editorMode: 'side-by-side',
        boundaries: { input: { title: 'In', ports: ['translated'] }, outputs: [{ title: 'Passed', port: 'approved' }] },
        updateSettingsUrl: '/s', deleteSettingsUrl: '/s', url: '/s', environments: ['service-enterprise'],
      }],
      webhook: [{ key: 'switchyard-webhook', url: '/webhooks', events: ['string.status_on_step.recalculation_triggered'], environments: ['service-enterprise'] }],
    },
  })

  it('accepts a complete manifest and names what the platform would refuse', () => {
    expect(manifestProblems(good())).toEqual([])
    const bad = good() as any
    delete bad.modules['workflow-step-type'][0].logo
    bad.modules['workflow-step-type'][0].color = 'red'
    bad.modules['workflow-step-type'][0].boundaries.input.ports = ['done']
    delete bad.modules.webhook
    expect(manifestProblems(bad)).toEqual([
      'modules.workflow-step-type[0] (qa-gate).logo: required',
      'modules.workflow-step-type[0] (qa-gate).color: unknown field',
      'modules.workflow-step-type[0] (qa-gate).boundaries.input.ports: "done" is not a port',
      'modules.webhook: an app with a workflow-step-type module must also define a webhook module',
    ])
  })

  it("fetches the app's manifest and reports its problems", async () => {
    const problems = await emu.editor.checkManifest()
    expect(problems).toContain('modules.workflow-step-type[0] (qa-gate).logo: required')
    expect(problems).toContain('modules.webhook[0].events: required')
  })
})

describe('string comments', () => {
  const base = () => `${emu.url}/api/v2/projects/42/comments`
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    return { status: res.status, body: (await res.json()) as any }
  }

  it('raises an issue (201), lists the open ones, resolves one with PATCH', async () => {
    const stringId = emu.sample.strings[0]!.id
    const created = await call('POST', base(), { stringId, targetLanguageId: 'de', text: 'Placeholder {name} dropped', type: 'issue', issueType: 'translation_mistake' })
    expect(created.status).toBe(201)
    expect(created.body.data).toMatchObject({ text: 'Placeholder {name} dropped', stringId, languageId: 'de', type: 'issue', issueType: 'translation_mistake', issueStatus: 'unresolved' })
    const listed = await call('GET', `${base()}?stringId=${stringId}&type=issue&targetLanguageId=de&issueStatus=unresolved`)
    expect(listed.body.data.map((d: any) => d.data.id)).toEqual([created.body.data.id])
    expect(emu.openIssues(stringId, 'de')).toHaveLength(1)
    const patched = await call('PATCH', `${base()}/${created.body.data.id}`, [{ op: 'replace', path: '/issueStatus', value: 'resolved' }])
    expect(patched).toMatchObject({ status: 200, body: { data: { issueStatus: 'resolved' } } })
    expect(emu.openIssues(stringId, 'de')).toEqual([])
    expect(emu.comments({ stringId })).toHaveLength(1)
  })

  it('refuses bad shapes with 400 and unknown comments with 404', async () => {
    const stringId = emu.sample.strings[0]!.id
    expect((await call('POST', base(), { stringId, targetLanguageId: 'de', text: 'x', type: 'issue', issueType: 'typo' })).status).toBe(400)
    expect((await call('POST', base(), { stringId, targetLanguageId: 'xx', text: 'x', type: 'comment' })).status).toBe(400)
    expect((await call('POST', base(), { stringId: 1, targetLanguageId: 'de', text: 'x', type: 'comment' })).status).toBe(400)
    expect((await call('PATCH', `${base()}/1`, [{ op: 'replace', path: '/text', value: 'y' }])).status).toBe(404)
  })

  it('refuses every comment request while the fault is on (403 or 500), with the token checked first', async () => {
    emu.refuseComments(403)
    expect((await call('POST', base(), { stringId: emu.sample.strings[1]!.id, targetLanguageId: 'de', text: 'x', type: 'comment' })).status).toBe(403)
    await fetch(`${emu.url}/_control/refuse-comments`, { method: 'POST', body: JSON.stringify({ status: 500 }) })
    expect((await call('GET', base())).status).toBe(500)
    emu.refuseComments(null)
    expect((await call('GET', base())).status).toBe(200)
    emu.assertNoMistakes()
  })
})
