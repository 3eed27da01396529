// docs/pipelines.md: "a timeout past 2147483647 ms (what a timer can wait; Node fires a longer one
// at once)" is an error. It is, but the file was still compiled with that timeout, so a plugin
// whose create() takes a moment got a second, false error ("did not start within 3000000000 ms").
import { describe, expect, it } from 'vitest'
import { loadPipelines } from '../../src/engine/load-pipelines.js'
import { testDeps, writePipelines } from './helpers.js'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

describe('a check timeout past the timer limit', () => {
  it('is one error, the schema\'s; a create() that takes 20 ms is not reported as not started', async () => {
    const pluginsDir = mkdtempSync(path.join(tmpdir(), 'switchyard-slow-start-'))
    writeFileSync(path.join(pluginsDir, 'slow-start.mjs'), `export default { name: 'slow-start', description: 'x', options: { type: 'object' },
  async create() { await new Promise((r) => setTimeout(r, 20)); return { check: () => [] } } }\n`)
    const { paths } = writePipelines({ 'p.yaml': `key: p
name: P
input: [translated]
outputs:
  passed: { port: approved }
checks:
  - uses: slow-start
    timeout: 3000000000
route:
  - to: passed
` })
    const r = await loadPipelines(paths, testDeps({ pluginsDir }))
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.errors.map((e) => e.message)).toEqual(['checks.0.timeout: must be <= 2147483647'])
  })
})
