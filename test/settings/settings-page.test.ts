// The settings page as HTML: fields from the schema, prefilled from the store, values escaped,
// and the CSP that goes with it. (The browser test runs the page itself.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import { PLATFORM_IFRAME_SCRIPT } from '../../src/config/options.js'
import { contentSecurityPolicy } from '../../src/settings/settings-routes.js'
import { escapeHtml, renderSettingsPage, safeJsonForScript } from '../../src/settings/render-settings-page.js'
import { formFields } from '../../src/settings/settings-form-fields.js'
import { makeTarget, ORG, QA_SCHEMA, signToken, startHarness, type Harness } from './helpers.js'

const SCRIPT_BREAKOUT = '</textarea></script><script>alert(1)</script>'
const ATTR_BREAKOUT = '"><img src=x onerror=alert(2)>'

describe('formFields', () => {
  it('maps each schema type to its control', () => {
    const kinds = Object.fromEntries(formFields({
      properties: {
        s: { type: 'string' },
        long: { type: 'string', maxLength: 201 },
        area: { type: 'string', format: 'textarea' },
        n: { type: 'number', minimum: 1 },
        i: { type: 'integer' },
        b: { type: 'boolean' },
        e: { enum: ['a', 'b'] },
        se: { type: 'string', enum: ['a'] },
        list: { type: 'array', items: { type: 'string' } },
        obj: { type: 'object' },
      },
    }).map((f) => [f.name, f.kind]))
    expect(kinds).toEqual({ s: 'text', long: 'textarea', area: 'textarea', n: 'number', i: 'integer', b: 'checkbox', e: 'select', se: 'select', list: 'lines', obj: 'json' })
  })
})

