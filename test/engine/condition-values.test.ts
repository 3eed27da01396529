// Conditions over every kind of value: lists (truthy when not empty, compared element by
// element), each field of the item, settings of any type, the comparison operators at their
// edges, `contains` and `matches` on each side type, and the errors that name what an operator
// needs.
import { describe, expect, it } from 'vitest'
import { compileCondition, ConditionError, type ConditionScope, type EvalState } from '../../src/engine/conditions.js'
import { testItem } from '../../src/engine/plugin-tester.js'

const scope: ConditionScope = {
  checks: new Map([['placeholders', 0]]),
  settings: new Map([['tags', 'list'], ['anything', 'any'], ['limit', 'number'], ['name', 'string']]),
}

function state(o: { labels?: number[]; settings?: Record<string, unknown>; sev?: [number, number, number]; byCheck?: number[]; item?: Record<string, unknown> } = {}): EvalState {
  const base = testItem({ source: 'Save {n} files', translation: 'Enregistrer {n} fichiers', fileType: 'xliff', labelIds: o.labels ?? [12, 40], key: 'menu.save', context: 'toolbar', maxLength: 20, isPlural: true })
  const item = { ...base, filePath: '/ui/menu.xliff', ...o.item, settings: o.settings ?? { tags: [1, 2], anything: [3, 4], limit: 5, name: 'strict' } }
  return { item, sev: Int32Array.from(o.sev ?? [0, 0, 0]), byCheck: Int32Array.from(o.byCheck ?? [0, 0, 0]) }
}

const run = (text: string, s: EvalState = state()) => compileCondition(text, scope)(s)

describe('conditions over values', () => {
  const cases: Array<[string, EvalState, boolean]> = [
    ['labels', state(), true],
    ['labels', state({ labels: [] }), false],
    ['labels == settings.tags', state({ labels: [1, 2] }), true],
    ['labels == settings.tags', state({ labels: [1, 3] }), false],
    ['labels == settings.tags', state({ labels: [1] }), false],
    ['labels == settings.tags', state({ labels: [1, 2, 3] }), false],
    ['labels != settings.tags', state({ labels: [2, 1] }), true],
    ['settings.anything contains 3', state(), true],
    ['settings.anything contains 5', state(), false],
    ['settings.anything contains "trict"', state({ settings: { anything: 'strict' } }), true],
    ['settings.anything contains "x"', state({ settings: { anything: null } }), false],
    // A setting the step has not set, with no default, has no value: a list of none, an empty text.
    ['settings.tags contains 1', state({ settings: {} }), false],
    ['not (settings.tags contains 1)', state({ settings: {} }), true],
    ['settings.name contains "undefined"', state({ settings: {} }), false],
    ['settings.name contains ""', state({ settings: {} }), true],
    ['settings.anything > 2', state({ settings: { anything: 3 } }), true],
    ['settings.anything matches "^s"', state({ settings: { anything: 'strict' } }), true],
    ['settings.anything matches "^s"', state({ settings: { anything: undefined } }), false],
    ['settings.anything == 3', state({ settings: { anything: 3 } }), true],
    ['settings.name contains settings.anything', state({ settings: { name: 'strict', anything: 'ric' } }), true],
    ['labels contains settings.anything', state({ settings: { anything: 40 } }), true],
    ['maxLength > 20', state(), false],
    ['maxLength >= 20', state(), true],
    ['maxLength < 20', state(), false],
    ['maxLength <= 20', state(), true],
    ['maxLength < settings.limit', state(), false],
    ['file.type == "xliff"', state(), true],
    ['file.path contains "/ui/"', state(), true],
    ['context == "toolbar"', state(), true],
    ['plural', state(), true],
    ['source contains "{n}"', state(), true],
    ['translation matches "fichiers$"', state(), true],
    ['translation == ""', state({ item: { translation: undefined } }), true],
    ['source.language == "en"', state(), true],
    ['findings.placeholders == 6', state({ byCheck: [1, 2, 3] }), true],
    ['warnings.placeholders == 2', state({ byCheck: [1, 2, 3] }), true],
    ['infos.placeholders == 3', state({ byCheck: [1, 2, 3] }), true],
    ['no findings so far', state({ sev: [0, 0, 1] }), false],
    ['no infos', state({ sev: [1, 1, 0] }), true],
    ['true', state(), true],
    ['false', state(), false],
    ['3 > 2', state(), true],
  ]
  it.each(cases)('%s', (text, s, expected) => {
    expect(run(text, s)).toBe(expected)
  })

  const errors: Array<[string, RegExp, number]> = [
    ['labels contains true', /"contains" needs a number or a string on the right of a list/, 7],
    ['maxLength contains 2', /"contains" needs a list or a string on the left/, 10],
    ['maxLength matches "x"', /"matches" needs a string on the left/, 10],
    ['key matches settings.name', /"matches" needs a quoted regular expression on the right/, 4],
    ['maxLength > settings.name', /"\>" needs numbers on both sides/, 10],
    ['labels == 3', /cannot compare a list with a number/, 7],
    ['findings.nope > 0', /no check with id "nope" in this pipeline \(ids: placeholders\)/, 9],
    ['no errors so close', /expected "so far"/, 13],
    ['errors > )', /unexpected "\)"/, 9],
    ['settings.x == 1', /unknown setting "x"; declare it under settings.properties/, 0],
  ]
  it.each(errors)('%s is refused', (text, message, at) => {
    let error: unknown
    try {
      compileCondition(text, scope)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConditionError)
    expect((error as Error).message).toMatch(message)
    expect((error as ConditionError).offset).toBe(at)
  })

  it('names the ids of a pipeline without checks as none', () => {
    expect(() => compileCondition('findings.x > 0', { checks: new Map(), settings: new Map() })).toThrow(/no check with id "x" in this pipeline$/)
  })
})
