// Logs: JSON for machines, readable lines for a person at a terminal, secrets redacted either way.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { PinoPretty } from 'pino-pretty'
import { pino } from 'pino'
import { createLogger, wantsPretty, REDACT_PATHS } from '../../src/util/logger.js'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

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
  it('JSON lines have the fields docs/deployment.md names: level a number, time ISO 8601, name', () => {
    const lines: string[] = []
    const log = createLogger({ destination: { write: (l: string) => void lines.push(l) } })
    log.child({ part: 'engine' }).warn({ delivery: 'b1' }, 'x')
    const line = JSON.parse(lines[0]!)
    expect(line).toMatchObject({ level: 40, name: 'switchyard', part: 'engine', delivery: 'b1', msg: 'x' })
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const doc = readFileSync(path.join(PACKAGE_ROOT, 'docs', 'deployment.md'), 'utf8')
    const logs = doc.slice(doc.indexOf('## Logs'), doc.indexOf('## Backups'))
    expect(logs).toContain('`time` (ISO 8601, UTC')
    expect(logs).toContain('`delivery`')
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
