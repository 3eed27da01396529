import { describe, expect, it } from 'vitest'
import { boundedLabels, createMetrics } from '../../src/util/metrics.js'

describe('boundedLabels', () => {
  it('keeps the first values and counts the rest as "other", so series stay bounded', async () => {
    const label = boundedLabels(3)
    expect(['a', 'b', 'a', 'c', 'd', 'e', 'b'].map(label)).toEqual(['a', 'b', 'a', 'c', 'other', 'other', 'b'])
    const metrics = createMetrics({ defaults: false })
    for (let i = 0; i < 10; i++) metrics.findings.inc({ check: label(`check-${i}`), severity: 'error' })
    const series = (await metrics.findings.get()).values
    expect(series).toHaveLength(1)
    expect(series[0]).toMatchObject({ labels: { check: 'other', severity: 'error' }, value: 10 })
  })
})
