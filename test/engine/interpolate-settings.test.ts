// `${settings.x}` in a check's options (src/engine/interpolate.ts): where each reference is, and
// the options a plugin gets once the step's settings are put in.
import { describe, expect, it } from 'vitest'
import { interpolateSettings, settingReferences } from '../../src/engine/interpolate.js'

describe('settingReferences', () => {
  it('finds every reference with the path to its value, in strings, lists and objects', () => {
    const options = { a: '${settings.one} and ${ settings.two-b }', list: ['x', { deep: '${settings._3}' }], n: 5, on: true, none: null }
    expect(settingReferences(options)).toEqual([
      { name: 'one', path: ['a'] },
      { name: 'two-b', path: ['a'] },
      { name: '_3', path: ['list', 1, 'deep'] },
    ])
  })

  it('ignores what is not a reference', () => {
    expect(settingReferences(['$settings.a', '${settings.}', '${settings.1a}', '${other.a}', '{settings.a}', 'settings.a'])).toEqual([])
    expect(settingReferences('${settings.a}')).toEqual([{ name: 'a', path: [] }])
  })
})

describe('interpolateSettings', () => {
  const settings = { n: 1.5, s: 'abc', l: ['a', 'b'], o: { k: 1 }, b: false, z: 0, nil: null }

  it('a value that is one reference keeps the setting\'s type', () => {
    expect(interpolateSettings({ n: '${settings.n}', l: '${ settings.l }', o: '${settings.o}', b: '${settings.b}', z: '${settings.z}' }, settings))
      .toEqual({ n: 1.5, l: ['a', 'b'], o: { k: 1 }, b: false, z: 0 })
  })

  it('a reference inside text becomes text: lists and objects as JSON, nothing for no value', () => {
    expect(interpolateSettings('n=${settings.n} s=${settings.s} l=${settings.l} o=${settings.o} b=${settings.b} z=${settings.z} nil=[${settings.nil}] missing=[${settings.missing}]', settings))
      .toBe('n=1.5 s=abc l=["a","b"] o={"k":1} b=false z=0 nil=[] missing=[]')
  })

  it('a setting without a value leaves its option out (the plugin\'s default applies), and its item out of a list', () => {
    expect(interpolateSettings({ keep: 1, gone: '${settings.missing}', nested: { gone: '${settings.missing}', s: '${settings.s}' } }, settings))
      .toEqual({ keep: 1, nested: { s: 'abc' } })
    // A hole (`[undefined, ...]`) is refused by the plugin's schema ("custom.0: must be string"):
    // every string of a step that had not set the setting was parked with plugin-not-started.
    expect(interpolateSettings(['${settings.missing}', '${settings.s}', 'x ${settings.s}'], settings)).toEqual(['abc', 'x abc'])
    expect(interpolateSettings({ custom: ['${settings.missing}'] }, settings)).toEqual({ custom: [] })
  })

  // Rule: a setting is read as an own property: toString, valueOf, constructor... that the step has
  // not set have no value (never Object.prototype's function, or its source text).
  it('a setting named like an Object.prototype member has only the value the step gives it', () => {
    expect(interpolateSettings({ label: 'x ${settings.constructor}', whole: '${settings.toString}', v: '${settings.valueOf}' }, {})).toEqual({ label: 'x ' })
    expect(interpolateSettings({ label: 'x ${settings.constructor}', whole: '${settings.toString}' }, { constructor: 'c', toString: 't' })).toEqual({ label: 'x c', whole: 't' })
  })

  it('leaves everything else as it is, and does not change the options it was given', () => {
    const options = { text: 'plain $ {text} with ${other} and $settings', n: 3, b: true, nil: null, list: [1, 'two'] }
    const copy = structuredClone(options)
    expect(interpolateSettings(options, settings)).toEqual(options)
    expect(options).toEqual(copy)
    expect(interpolateSettings('${settings.s}${settings.s}', settings)).toBe('abcabc')
  })
})
