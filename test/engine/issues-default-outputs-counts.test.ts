// The issues rule (the outputs that send strings back, by default) on conditions that hold only for
// some error counts, and on a comparison whose side is known by three-valued logic alone.
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

describe('review', () => {
  for (const cond of [
    'errors > 0 and errors < 3',
    'errors == 1',
    'errors >= 1 and errors <= 5',
    '(errors > 0 or target.language == "de") == true',
    '(source.language == "de" or errors > 0) == true',
  ]) {
    it(`"${cond}" sends strings back`, async () => {
      const { set } = await loadOne(pipeline(cond))
      try {
        expect(set.get('p')!.issues?.outputs).toEqual(['passed'])
      } finally {
        await set.close(0)
      }
    })
  }
})
