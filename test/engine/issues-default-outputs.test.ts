// docs/pipelines.md "Issues": `outputs` defaults to the outputs of routes whose `if` counts
// errors (the outputs that send a string back). A route that sends the strings WITHOUT errors
// somewhere (`no errors so far`, `errors == 0`) is the opposite: its output must not raise issues.
import { describe, expect, it } from 'vitest'
import { loadOne } from './helpers.js'

const pipeline = (first: string) => `
key: p
name: P
input: [translated]
outputs:
  passed: { port: approved }
  failed: { port: translated }
settings:
  properties:
    strict: { type: boolean, default: false }
checks:
  - uses: empty
route:
  - if: ${first}
    to: passed
  - to: failed
issues: {}
`

describe('issues: the default outputs', () => {
  // With fields and settings too: a clean route restricted to some strings is still a clean route.
  for (const cond of ['no errors so far', 'errors == 0', 'not (errors > 0)', 'errors.empty < 1', 'no errors and target.language == "de"', 'errors == 0 and settings.strict', 'not (errors > 0 or file.type == "json")']) {
    it(`a route "${cond}" to "passed" does not make "passed" an output that sends strings back`, async () => {
      const { set } = await loadOne(pipeline(cond))
      try {
        expect(set.get('p')!.issues?.outputs ?? []).not.toContain('passed')
      } finally {
        await set.close(0)
      }
    })
  }

  // Some hold only for some error counts; the last two have a side known by three-valued logic
  // alone (it must not be evaluated on the fields of its unknown part at load).
  for (const cond of [
    'errors > 0 or not settings.strict', 'errors > 0 and file.type == "json"', 'errors > 0 and warnings == 0', 'errors.empty > 0 or source == ""',
    'errors > 0 and errors < 3', 'errors == 1', 'errors >= 1 and errors <= 5',
    '(errors > 0 or target.language == "de") == true', '(source.language == "de" or errors > 0) == true',
  ]) {
    it(`a route "${cond}" sends strings back`, async () => {
      const { set } = await loadOne(pipeline(cond))
      try {
        expect(set.get('p')!.issues?.outputs).toEqual(['passed'])
      } finally {
        await set.close(0)
      }
    })
  }

  it('a route that counts errors still does', async () => {
    const { set } = await loadOne(pipeline('errors.empty >= 1').replace('to: passed', 'to: failed').replace(/- to: failed\n/, '- to: passed\n'))
    try {
      expect(set.get('p')!.issues?.outputs).toEqual(['failed'])
    } finally {
      await set.close(0)
    }
  })
})
