// The settings page running in real headless Chromium: the iframe contract (formRef.validateForm,
// currentFormData, AP.formDataUpdated), client-side validation, and injection attempts in stored
// values staying inert under the page's CSP. Skips, saying why, without /usr/bin/chromium; fails
// instead when CI is set, so a CI machine cannot silently lose this test.
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PLATFORM_IFRAME_SCRIPT } from '../../src/config/options.js'
import { makeTarget, ORG, QA_SCHEMA, signToken, startHarness, type Harness } from './helpers.js'

// The callbacks given to page.evaluate/addInitScript run in the page; the project's lib has no
// DOM types (and should not get them globally), so declare the little they touch, module-scoped.
declare const window: Record<string, unknown>
declare const document: {
  addEventListener(type: 'securitypolicyviolation', listener: (e: { violatedDirective: string; blockedURI: string }) => void): void
  querySelectorAll(selector: string): { length: number }
}

const CHROMIUM = '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
const SKIP_REASON = `${CHROMIUM} is not installed (apt-get install chromium); the settings page browser test needs it`
if (!HAVE_CHROMIUM && !process.env.CI) console.warn(`SKIPPED settings page browser test: ${SKIP_REASON}`)

const SCRIPT_BREAKOUT = '</textarea></script><script>window.__pwned = 1; alert(1)</script>'
const ATTR_BREAKOUT = '"><img src=x onerror="window.__pwned = 2; alert(2)">'

const SCHEMA = {
  ...QA_SCHEMA,
  required: ['tone', 'reviewer'],
  properties: {
    ...QA_SCHEMA.properties,
    reviewer: { type: 'string', title: 'Reviewer', minLength: 2 },
    levels: { type: 'array', title: 'Levels', items: { enum: ['error', 'warning'] } },
  },
}

// Records what the page hands to the service, alerts, and CSP violations, before any page script.
const RECORDER = () => {
  const w = window as unknown as Record<string, unknown>
  w.__apCalls = []
  w.__apReadyStates = []
  w.__alerts = 0
  w.__violations = []
  w.alert = () => {
    ;(w.__alerts as number)++
  }
  document.addEventListener('securitypolicyviolation', (e) => (w.__violations as string[]).push(`${e.violatedDirective} ${e.blockedURI}`))
}
// Stands in for the platform's iframe script (PLATFORM_IFRAME_SCRIPT, the default), served to the
// page by a route so nothing leaves the machine: it records each call and whether the page had
// finished loading by then.
const FAKE_IFRAME_SCRIPT = `window.AP = { formDataUpdated: function (s) {
  window.__apCalls.push(JSON.parse(JSON.stringify(s)));
  window.__apReadyStates.push(document.readyState);
} };`

// Without Chromium: skip with the reason, except under CI, where a missing browser is a failure.
function skipOrFail(ctx: { skip: (note?: string) => never }): never {
  if (process.env.CI) throw new Error(`CI is set but ${SKIP_REASON}`)
  return ctx.skip(SKIP_REASON)
}

const lastApCall = (page: Page) => page.evaluate(() => {
  const calls = (window as unknown as { __apCalls: unknown[] }).__apCalls
  return { count: calls.length, last: calls[calls.length - 1] }
})
const validate = (page: Page) => page.evaluate(() => (window as unknown as { formRef: { validateForm(): boolean } }).formRef.validateForm())
const errorOf = (page: Page, name: string) => page.locator(`#e-${name}`).textContent()

