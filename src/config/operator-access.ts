// Who may open the operator's pages, as the configuration decides it (HOST, OPERATOR_PASSWORD,
// OPERATOR_OPEN), and the note the start-up log and `switchyard config --check` give about it. The
// server enforces it (src/server/operator-auth.ts).
import type { Config } from './load-config.js'

export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '')
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::ffff:127.0.0.1'
}

export type OperatorAccess = 'password' | 'open-loopback' | 'open-opted-in' | 'refused'

export function operatorAccess(config: Pick<Config, 'operatorPassword' | 'operatorOpen' | 'host'>): OperatorAccess {
  if (config.operatorPassword) return 'password'
  if (isLoopbackHost(config.host)) return 'open-loopback'
  return config.operatorOpen ? 'open-opted-in' : 'refused'
}

/** What to tell the operator at start and in `switchyard config --check`; undefined when all is well. */
export function operatorAccessNote(config: Pick<Config, 'operatorPassword' | 'operatorOpen' | 'host'>): string | undefined {
  const access = operatorAccess(config)
  switch (access) {
    case 'password':
    case 'open-loopback':
      return undefined
    case 'open-opted-in':
      return `OPERATOR_OPEN=true and no OPERATOR_PASSWORD: the operator page and /oauth/start are open to anyone who can reach HOST=${config.host}`
    case 'refused':
      return `OPERATOR_PASSWORD (without it, the operator page and /oauth/start answer 403 on HOST=${config.host}; set OPERATOR_OPEN=true to open them on purpose, or bind HOST=127.0.0.1)`
    default: {
      const never: never = access
      return never
    }
  }
}
