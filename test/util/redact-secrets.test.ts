// What another server wrote (an error body, a message) loses its secrets before it reaches an
// error, the log or a page: the secrets given, anything shaped like a JWT or a long opaque
// credential; an API path, what an operator reads an error by, is kept.
import { describe, expect, it } from 'vitest'
import { redactSecrets } from '../../src/util/redact-secrets.js'

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'

describe('redactSecrets', () => {
  it('takes out the secrets given, JWTs and long opaque credentials', () => {
    expect(redactSecrets('refused token tok-1234 for acme', ['tok-1234'])).toBe('refused token [redacted] for acme')
    expect(redactSecrets(`{"error":"Bearer ${JWT} expired"}`, [])).toBe('{"error":"Bearer [redacted] expired"}')
    expect(redactSecrets(`key=${'A1b2'.repeat(12)}&x=1`, [])).toBe('[redacted]&x=1')
    expect(redactSecrets(`a/${'Zz9+'.repeat(15)}`, [])).toBe('[redacted]')
  })

  it('keeps API paths and ordinary words', () => {
    const text = 'PATCH /api/v2/projects/7/languages/de/workflow-steps/41/status: the port "approved" is not declared'
    expect(redactSecrets(text, [])).toBe(text)
    expect(redactSecrets('a short token abc.def.ghi stays', [])).toBe('a short token abc.def.ghi stays')
  })

  it('reads long text in one pass (a run of 200,000 credential characters is one credential)', () => {
    expect(redactSecrets(`x ${'a'.repeat(200_000)} y`, [])).toBe('x [redacted] y')
    expect(redactSecrets(`${'a'.repeat(20)}+`.repeat(5000), [])).toBe('[redacted]')
  })
})
