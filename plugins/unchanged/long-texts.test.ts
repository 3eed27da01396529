// A long unchanged translation is not segmented to its end: the verdict needs at most five words
// (issue 17: on 48,000 characters, segmenting everything was a sixth of qa-gate's time). Counted
// as calls of the segmenter (text with a letter outside ASCII) or of the segments cut from an ASCII
// text (scanned without the segmenter), not timed.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { instantiatePlugin } from '../../src/engine/instantiate-plugin.js'
import { testContext, testItem } from '../../src/engine/plugin-tester.js'
import type { FindingInput } from '../../src/engine/types.js'
import unchanged from './index.js'

afterEach(() => vi.restoreAllMocks())

async function check(source: string, translation: string, options: Record<string, unknown> = {}) {
  const instance = await instantiatePlugin(unchanged as never, options, testContext(unchanged as never))
  const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment')
  const findings = (await instance.check!(testItem({ source, translation, targetLanguage: 'de' }))) as FindingInput[]
  return { findings, segmentCalls: segment.mock.calls.length }
}

describe('unchanged on long texts', () => {
  it('reports a long unchanged text after segmenting its first piece only', async () => {
    const text = 'Save the file before you close the window, café. '.repeat(1_000)
    const { findings, segmentCalls } = await check(text, text)
    expect(findings).toMatchObject([{ code: 'untranslated', severity: 'error', span: { start: 0, end: text.length } }])
    expect(segmentCalls).toBe(1)
  })

  it('cuts only the first words of a long ASCII text', async () => {
    const text = 'Save the file before you close the window. '.repeat(1_000)
    const instance = await instantiatePlugin(unchanged as never, {}, testContext(unchanged as never))
    const item = testItem({ source: text, translation: text, targetLanguage: 'de' })
    // The locale's first ASCII text checks the scan against its segmenter once (ascii-words.ts).
    await instance.check!(testItem({ source: 'Save the file now', translation: 'Save the file now', targetLanguage: 'de' }))
    const slice = vi.spyOn(String.prototype, 'slice')
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment')
    const findings = (await instance.check!(item)) as FindingInput[]
    const slices = slice.mock.calls.length
    slice.mockRestore()
    // The scan, not the segmenter, read it.
    expect(segment).not.toHaveBeenCalled()
    expect(findings).toMatchObject([{ code: 'untranslated', span: { start: 0, end: text.length } }])
    // Nine segments to reach five words; the whole text has 17,000.
    expect(slices).toBeLessThan(200)
  })

  it('reads on until it has minLength letters', async () => {
    // Five one-letter words, then a longer one 30,000 characters in: the letters reach 12 only there.
    const text = `a b c d é${' '.repeat(30_000)}Translations`
    const { findings, segmentCalls } = await check(text, text, { minLength: 12 })
    expect(findings).toMatchObject([{ code: 'untranslated' }])
    expect(segmentCalls).toBeGreaterThan(1)
    // Without that last word, too few letters: nothing to report.
    const short = `a b c d é${' '.repeat(30_000)}`
    expect((await check(short, short, { minLength: 12 })).findings).toEqual([])
  })

  it('does not segment a text without a letter', async () => {
    const text = '(1) '.repeat(12_000)
    const { findings, segmentCalls } = await check(text, text)
    expect(findings).toEqual([])
    expect(segmentCalls).toBe(0)
  })

  it('four names and nothing else are still names, however long the spaces between them', async () => {
    const text = `Google${' '.repeat(5_000)}Drive Sync Backup`
    const { findings } = await check(text, text)
    expect(findings).toEqual([])
  })
})
