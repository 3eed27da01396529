// Plugin instances per settings value live in a bounded cache (issue 17): a step whose settings
// take many values (one per project, or an editor user saving in a loop) must not keep an
// instance for each until the next reload.
import { describe, expect, it } from 'vitest'
import { INSTANCES_PER_CHECK } from '../../src/engine/compile-checks.js'
import { LruMap } from '../../src/engine/lru-map.js'
import { items, loadOne, pipelineYaml } from './helpers.js'

const yaml = pipelineYaml(`settings:
  properties:
    ratio: { type: number, default: 1.5 }
checks:
  - uses: echo-options
    with:
      ratio: \${settings.ratio}
route:
  - to: passed
`)

describe('plugin instances per settings value', () => {
  it('are kept for at most INSTANCES_PER_CHECK distinct values', async () => {
    const { set } = await loadOne(yaml)
    const pipeline = set.get('t')!
    const n = 600
    for (let i = 0; i < n; i++) await pipeline.run(items([{ source: 'x' }], { ratio: 2 + i }))
    // The set's compiled pipelines hold every instance it will close; a private field, read here
    // because nothing public should need the count.
    const instances = (set as unknown as { instances: Array<() => unknown[]> }).instances
    expect(instances[0]!().length).toBeLessThanOrEqual((INSTANCES_PER_CHECK ?? 0) + 1)
    // The most recent values are still there and still right.
    const [r] = await pipeline.run(items([{ source: 'x' }], { ratio: 2 + n - 1 }))
    expect(JSON.parse(r!.findings[0]!.message).ratio).toBe(2 + n - 1)
  })

  it('LruMap forgets the least recently used entry first and reports it', () => {
    const evicted: string[] = []
    const m = new LruMap<string, number>(2, (_v, k) => evicted.push(k))
    m.set('a', 1).set('b', 2)
    m.get('a')
    m.set('c', 3)
    expect([...m.keys()]).toEqual(['a', 'c'])
    expect(evicted).toEqual(['b'])
  })
})
