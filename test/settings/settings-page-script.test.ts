// The settings page's script against a small fake DOM (no browser, no network): what it hands to
// the service and when. The platform's own fields in the same panel (its "Select languages") are
// wiped by an AP.formDataUpdated it did not expect, so the page publishes the stored settings
// once, when the page has loaded, and afterwards only on a user's change; without a step to edit
// it publishes nothing and refuses to validate. The browser test runs the same page in Chromium.
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'
import { renderSettingsPage } from '../../src/settings/render-settings-page.js'
import { QA_SCHEMA } from './helpers.js'

interface FakeElement {
  id: string
  value: string
  checked: boolean
  textContent: string
  hidden: boolean
  attrs: Record<string, string>
  getAttribute(name: string): string | null
  setAttribute(name: string, value: string): void
  removeAttribute(name: string): void
  addEventListener(type: string, fn: (e: unknown) => void): void
}

/** Runs the page's inline script over the elements the HTML declares, with their initial values. */
function load(html: string, options: { ap?: boolean; readyState?: string } = {}) {
  const elements = new Map<string, FakeElement>()
  const formListeners: Record<string, Array<(e: unknown) => void>> = {}
  const windowListeners: Record<string, Array<(e: unknown) => void>> = {}
  const element = (id: string, init: Partial<FakeElement> = {}): FakeElement => {
    const el: FakeElement = {
      id, value: '', checked: false, textContent: '', hidden: false, attrs: {},
      getAttribute: (n) => el.attrs[n] ?? null,
      setAttribute: (n, v) => void (el.attrs[n] = v),
      removeAttribute: (n) => void delete el.attrs[n],
      addEventListener: (type, fn) => void (formListeners[type] ??= []).push(fn),
      ...init,
    }
    elements.set(id, el)
    return el
  }
  const data = /<script type="application\/json" id="switchyard-settings-data">([^<]*)<\/script>/.exec(html)
  if (data) element('switchyard-settings-data', { textContent: data[1]! })
  if (html.includes('<form id="settings-form"')) element('settings-form')
  for (const m of html.matchAll(/<(input|select|textarea)([^>]*)>/g)) {
    const attrs = m[2]!
    const id = /id="([^"]+)"/.exec(attrs)![1]!
    const name = /data-name="([^"]+)"/.exec(attrs)![1]!
    let value = /value="([^"]*)"/.exec(attrs)?.[1] ?? ''
    if (m[1] === 'select') {
      const select = html.slice(m.index!).split('</select>')[0]!
      value = /<option value="([^"]*)" selected/.exec(select)?.[1] ?? ''
    }
    if (m[1] === 'textarea') value = html.slice(m.index! + m[0].length).split('</textarea>')[0]!
    element(id, { value, checked: /checked/.test(attrs), attrs: { 'data-name': name } })
    element(`e-${name}`)
  }
  const calls: unknown[] = []
  const window: Record<string, unknown> = {
    addEventListener: (type: string, fn: (e: unknown) => void) => void (windowListeners[type] ??= []).push(fn),
  }
  if (options.ap !== false) window.AP = { formDataUpdated: (s: unknown) => calls.push(JSON.parse(JSON.stringify(s))) }
  const document = { readyState: options.readyState ?? 'loading', getElementById: (id: string) => elements.get(id) ?? null }
  const script = /<script nonce="[^"]*">([\s\S]*?)<\/script>/.exec(html)![1]!
  vm.runInNewContext(script, { window, document, JSON, Array, Number, RegExp, Math, Object, isFinite })
  return {
    calls,
    window,
    fire: (type: string) => { for (const fn of windowListeners[type] ?? []) fn({}) },
    /** What a user does: change a field, then the events the browser sends. */
    type(name: string, value: string) {
      const el = elements.get(`f-${name}`)!
      el.value = value
      for (const t of ['input', 'change']) for (const fn of formListeners[t] ?? []) fn({ target: el })
    },
    validate: () => (window.formRef as { validateForm(): boolean }).validateForm(),
  }
}

const page = (stored?: Record<string, unknown>, extra: Partial<Parameters<typeof renderSettingsPage>[0]> = {}) =>
  renderSettingsPage({ title: 'QA gate', settingsSchema: QA_SCHEMA, stored, nonce: 'n', ...extra })

describe('settings page script', () => {
  it('publishes the stored settings once, and only when the page has loaded', () => {
    const stored = { tone: 'informal', note: 'Be nice' }
    const p = load(page(stored))
    expect(p.calls).toEqual([])
    expect(p.window.currentFormData).toBeUndefined()
    p.fire('load')
    // Exactly what is stored: not the defaults the form shows beside it.
    expect(p.calls).toEqual([stored])
    expect(p.window.currentFormData).toEqual(stored)
  })

  it('publishes at once when the script runs after the page has loaded', () => {
    const p = load(page({ tone: 'formal' }), { readyState: 'complete' })
    expect(p.calls).toEqual([{ tone: 'formal' }])
    p.fire('load')
    expect(p.calls).toHaveLength(1)
  })

  it('publishes an empty object for a step with nothing saved (so a save keeps following the defaults)', () => {
    const p = load(page(undefined))
    p.fire('load')
    expect(p.calls).toEqual([{}])
  })

  it('never publishes again unless the user changes something; validateForm only validates', () => {
    const p = load(page({ tone: 'informal' }))
    p.fire('load')
    for (let i = 0; i < 3; i++) expect(p.validate()).toBe(true)
    expect(p.calls).toHaveLength(1)
    p.type('note', 'Hello')
    expect(p.calls).toHaveLength(2)
    expect(p.calls[1]).toMatchObject({ tone: 'informal', note: 'Hello' })
    expect(p.validate()).toBe(true)
    expect(p.calls).toHaveLength(2)
    // An invalid change publishes nothing; validateForm says so.
    p.type('code', 'abc')
    expect(p.calls).toHaveLength(2)
    expect(p.validate()).toBe(false)
    p.type('code', 'ABC')
    expect(p.calls).toHaveLength(3)
    expect(p.window.currentFormData).toMatchObject({ code: 'ABC', note: 'Hello' })
  })

  it('does not publish a change made before the page has loaded until it has', () => {
    const p = load(page({ tone: 'informal' }))
    p.type('note', 'early')
    expect(p.calls).toEqual([])
    p.fire('load')
    expect(p.calls[0]).toEqual({ tone: 'informal' })
    expect(p.calls[1]).toMatchObject({ note: 'early' })
    expect(p.calls).toHaveLength(2)
  })

  it('works without AP: currentFormData is still set', () => {
    const p = load(page({ tone: 'informal' }), { ap: false })
    p.fire('load')
    expect(p.window.currentFormData).toEqual({ tone: 'informal' })
    expect(p.validate()).toBe(true)
  })

  it('without a step to edit: no form, nothing published, validateForm refuses', () => {
    const html = page(undefined, { missingContext: 'No step.' })
    expect(html).not.toContain('<form')
    expect(html).not.toMatch(/<input|<select|<textarea/)
    expect(html).toContain('No step.')
    const p = load(html)
    p.fire('load')
    expect(p.calls).toEqual([])
    expect(p.window.currentFormData).toBeUndefined()
    expect(p.validate()).toBe(false)
  })
})
