// `switchyard config` and `switchyard manifest` answer --help with their usage and refuse what they
// do not know with exit 2, as the other commands do (a typo such as `config --chek` printed the
// reference and exited 0; `manifest --help` printed the manifest).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli/main.js'

function capture() {
  const out: string[] = []
  const err: string[] = []
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => { out.push(String(s)); return true })
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => { err.push(String(s)); return true })
  vi.spyOn(console, 'log').mockImplementation((s: unknown) => void out.push(String(s)))
  vi.spyOn(console, 'error').mockImplementation((s: unknown) => void err.push(String(s)))
  return { out: () => out.join(''), err: () => err.join('') }
}

afterEach(() => vi.restoreAllMocks())

describe.each(['config', 'manifest'])('switchyard %s', (command) => {
  it('prints its usage for --help, exit 0', async () => {
    const io = capture()
    expect(await main([command, '--help'])).toBe(0)
    expect(io.out()).toMatch(new RegExp(`^usage: switchyard ${command}`))
  })

  it('refuses an unknown option, exit 2', async () => {
    const io = capture()
    expect(await main([command, '--chek'])).toBe(2)
    expect(io.err()).toMatch(/unknown (option|argument) --chek\nusage:/)
    expect(io.out()).toBe('')
  })
})

it('switchyard --help names config --check', async () => {
  const io = capture()
  expect(await main(['--help'])).toBe(0)
  expect(io.out()).toMatch(/config \[--check\]/)
})
