// Scans kept for the next check that asks about the same text (recent-scans.ts), and the scanners
// that use it: long texts answered once and frozen, short ones scanned every time, bounded.
import { describe, expect, it, vi } from 'vitest'
import { findTags } from './markup-tags.js'
import { keepRecentScans } from './recent-scans.js'
import { findUrls } from './url-patterns.js'

describe('keepRecentScans', () => {
  const counting = () => {
    const scan = vi.fn((text: string) => [{ length: text.length }])
    return { scan, find: keepRecentScans(scan, { max: 3, minLength: 10 }) }
  }

  it('scans a long text once and hands out the same frozen answer', () => {
    const { scan, find } = counting()
    const text = 'x'.repeat(10)
    const a = find(text)
    const b = find(`${'x'.repeat(5)}${'x'.repeat(5)}`)
    expect(scan).toHaveBeenCalledTimes(1)
    expect(b).toBe(a)
    expect(a).toEqual([{ length: 10 }])
    expect(Object.isFrozen(a)).toBe(true)
    expect(Object.isFrozen(a[0])).toBe(true)
  })

  it('scans a text shorter than minLength every time', () => {
    const { scan, find } = counting()
    find('short')
    find('short')
    expect(scan).toHaveBeenCalledTimes(2)
  })

  it('keeps the last max texts: the oldest is scanned again', () => {
    const { scan, find } = counting()
    const texts = ['a', 'b', 'c', 'd'].map((c) => c.repeat(10))
    for (const t of texts) find(t)
    expect(scan).toHaveBeenCalledTimes(4)
    find(texts[3]!)
    find(texts[1]!)
    expect(scan).toHaveBeenCalledTimes(4)
    find(texts[0]!)
    expect(scan).toHaveBeenCalledTimes(5)
  })
})

describe('keepRecentScans bounds', () => {
  it('keeps texts up to maxChars in all: a text that would pass it sends the oldest out, one longer than it is not kept', () => {
    const scan = vi.fn((text: string) => [{ length: text.length }])
    const find = keepRecentScans(scan, { max: 10, maxChars: 25 })
    const [a, b, c] = ['a', 'b', 'c'].map((ch) => ch.repeat(10)) as [string, string, string]
    find(a)
    find(b)
    find(c) // 30 characters: a goes
    expect(scan).toHaveBeenCalledTimes(3)
    find(b)
    find(c)
    expect(scan).toHaveBeenCalledTimes(3)
    find(a)
    expect(scan).toHaveBeenCalledTimes(4)
    const long = 'x'.repeat(30)
    find(long)
    find(long)
    expect(scan).toHaveBeenCalledTimes(6)
  })

  it("freezes each item's own lists too (a tag's attributes)", () => {
    const find = keepRecentScans((text: string) => [{ text, attributes: [{ name: 'href' }] }], { max: 2 })
    const [first] = find('<a href>')
    expect(Object.isFrozen(first!.attributes)).toBe(true)
    expect(() => (first!.attributes as Array<{ name: string }>).push({ name: 'x' })).toThrow(TypeError)
  })
})

describe('scanners that keep long answers', () => {
  it('findTags: the same frozen tags for the same long text, a fresh list for a short one', () => {
    const long = `<b>${'word '.repeat(300)}</b>`
    expect(findTags(long)).toBe(findTags(long))
    expect(Object.isFrozen(findTags(long))).toBe(true)
    expect(findTags(long).map((t) => t.kind)).toEqual(['open', 'close'])
    expect(findTags('<b>x</b>')).not.toBe(findTags('<b>x</b>'))
  })

  it('findUrls: the same frozen list for the same long text', () => {
    const long = `See https://example.com/help ${'word '.repeat(300)}`
    expect(findUrls(long)).toBe(findUrls(long))
    expect(findUrls(long).map((u) => u.text)).toEqual(['https://example.com/help'])
    expect(() => (findUrls(long) as unknown as Array<{ text: string }>).push({ text: 'x' })).toThrow(TypeError)
  })
})