describe('escaping', () => {
  it('escapes HTML specials', () => {
    expect(escapeHtml(`<a href="x" title='y'>&`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;')
  })
  it('makes JSON safe inside a script element and still parseable', () => {
    const value = { a: SCRIPT_BREAKOUT, b: '<!-- & \u2028\u2029' }
    const out = safeJsonForScript(value)
    expect(out).not.toMatch(/[<>&\u2028\u2029]/)
    expect(JSON.parse(out)).toEqual(value)
  })
})

describe('renderSettingsPage', () => {
  const render = (stored?: Record<string, unknown>, scriptUrl?: string) =>
    renderSettingsPage({ title: 'QA <gate>', settingsSchema: QA_SCHEMA, stored, nonce: 'n0nce', scriptUrl })

  it('prefills stored values and falls back to defaults', () => {
    const html = render({ tone: 'informal', note: 'Be nice', forbidden: ['foo', 'bar'], strict: true })
    expect(html).toMatch(/<option value="1" selected[^>]*>informal<\/option>/)
    expect(html).toMatch(/<textarea rows="5" id="f-note"[^>]*>Be nice<\/textarea>/)
    expect(html).toMatch(/id="f-forbidden"[^>]*>foo\nbar<\/textarea>/)
    expect(html).toMatch(/id="f-strict"[^>]*checked/)
    expect(html).toMatch(/id="f-maxLengthRatio"[^>]*value="1.5"/)
    expect(html).toContain('Register the AI proofreader expects.')
    expect(html).toContain('<h1>QA &lt;gate&gt;</h1>')
  })

  it('keeps injection attempts in stored values and in the schema inert', () => {
    const schema = { properties: { [`x${ATTR_BREAKOUT}`]: { type: 'string', title: SCRIPT_BREAKOUT, description: ATTR_BREAKOUT, default: SCRIPT_BREAKOUT } } }
    const html = renderSettingsPage({ title: SCRIPT_BREAKOUT, settingsSchema: schema, stored: undefined, nonce: 'n' })
    const stored = render({ note: SCRIPT_BREAKOUT, code: ATTR_BREAKOUT, forbidden: [SCRIPT_BREAKOUT] })
    for (const page of [html, stored]) {
      expect(page).not.toContain('<script>alert(1)')
      expect(page).not.toContain('<img src=x')
      // Exactly the page's own script elements: the JSON data block and the nonce'd script.
      expect(page.match(/<script/g)).toHaveLength(2)
    }
  })

  it('loads the service script only when configured', () => {
    expect(render()).not.toContain('<script src')
    expect(render(undefined, 'https://cdn.example.com/iframe.js?v=1&x=2')).toContain('<script src="https://cdn.example.com/iframe.js?v=1&amp;x=2"></script>')
  })
})

describe('contentSecurityPolicy', () => {
  it('allows only the nonce, the service script origin and the configured frame ancestors', () => {
    const csp = contentSecurityPolicy({ settingsScriptUrl: 'https://cdn.example.com/js/iframe.js', settingsFrameAncestors: 'https://*.example.com' })('abc')
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self' https://cdn.example.com 'nonce-abc'")
    expect(csp).toContain("style-src 'nonce-abc'")
    expect(csp).toContain('frame-ancestors https://*.example.com')
    expect(csp).not.toContain('unsafe')
  })
  it('refuses settings that would break the policy', () => {
    expect(() => contentSecurityPolicy({ settingsScriptUrl: '', settingsFrameAncestors: "*; script-src 'unsafe-inline'" })).toThrow(/SETTINGS_FRAME_ANCESTORS/)
    expect(() => contentSecurityPolicy({ settingsScriptUrl: 'cdn.example.com/x.js', settingsFrameAncestors: '*' })).toThrow(/SETTINGS_SCRIPT_URL/)
  })
})

describe('GET /steps/:key/settings', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({}, [makeTarget('qa-gate'), makeTarget('empty', { type: 'object', properties: {} }, 'No settings')])
  })
  afterAll(() => h.close())

  it('serves the page with a per-response nonce, strict headers and the stored settings of the step', async () => {
    await h.service.put({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }, { tone: 'informal', note: SCRIPT_BREAKOUT })
    const token = await signToken()
    const get = () => fetch(`${h.url}/steps/qa-gate/settings?stepId=41&jwtToken=${token}`)
    const [a, b] = [await get(), await get()]
    expect(a.status).toBe(200)
    expect(a.headers.get('content-type')).toMatch(/^text\/html/)
    expect(a.headers.get('referrer-policy')).toBe('no-referrer')
    expect(a.headers.get('x-frame-options')).toBeNull()
    const cspA = a.headers.get('content-security-policy') ?? ''
    const nonceA = /'nonce-([^']+)'/.exec(cspA)?.[1]
    expect(nonceA).toBeTruthy()
    expect(cspA).toContain('frame-ancestors *')
    expect(/'nonce-([^']+)'/.exec(b.headers.get('content-security-policy') ?? '')?.[1]).not.toBe(nonceA)
    const html = await a.text()
    expect(html).toContain(`<script nonce="${nonceA}">`)
    expect(html).toMatch(/<option value="1" selected[^>]*>informal<\/option>/)
    expect(html).not.toContain(token)
  })

  it('shows the template settings of the step when the page is opened with templateId', async () => {
    await h.service.put({ organizationId: ORG, templateId: 5, stepId: 50, moduleKey: 'qa-gate' }, { note: 'from the template' })
    const res = await fetch(`${h.url}/steps/qa-gate/settings?stepId=50&templateId=5`, { headers: { authorization: `Bearer ${await signToken({ projectId: null })}` } })
    expect(await res.text()).toContain('from the template')
  })

  it("loads the platform's iframe script by default, and none when SETTINGS_SCRIPT_URL is set empty", async () => {
    expect(loadConfig({}).settingsScriptUrl).toBe(PLATFORM_IFRAME_SCRIPT)
    expect(PLATFORM_IFRAME_SCRIPT).toBe('https://cdn.crowdin.com/apps/dist/iframe.js')
    expect(loadConfig({ SETTINGS_SCRIPT_URL: '' }).settingsScriptUrl).toBe('')
    expect(loadConfig({ SETTINGS_SCRIPT_URL: 'https://cdn.example.com/a.js' }).settingsScriptUrl).toBe('https://cdn.example.com/a.js')
    const res = await fetch(`${h.url}/steps/qa-gate/settings?stepId=41&jwtToken=${await signToken()}`)
    expect(await res.text()).toContain(`<script src="${PLATFORM_IFRAME_SCRIPT}"></script>`)
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self' https://cdn.crowdin.com 'nonce-")
    const none = await startHarness({ settingsScriptUrl: '' })
    try {
      const page = await (await fetch(`${none.url}/steps/qa-gate/settings?stepId=41&jwtToken=${await signToken()}`)).text()
      expect(page).not.toContain('<script src')
    } finally {
      await none.close()
    }
  })

  it('without a step to edit, says so and shows no form (a save would write defaults over the settings)', async () => {
    await h.service.put({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }, { tone: 'informal' })
    const pages = [
      // no step id in the query
      await fetch(`${h.url}/steps/qa-gate/settings?jwtToken=${await signToken()}`),
      // a step id, but neither a project in the token nor a templateId in the query
      await fetch(`${h.url}/steps/qa-gate/settings?stepId=41&jwtToken=${await signToken({ projectId: null })}`),
    ]
    for (const res of pages) {
      expect(res.status).toBe(200)
      const html = await res.text()
      expect(html).toMatch(/does not know which step/)
      expect(html).not.toContain('<form')
      expect(html).not.toMatch(/<input|<select|<textarea/)
    }
  })

  it('says so when the pipeline has no settings', async () => {
    const res = await fetch(`${h.url}/steps/empty/settings?jwtToken=${await signToken({ module: 'empty' })}`)
    expect(await res.text()).toContain('This step has no settings.')
    // With a step too: that alone, not also "no saved settings yet; showing the defaults".
    const step = await (await fetch(`${h.url}/steps/empty/settings?stepId=41&jwtToken=${await signToken({ module: 'empty' })}`)).text()
    expect(step).toContain('This step has no settings.')
    expect(step).not.toMatch(/showing the defaults|Settings of step/)
  })
})
