import type { CliIo } from '../../src/cli/cli-io.js'

/** A CliIo that keeps what a command writes. */
export function captureIo(env: Record<string, string | undefined> = {}): CliIo & { out(): string; err(): string } {
  let out = ''
  let err = ''
  return {
    stdout: { write: (s: string) => { out += s } },
    stderr: { write: (s: string) => { err += s } },
    env,
    out: () => out,
    err: () => err,
  }
}
