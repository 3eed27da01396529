// docs/pipelines.md: `enabled: false` switches a check off "without deleting it". A route or a
// condition that names the check (findings.unchanged > 0) must still load, and count 0 for it;
// the load failed with "no check with id".
import { describe, expect, it } from 'vitest'
import { items, loadOne } from './helpers.js'

const pipeline = (checks: string) => `
key: p
name: P
input: [translated]
outputs:
  passed: { port: approved }
  review: { port: translated }
checks:
${checks}
  - uses: regex
    id: later
    if: findings.unchanged == 0
    with: { target: { forbid: 'zzz' } }
route:
  - if: findings.unchanged > 0 or errors.unchanged >= 1
    to: review
  - to: passed
`

describe('a check switched off, named in conditions', () => {
  for (const [how, checks] of [
    ['enabled: false on the check', '  - uses: unchanged\n    enabled: false'],
    ['enabled: false on a preset', '  - uses: standard\n    enabled: false'],
    ['a preset override { enabled: false }', '  - uses: standard\n    overrides: { unchanged: { enabled: false } }'],
    ['enabled: false on a missing preset with a fallback', '  - uses: not-yet-a-preset\n    enabled: false\n    fallback:\n      - uses: unchanged'],
  ] as const) {
    it(`loads, and counts 0 for it (${how})`, async () => {
      const { set } = await loadOne(pipeline(checks))
      const p = set.get('p')!
      // The same text on both sides: the unchanged check would find it, but it is off.
      const [same, forbidden] = await p.run(items([{ source: 'Save', translation: 'Save' }, { source: 'Save', translation: 'zzz' }]))
      expect(same!.findings.filter((f) => f.check === 'unchanged')).toEqual([])
      expect(same!.output).toBe('passed')
      // The check whose `if` names it ran.
      expect(forbidden!.findings.map((f) => f.check)).toContain('later')
    })
  }

  it('still refuses an id that no check has, on or off', async () => {
    await expect(loadOne(pipeline('  - uses: unchanged\n    enabled: false').replace('findings.unchanged > 0', 'findings.unchangd > 0'))).rejects.toThrow(/no check with id "unchangd"/)
  })
})