describe('settings page in headless Chromium', () => {
  let browser: Browser | undefined
  let h: Harness
  let bare: Harness
  let withScript: Harness
  let scriptServer: Server
  let dialogs = 0

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) {
      if (process.env.CI) throw new Error(`CI is set but ${SKIP_REASON}`)
      return
    }
    // Stands in for the service's iframe script, on another origin: the CSP must let it in.
    scriptServer = createServer((req, res) => {
      res.setHeader('content-type', 'text/javascript')
      res.end('window.AP = { formDataUpdated: function (s) { window.__apCalls.push(JSON.parse(JSON.stringify(s))); window.__fromScript = true; } };')
    })
    await new Promise<void>((r) => scriptServer.listen(0, '127.0.0.1', r))
    const scriptUrl = `http://127.0.0.1:${(scriptServer.address() as AddressInfo).port}/iframe.js`
    h = await startHarness({}, [makeTarget('qa-gate', SCHEMA)])
    bare = await startHarness({ settingsScriptUrl: '' }, [makeTarget('qa-gate', SCHEMA)])
    withScript = await startHarness({ settingsScriptUrl: scriptUrl }, [makeTarget('qa-gate', SCHEMA)])
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    })
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
    await bare?.close()
    await withScript?.close()
    if (scriptServer) await new Promise((r) => scriptServer.close(r))
  })

  async function open(base: Harness, query = 'stepId=41', token?: string): Promise<Page> {
    const page = await browser!.newPage()
    page.on('dialog', (d) => {
      dialogs++
      void d.dismiss()
    })
    await page.addInitScript(RECORDER)
    // The platform's script from a route; anything else off this machine is refused. (The route
    // registered last is tried first.)
    await page.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (r) => r.abort())
    await page.route(PLATFORM_IFRAME_SCRIPT, (r) => r.fulfill({ status: 200, contentType: 'text/javascript', body: FAKE_IFRAME_SCRIPT }))
    await page.goto(`${base.url}/steps/qa-gate/settings?${query}&jwtToken=${token ?? (await signToken())}`)
    return page
  }

  it('publishes valid settings on load and on every valid change, and keeps injected values inert', async (ctx) => {
    if (!browser) return skipOrFail(ctx)
    await h.service.put({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }, {
      tone: 'informal', reviewer: 'Ann', note: SCRIPT_BREAKOUT, forbidden: [ATTR_BREAKOUT, 'ok'],
    })
    const page = await open(h)
    // On load, from the platform's script (the default): the stored settings exactly as saved,
    // not the defaults the form shows beside them.
    const onLoad = await lastApCall(page)
    expect(onLoad.count).toBe(1)
    expect(onLoad.last).toEqual({ tone: 'informal', reviewer: 'Ann', note: SCRIPT_BREAKOUT, forbidden: [ATTR_BREAKOUT, 'ok'] })

    // The injected strings are text in the fields, nothing ran, nothing was even blocked.
    expect(await page.locator('#f-note').inputValue()).toBe(SCRIPT_BREAKOUT)
    expect(await page.evaluate(() => ({
      pwned: (window as unknown as { __pwned?: number }).__pwned,
      alerts: (window as unknown as { __alerts: number }).__alerts,
      imgs: document.querySelectorAll('img').length,
      scripts: document.querySelectorAll('script').length,
      violations: (window as unknown as { __violations: string[] }).__violations,
    }))).toEqual({ pwned: undefined, alerts: 0, imgs: 0, scripts: 3, violations: [] })
    expect(dialogs).toBe(0)

    await page.selectOption('#f-tone', { label: 'formal' })
    await page.fill('#f-maxLengthRatio', '2.5')
    await page.fill('#f-retries', '3')
    await page.check('#f-strict')
    await page.fill('#f-forbidden', 'alpha\n\n  beta  \n')
    await page.fill('#f-levels', 'warning')
    await page.fill('#f-code', 'DE')
    const expected = { tone: 'formal', reviewer: 'Ann', maxLengthRatio: 2.5, retries: 3, note: SCRIPT_BREAKOUT, code: 'DE', strict: true, forbidden: ['alpha', 'beta'], levels: ['warning'] }
    expect((await lastApCall(page)).last).toEqual(expected)
    expect(await validate(page)).toBe(true)
    expect(await page.evaluate(() => (window as unknown as { currentFormData: unknown }).currentFormData)).toEqual(expected)
    expect(await page.locator('.error:not([hidden])').count()).toBe(0)
    await page.close()
  })

  it('refuses invalid input in validateForm, shows why, and publishes nothing invalid', async (ctx) => {
    if (!browser) return skipOrFail(ctx)
    await h.service.put({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }, { tone: 'formal', reviewer: 'Ann' })
    const page = await open(h)
    const published = (await lastApCall(page)).count

    await page.fill('#f-maxLengthRatio', '9') // maximum 5
    await page.fill('#f-retries', '1.5') // integer
    await page.fill('#f-code', 'abc') // pattern ^[A-Z]{2,3}$
    await page.fill('#f-reviewer', '') // required
    await page.fill('#f-levels', 'error\nfatal') // enum of each line
    expect(await validate(page)).toBe(false)
    expect(await errorOf(page, 'maxLengthRatio')).toMatch(/at most 5/)
    expect(await errorOf(page, 'retries')).toMatch(/whole number/)
    expect(await errorOf(page, 'code')).toMatch(/pattern/)
    expect(await errorOf(page, 'reviewer')).toMatch(/required/)
    expect(await errorOf(page, 'levels')).toMatch(/Line 2 must be one of error, warning/)
    expect(await page.getAttribute('#f-code', 'aria-invalid')).toBe('true')
    expect((await lastApCall(page)).count).toBe(published)

    await page.fill('#f-reviewer', 'B') // minLength 2
    expect(await validate(page)).toBe(false)
    expect(await errorOf(page, 'reviewer')).toMatch(/at least 2/)

    await page.fill('#f-maxLengthRatio', '0.5') // minimum 1
    expect(await validate(page)).toBe(false)
    expect(await errorOf(page, 'maxLengthRatio')).toMatch(/at least 1/)

    // Fixing every field makes the form valid and publishes exactly once more.
    await page.fill('#f-maxLengthRatio', '5')
    await page.fill('#f-retries', '10')
    await page.fill('#f-code', 'ABC')
    await page.fill('#f-reviewer', 'Bea')
    await page.fill('#f-levels', 'error')
    expect((await lastApCall(page)).count).toBe(published + 1)
    expect(await validate(page)).toBe(true)
    expect((await lastApCall(page)).last).toEqual({ tone: 'formal', reviewer: 'Bea', maxLengthRatio: 5, retries: 10, code: 'ABC', strict: false, levels: ['error'] })
    expect(await page.locator('.error:not([hidden])').count()).toBe(0)
    await page.close()
  })

  it('calls AP.formDataUpdated once on load and then only on a change by the user, never before load', async (ctx) => {
    if (!browser) return skipOrFail(ctx)
    await h.service.put({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }, { tone: 'formal', reviewer: 'Ann' })
    const page = await open(h)
    await page.waitForLoadState('load')
    await page.waitForTimeout(300)
    expect(await lastApCall(page)).toEqual({ count: 1, last: { tone: 'formal', reviewer: 'Ann' } })
    expect(await page.evaluate(() => (window as unknown as { currentFormData: unknown }).currentFormData)).toEqual({ tone: 'formal', reviewer: 'Ann' })
    // The service validates before it saves, as often as it likes: nothing is published.
    for (let i = 0; i < 3; i++) expect(await validate(page)).toBe(true)
    // Focus moving around is no change.
    await page.focus('#f-reviewer')
    await page.focus('#f-note')
    await page.locator('#f-note').blur()
    expect((await lastApCall(page)).count).toBe(1)
    // One edit: one call (its input and change events publish the same settings once).
    await page.locator('#f-reviewer').press('End')
    await page.locator('#f-reviewer').pressSequentially('e')
    await page.locator('#f-reviewer').blur()
    expect(await lastApCall(page)).toMatchObject({ count: 2, last: { reviewer: 'Anne' } })
    await page.waitForTimeout(300)
    expect((await lastApCall(page)).count).toBe(2)
    expect(await page.evaluate(() => (window as unknown as { __apReadyStates: string[] }).__apReadyStates)).toEqual(['complete', 'complete'])
    await page.close()
  })

  it('without a step to edit: says so, shows no form, publishes nothing and refuses to validate', async (ctx) => {
    if (!browser) return skipOrFail(ctx)
    for (const page of [await open(h, 'x=1'), await open(h, 'stepId=41', await signToken({ projectId: null }))]) {
      await page.waitForLoadState('load')
      expect(await page.locator('.missing').textContent()).toMatch(/does not know which step/)
      expect(await page.locator('form, input, select, textarea').count()).toBe(0)
      expect(await validate(page)).toBe(false)
      expect((await lastApCall(page)).count).toBe(0)
      expect(await page.evaluate(() => typeof (window as unknown as { currentFormData?: unknown }).currentFormData)).toBe('undefined')
      await page.close()
    }
  })

  it('works without AP (validateForm still answers) and loads the service script allowed by the CSP', async (ctx) => {
    if (!browser) return skipOrFail(ctx)
    await bare.service.put({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }, { tone: 'formal', reviewer: 'Ann' })
    const noAp = await open(bare)
    expect(await noAp.evaluate(() => document.querySelectorAll('script[src]').length)).toBe(0)
    expect(await noAp.evaluate(() => typeof (window as unknown as { AP?: unknown }).AP)).toBe('undefined')
    expect(await validate(noAp)).toBe(true)
    expect(await noAp.evaluate(() => (window as unknown as { currentFormData: unknown }).currentFormData)).toEqual({ tone: 'formal', reviewer: 'Ann' })
    await noAp.close()

    await withScript.service.put({ organizationId: ORG, projectId: 7, stepId: 41, moduleKey: 'qa-gate' }, { tone: 'formal', reviewer: 'Ann' })
    const page = await open(withScript)
    expect(await page.evaluate(() => typeof (window as unknown as { AP?: { formDataUpdated?: unknown } }).AP?.formDataUpdated)).toBe('function')
    expect(await page.evaluate(() => (window as unknown as { __fromScript?: boolean }).__fromScript)).toBe(true)
    expect((await lastApCall(page)).count).toBe(1)
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([])
    await page.close()
  })
})
