// A check that throws an Error whose `message` cannot be read (a getter that throws) costs only
// its own string (an engine finding, routed by `on-error`): the others of the run go on.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { PipelineSet } from '../../src/engine/load-pipelines.js'
import { items, loadOne, pipelineYaml, testDeps } from '../engine/helpers.js'

const open: PipelineSet[] = []
afterEach(async () => { await Promise.all(open.splice(0).map((s) => s.close(0))) })

function pluginsDir() {
  const dir = mkdtempSync(path.join(tmpdir(), 'unreadable-error-'))
  writeFileSync(path.join(dir, 'odd-throw.mjs'), `export default {
  name: 'odd-throw', description: 'throws an Error whose message cannot be read, on BOOM', options: { type: 'object', additionalProperties: false, properties: {} },
  needs: ['translation'],
  create() { return { check(item) {
    if (item.translation === 'BOOM') { const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw new Error('no message') } }); throw e }
    return []
  } } },
}`)
  return dir
}

describe('a check that throws an Error with an unreadable message', () => {
  it('fails only its own string', async () => {
    const { set } = await loadOne(pipelineYaml(`checks:
  - uses: odd-throw
route:
  - if: errors > 0
    to: failed
  - to: passed
`), testDeps({ pluginsDir: pluginsDir() }))
    open.push(set)
    const results = await set.get('t')!.run(items([{ source: 'a', translation: 'fine' }, { source: 'b', translation: 'BOOM' }]))
    expect(results.map((r) => r.output)).toEqual(['passed', null])
  })
})
