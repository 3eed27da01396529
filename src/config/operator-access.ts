// Who may open the operator's pages, as the configuration decides it (HOST, OPERATOR_PASSWORD,
// OPERATOR_OPEN), and the note the start-up log and `switchyard config --check` give about it. The
// server enforces it (src/server/operator-auth.ts).
import { parsedUrl } from './base-url.js'
import type { Config } from './load-config.js'

export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '')
  return h === 'localhost' || h === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(h)
}

export type OperatorAccess = 'password' | 'open-loopback' | 'open-opted-in' | 'refused'

type AccessConfig = Pick<Config, 'operatorPassword' | 'operatorOpen' | 'host'> & Partial<Pick<Config, 'baseUrl'>>

export function operatorAccess(config: AccessConfig): OperatorAccess {
  if (config.operatorPassword) return 'password'
  if (isLoopbackHost(config.host)) return 'open-loopback'
  return config.operatorOpen ? 'open-opted-in' : 'refused'
}

/** BASE_URL is https, or names a host other than a loopback one: others reach the worker there (through a proxy, if HOST is loopback). */
export function isPublicBaseUrl(baseUrl: string): boolean {
  const u = parsedUrl(baseUrl)
  return u !== undefined && (u.protocol === 'https:' || !isLoopbackHost(u.hostname))
}

/** What to tell the operator at start and in `switchyard config --check`; undefined when all is well. */
export function operatorAccessNote(config: AccessConfig): string | undefined {
  const access = operatorAccess(config)
  switch (access) {
    case 'password':
      return undefined
    case 'open-loopback':
      // Open on loopback means open to requests made on this host, not through a proxy: a public
      // BASE_URL says the pages are reached through one, where they answer 403 (operator-auth.ts).
      if (!config.baseUrl || !isPublicBaseUrl(config.baseUrl)) return undefined
      return `OPERATOR_PASSWORD (BASE_URL=${config.baseUrl} is public, but without a password the operator page and /oauth/start on HOST=${config.host} are open only to requests made on this host, not through a reverse proxy, which gets 403)`
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
