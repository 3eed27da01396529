// Which secret a signature was made with, and the forms of the signature header: surrounding
// whitespace is ignored, `sha256=` is a prefix only, never something removed from the middle.
import { describe, expect, it } from 'vitest'
import { matchSignature } from '../../src/webhooks/verify-signature.js'
import { signBody } from '../../src/protocol/webhook-signature.js'

const body = Buffer.from('{"events":[]}')

describe('signature header forms', () => {
  it('tells which secret signed the body, the first of equal ones', () => {
    expect(matchSignature(body, signBody(body, 'old'), ['old', 'new'])).toBe(0)
    expect(matchSignature(body, signBody(body, 'new'), ['old', 'new'])).toBe(1)
    expect(matchSignature(body, signBody(body, 'same'), ['same', 'other', 'same'])).toBe(0)
    expect(matchSignature(body, signBody(body, 'none'), ['old', 'new'])).toBe(-1)
  })

  it('ignores whitespace around the header value', () => {
    expect(matchSignature(body, `  sha256=${signBody(body, 's')}\t`, ['s'])).toBe(0)
    expect(matchSignature(body, ` ${signBody(body, 's')} `, ['s'])).toBe(0)
  })

  it('refuses "sha256=" anywhere but at the start', () => {
    const hex = signBody(body, 's')
    expect(matchSignature(body, `${hex.slice(0, 10)}sha256=${hex.slice(10)}`, ['s'])).toBe(-1)
    expect(matchSignature(body, `x-sha256=${hex}`, ['s'])).toBe(-1)
  })
})
