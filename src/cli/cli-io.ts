// Where a command writes and what environment it sees; tests pass their own.
import type { PluginCache } from '../engine/types.js'

export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: Readonly<Record<string, string | undefined>>
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env }
}

/** A plugin cache that lives as long as the command (dry runs keep nothing). */
export function memoryCacheFor(): (namespace: string) => PluginCache {
  const spaces = new Map<string, Map<string, { value: unknown; until: number }>>()
  return (namespace) => {
    let m = spaces.get(namespace)
    if (!m) spaces.set(namespace, (m = new Map()))
    const map = m
    return {
      async get<T>(key: string) {
        const e = map.get(key)
        if (!e || e.until < Date.now()) return undefined
        return e.value as T
      },
      async set(key: string, value: unknown, ttlMs?: number) {
        map.set(key, { value, until: ttlMs ? Date.now() + ttlMs : Infinity })
      },
    }
  }
}
