// Logs: JSON for machines, readable lines for a person at a terminal, secrets redacted either way.
import { describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { PinoPretty } from 'pino-pretty'
import { pino } from 'pino'
import { createLogger, wantsPretty, REDACT_PATHS } from '../../src/util/logger.js'

describe('log format', () => {
  it('is pretty when asked, or on auto with a terminal; JSON otherwise', () => {
    expect(wantsPretty('pretty', false)).toBe(true)
    expect(wantsPretty('json', true)).toBe(false)
    expect(wantsPretty('auto', true)).toBe(true)
    expect(wantsPretty('auto', false)).toBe(false)
    expect(wantsPretty(undefined, undefined)).toBe(false)
  })
  it('JSON lines keep secrets out', () => {
    const lines: string[] = []
    const log = createLogger({ destination: { write: (l: string) => void lines.push(l) } })
    log.info({ token: 'abc', headers: { authorization: 'Bearer x' } }, 'hello')
    const line = JSON.parse(lines[0]!)
    expect(line).toMatchObject({ msg: 'hello', token: '[redacted]', headers: { authorization: '[redacted]' } })
  })
  it('pretty lines are one readable line with the fields, and keep secrets out too', () => {
    let out = ''
    const sink = new Writable({ write(chunk, _enc, done) { out += String(chunk); done() } })
    const stream = PinoPretty({ sync: true, colorize: false, destination: sink })
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, stream)
    log.warn({ domain: 'acme', token: 'abc' }, 'organization held')
    expect(out).toMatch(/WARN.*organization held/)
    expect(out).toContain('domain: "acme"')
    expect(out).not.toContain('abc')
  })
})
