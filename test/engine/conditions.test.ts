import { describe, expect, it } from 'vitest'
import { compileCondition, ConditionError, type ConditionScope, type EvalState } from '../../src/engine/conditions.js'
import { testItem } from '../../src/engine/plugin-tester.js'

const scope: ConditionScope = {
  checks: new Map([['placeholders', 0], ['no-double-space', 1]]),
  settings: new Map([['strict', 'boolean'], ['ratio', 'number'], ['mode', 'string']]),
}

function state(o: { sev?: [number, number, number]; byCheck?: number[]; fileType?: string; labels?: number[]; settings?: Record<string, unknown>; key?: string } = {}): EvalState {
  const item = { ...testItem({ source: 'Hello', translation: 'Bonjour', fileType: o.fileType ?? 'android', labelIds: o.labels ?? [12, 40], key: o.key }), settings: o.settings ?? { strict: true, ratio: 1.5, mode: 'x' } }
  return { item, sev: Int32Array.from(o.sev ?? [0, 0, 0]), byCheck: Int32Array.from(o.byCheck ?? [0, 0, 0, 0, 0, 0]) }
}

describe('conditions: evaluation', () => {
  const cases: Array<[string, EvalState, boolean]> = [
    ['errors > 0', state({ sev: [1, 0, 0] }), true],
    ['errors > 0', state(), false],
    ['warnings >= 2', state({ sev: [0, 2, 0] }), true],
    ['warnings >= 2', state({ sev: [0, 1, 0] }), false],
    ['findings == 3', state({ sev: [1, 1, 1] }), true],
    ['infos < 1', state(), true],
    ['errors <= 1', state({ sev: [2, 0, 0] }), false],
    ['errors != 0', state({ sev: [2, 0, 0] }), true],
    ['no errors so far', state(), true],
    ['no errors so far', state({ sev: [1, 0, 0] }), false],
    ['no warnings', state({ sev: [0, 1, 0] }), false],
    ['findings.placeholders > 0', state({ byCheck: [0, 1, 0, 0, 0, 0] }), true],
    ['findings.placeholders > 0', state({ byCheck: [0, 0, 0, 1, 0, 0] }), false],
    ['errors.no-double-space == 1', state({ byCheck: [0, 0, 0, 1, 0, 0] }), true],
    ['file.type == "android"', state(), true],
    ["file.type == 'json'", state(), false],
    ['labels contains 12', state(), true],
    ['labels contains 13', state(), false],
    ['key contains "menu."', state({ key: 'menu.save' }), true],
    ['key matches "^menu\\\\."', state({ key: 'menu.save' }), true],
    ['key matches "^menu\\\\."', state({ key: 'menus' }), false],
    ['errors > 0 or warnings > 0', state({ sev: [0, 1, 0] }), true],
    ['errors > 0 and warnings > 0', state({ sev: [0, 1, 0] }), false],
    ['not (errors > 0)', state(), true],
    ['!(errors > 0) && file.type == "android"', state(), true],
    ['(errors > 0 or warnings > 0) and file.type == "ios"', state({ sev: [1, 0, 0] }), false],
    ['errors > 0 or warnings > 0 and false', state({ sev: [1, 0, 0] }), true],
    ['settings.strict', state(), true],
    ['settings.ratio > 1', state(), true],
    ['settings.mode == "y"', state(), false],
    ['plural', state(), false],
    ['target.language == "fr"', state(), true],
    ['maxLength == 0', state(), true],
  ]
  for (const [text, s, want] of cases) {
    it(`${text} -> ${want}`, () => expect(compileCondition(text, scope)(s)).toBe(want))
  }
})

// Rule: settings.<name> is the step's own setting: a declared setting called toString that the
// step has not set is undefined, not Object.prototype.toString (truthy, never equal to a text).
describe('conditions: settings named like Object.prototype members', () => {
  const named: ConditionScope = { checks: new Map(), settings: new Map([['toString', 'string'], ['constructor', 'any']]) }
  it('have the value the step gives them, else none', () => {
    expect(compileCondition('settings.toString', named)(state({ settings: {} }))).toBe(false)
    expect(compileCondition('settings.constructor', named)(state({ settings: {} }))).toBe(false)
    expect(compileCondition('settings.toString == "x"', named)(state({ settings: { toString: 'x' } }))).toBe(true)
  })
})

describe('conditions: errors at load, with their offset', () => {
  const bad: Array<[string, RegExp, number]> = [
    ['errors >> 0', /unexpected ">"/, 8],
    ['errors > ', /ends too early/, 9],
    ['errors = 0', /"=="/, 7],
    ['findings.nope > 0', /no check with id "nope"/, 9],
    ['colour == "red"', /unknown name "colour"/, 0],
    ['file.type > 2', /needs numbers/, 10],
    ['errors == "x"', /cannot compare a number with a string/, 7],
    ['(errors > 0', /missing "\)"/, 11],
    ['key matches "("', /invalid regular expression/, 12],
    ['no bananas so far', /"no" must be followed/, 3],
    ['settings.nope', /unknown setting "nope"/, 0],
    ['errors > 0 warnings', /expected "and", "or"/, 11],
    ['"unterminated', /unterminated string/, 0],
    ['errors > 0 # comment', /unexpected character "#"/, 11],
    ['', /empty/, 0],
    // Rule: names inherited from Object.prototype are not fields (FIELDS is read by own property).
    ['toString', /unknown name "toString"/, 0],
    ['constructor', /unknown name "constructor"/, 0],
    ['__proto__', /unknown name "__proto__"/, 0],
    ['valueOf', /unknown name "valueOf"/, 0],
    ['hasOwnProperty', /unknown name "hasOwnProperty"/, 0],
    ['toString == "x"', /unknown name "toString"/, 0],
    ['not constructor', /unknown name "constructor"/, 4],
  ]
  for (const [text, message, offset] of bad) {
    it(JSON.stringify(text), () => {
      let error: unknown
      try { compileCondition(text, scope) } catch (e) { error = e }
      expect(error).toBeInstanceOf(ConditionError)
      expect((error as ConditionError).message).toMatch(message)
      expect((error as ConditionError).offset).toBe(offset)
    })
  }
})
