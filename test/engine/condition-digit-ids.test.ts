// docs/pipelines.md: a check's `id` is its "name in findings and conditions" and the schema takes
// ids that start with a digit (`[a-z0-9][a-z0-9-_]*`); a condition could not name them
// ("unexpected character .").
import { expect, it } from 'vitest'
import { loadOne } from './helpers.js'

it('findings.<id> names a check whose id starts with a digit', async () => {
  const { set } = await loadOne(`
key: p
name: P
input: [translated]
outputs:
  passed: { port: approved }
  failed: { port: translated }
checks:
  - uses: empty
    id: 1st-pass
route:
  - if: findings.1st-pass > 0
    to: failed
  - to: passed
`)
  try {
    expect(set.get('p')).toBeDefined()
  } finally {
    await set.close(0)
  }
})
