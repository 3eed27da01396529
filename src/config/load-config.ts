// Configuration from the environment, validated once at start. Every error is reported at once
// (the textlint habit), each naming the variable and what to fix.
import { MAX_TIMER_MS, OPTIONS, type Config, type OptionName, type OptionSpec } from './options.js'
import { isLocalhostHttpUrl } from './base-url.js'
import { operatorAccessNote } from './operator-access.js'
import { entriesWithoutSecret } from './app-secret-entries.js'
import { parseTokenKey } from './token-key.js'
import { settingsFrameAncestors, settingsScriptSource } from './settings-page.js'
import { pathProblems } from './path-problems.js'

export type { Config } from './options.js'
export { PACKAGE_ROOT } from './package-root.js'
export { defaultIngestThreads, defaultPipelineThreads } from './options.js'

export class ConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(`Invalid configuration:\n  ${errors.join('\n  ')}`)
    this.name = 'ConfigError'
  }
}

type Env = Readonly<Record<string, string | undefined>>

/**
 * Not set: absent, or empty (spaces only, as `PORT= ` in an env file, count as empty) unless the
 * option keeps an empty value. A value of spaces was read as a number 0 (Number(' ') is 0): a port
 * picked at random, no shutdown deadline, the reconciliation sweep off.
 */
const unset = (spec: OptionSpec, raw: string | undefined): raw is undefined | '' =>
  raw === undefined || ((isSecret(spec) ? raw === '' : raw.trim() === '') && !spec.emptyMeansNone)
/** A secret is taken as written: one of spaces is a value (a password), never "unset" (which opens /metrics). */
const isSecret = (spec: OptionSpec) => spec.kind === 'secret' || spec.kind === 'secret-list'

/** The value of an option that is not set: its literal default, or the empty value of its kind. */
function literalDefault(spec: OptionSpec): unknown {
  if (spec.default !== undefined && typeof spec.default !== 'function') return spec.kind === 'list' || spec.kind === 'secret-list' ? [...spec.default] : spec.default
  switch (spec.kind) {
    case 'int': return 0
    case 'bool': return false
    case 'list': case 'secret-list': return []
    default: return ''
  }
}

/**
 * A URL as an error may quote it: the password of its user info (`redis://:PASSWORD@host`,
 * `postgres://user:PASSWORD@host/db`) replaced, so a mistyped scheme does not put it in the log.
 */
export function withoutPassword(url: string): string {
  // Up to the last `@`: a password typed unencoded may hold `/`, `?`, `#` and `@` (base64 ones do).
  // Any number of slashes after the scheme (`redis:/:pw@host` too).
  return url.replace(/^([^/?#:]*:\/*[^/?#@:]*):.*@/s, '$1:***@')
}

/** Parse one value given in the environment; a bad one adds an error naming the variable. */
function parseValue(spec: OptionSpec, value: string, errors: string[]): unknown {
  switch (spec.kind) {
    case 'string':
    case 'secret':
      return value
    case 'url': {
      // The URL parser ignores spaces around it; the value must too (a trailing space in an env
      // file went into the manifest's addresses and the OAuth redirect URI).
      value = value.trim()
      if (!value) return ''
      let protocol: string | undefined
      try {
        protocol = new URL(value).protocol
      } catch {
        errors.push(`${spec.env}: "${withoutPassword(value)}" is not a URL (expected e.g. https://example.com)`)
      }
      // Every URL option is an address the worker or the service reaches over HTTP. The URL parser
      // takes `host:port` for a scheme and a path (`localhost:11434/v1`, `switchyard.example.com:443`
      // parse, with the protocol `localhost:`): such a value went into the manifest, or failed every
      // request at run time, while `config --check` called it valid.
      if (protocol !== undefined && protocol !== 'http:' && protocol !== 'https:') {
        errors.push(`${spec.env}: "${withoutPassword(value)}" must start with http:// or https:// (expected e.g. https://example.com)`)
      }
      return value.replace(/\/+$/, '')
    }
    case 'int': {
      // Decimal digits only: Number() also reads 0x50 (80), 1e3 and 0b11, which no one means for a port or a count.
      const n = /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : NaN
      if (!Number.isSafeInteger(n) || (spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        const range = `${spec.min ?? '-inf'}..${spec.max ?? 'inf'}`
        const timer = spec.max === MAX_TIMER_MS && n > MAX_TIMER_MS ? ' (a longer wait than a timer can make, about 24.8 days, would fire at once)' : ''
        errors.push(`${spec.env}: "${value}" is not a whole number in ${range}${timer}`)
        return literalDefault(spec)
      }
      return n
    }
    case 'bool': {
      // A value that is neither (`ture`, `on`) is refused rather than read as false.
      const v = value.trim().toLowerCase()
      if (v === 'true' || v === '1' || v === 'yes') return true
      if (v === 'false' || v === '0' || v === 'no') return false
      errors.push(`${spec.env}: "${value}" is not true or false (also 1/0, yes/no)`)
      return literalDefault(spec)
    }
    case 'list':
    case 'secret-list':
      return value.split(',').map((s) => s.trim()).filter(Boolean)
    case 'enum': {
      if (!spec.values.includes(value)) {
        errors.push(`${spec.env}: "${value}" is not one of ${spec.values.join(', ')}`)
        return spec.default
      }
      return value
    }
    default: {
      const never: never = spec
      throw new Error(`unknown option kind ${String((never as OptionSpec).kind)}`)
    }
  }
}

/**
 * One option read from the environment exactly as loadConfig reads it (its default when unset),
 * for a command that needs it alone (`switchyard try` and CHECK_TIME_BUDGET_MS): its value, or
 * the error loadConfig would list for it. Only for options with a literal default.
 */
export function readOption<K extends OptionName>(name: K, env: Env = process.env): { ok: true; value: Config[K] } | { ok: false; error: string } {
  const spec: OptionSpec = OPTIONS[name]
  if (typeof spec.default === 'function') throw new Error(`${spec.env} has a default computed from other options: read it with loadConfig`)
  const raw = env[spec.env]
  if (unset(spec, raw)) return { ok: true, value: literalDefault(spec) as Config[K] }
  const errors: string[] = []
  const value = parseValue(spec, raw, errors) as Config[K]
  return errors.length ? { ok: false, error: errors.join('; ') } : { ok: true, value }
}

/** Read and validate the configuration; throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const { config, errors } = readConfig(env, overrides)
  if (errors.length) throw new ConfigError(errors)
  return config
}

/**
 * What `config --check` checks: the environment as loadConfig reads it, and also, on disk, the
 * directories it names (pathProblems); throws ConfigError listing every problem of both.
 */
export function checkConfig(env: Env = process.env): Config {
  const { config, errors } = readConfig(env, {})
  errors.push(...pathProblems(config))
  if (errors.length) throw new ConfigError(errors)
  return config
}

/** The configuration, and every problem of the environment it was read from. */
function readConfig(env: Env, overrides: Partial<Config>): { config: Config; errors: string[] } {
  const errors: string[] = []
  const values: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(OPTIONS) as Array<[string, OptionSpec]>) {
    const raw = env[spec.env]
    values[name] = unset(spec, raw) ? literalDefault(spec) : parseValue(spec, raw, errors)
  }
  const config = { ...(values as Config), ...overrides }
  // Computed defaults, in declaration order, fill what neither an override nor the environment set.
  for (const [name, spec] of Object.entries(OPTIONS) as Array<[string, OptionSpec]>) {
    if (typeof spec.default !== 'function') continue
    const given = (overrides as Record<string, unknown>)[name]
    if (given === undefined ? unset(spec, env[spec.env]) : given === '') {
      (config as Record<string, unknown>)[name] = (spec.default as (c: Config) => unknown)(config)
    }
  }
  if (!/^(sqlite|redis|rediss|postgres|postgresql|memory):\/\//.test(config.storeUrl)) {
    errors.push(`STORE_URL: "${withoutPassword(config.storeUrl)}" must start with sqlite://, redis://, postgres:// or memory://`)
  }
  if (config.apiUrl && !/^https?:\/\//.test(config.apiUrl)) {
    errors.push(`API_URL: "${withoutPassword(config.apiUrl)}" must be an http(s) address; it may hold {organization_domain}`)
  }
  for (const entry of entriesWithoutSecret(config.appSecrets)) {
    errors.push(`APP_SECRET: the entry "${entry}" names organization ${entry.slice(0, -1)} but no secret (an unset variable?); write ${entry.slice(0, -1)}=SECRET, or remove the entry`)
  }
  if (!/^[A-Za-z][A-Za-z0-9-]*-$/.test(config.headerPrefix)) {
    errors.push(`HEADER_PREFIX: "${config.headerPrefix}" must look like X-Service- (letters, digits, dashes, ending in -)`)
  }
  // BullMQ keys are bull:<name>:<part>: a colon would make one deployment's keys look like another's.
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(config.queueName)) {
    errors.push(`QUEUE_NAME: "${config.queueName}" must be 1 to 100 letters, digits, - or _ (it names the Redis keys bull:<name>:...)`)
  }
  // Checked here too (the worker refuses it at its start), so that `config --check` does not call
  // such a configuration valid.
  // ioredis also takes host:port, a port, a Unix socket path and an upper-case scheme: only a URL of
  // another scheme is refused, and only when the queue uses it.
  if (config.queue === 'bullmq' && config.queueRedisUrl && /^[a-z][a-z0-9+.-]*:\/\//i.test(config.queueRedisUrl) && !/^rediss?:\/\//i.test(config.queueRedisUrl)) {
    errors.push(`QUEUE_REDIS_URL: "${withoutPassword(config.queueRedisUrl)}" must start with redis:// or rediss:// (BullMQ runs on Redis only)`)
  } else if (config.queue === 'bullmq' && !config.queueRedisUrl && !/^rediss?:\/\//.test(config.storeUrl)) {
    errors.push('QUEUE=bullmq needs Redis: set QUEUE_REDIS_URL=redis://..., or a redis:// STORE_URL (or QUEUE=memory for one instance)')
  }
  // The id alone lets an authorization start, but the code exchange and every token refresh need
  // the secret (and settings callbacks are verified with it): refuse to start half-configured.
  if (config.clientId && !config.clientSecret) {
    errors.push('CLIENT_SECRET: required when CLIENT_ID is set (the token exchange and every refresh send it, and settings callbacks are verified with it); set CLIENT_SECRET to the OAuth client secret, or unset CLIENT_ID')
  }
  // A malformed key stopped the start only once the store was open and the pipelines loaded, and
  // `config --check` called such a configuration valid.
  if (config.tokenKey) {
    try {
      parseTokenKey(config.tokenKey)
    } catch (error) {
      errors.push((error as Error).message)
    }
  }
  // The settings page's CSP is built from these: checked here too, so that `config --check` does
  // not call valid what stopped the worker's start (after the store was opened and the pipelines loaded).
  for (const r of [settingsScriptSource(config.settingsScriptUrl), settingsFrameAncestors(config.settingsFrameAncestors)]) {
    if (!r.ok) errors.push(r.error)
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    errors.push(`HEADERS_TIMEOUT_MS (${config.headersTimeoutMs}) must not be longer than REQUEST_TIMEOUT_MS (${config.requestTimeoutMs})`)
  }
  return { config, errors }
}

/**
 * What `config --check` says is missing for production: what is missing to connect a real
 * organization (missingToConnect), and TOKEN_KEY on a shared store.
 */
export function missingForProduction(config: Config): string[] {
  const missing = missingToConnect(config)
  // docs/deployment.md: mandatory on a shared store. One instance on Redis connects and works with
  // its key file, and the worker warns about it at its start (loadTokenKey): it is not "running on
  // defaults"; `config --check` says so before a second instance starts.
  if (!config.tokenKey && /^(redis|rediss|postgres|postgresql):\/\//.test(config.storeUrl)) {
    missing.push('TOKEN_KEY (the store is shared: without it each instance creates a key file of its own in DATA_DIR and cannot read the tokens the others saved; set the same key on every instance)')
  }
  return missing
}

/** What is missing to connect a real organization, in words an operator can act on (serve: "running on defaults" while any is). */
export function missingToConnect(config: Config): string[] {
  const missing: string[] = []
  if (config.appSecrets.length === 0) missing.push('APP_SECRET (webhooks cannot be verified, so every webhook is refused)')
  if (!config.clientId || !config.clientSecret) missing.push('CLIENT_ID and CLIENT_SECRET (no organization can connect; settings callbacks are refused)')
  if (!config.authUrl) missing.push('AUTH_URL (the authorization server)')
  if (!config.apiUrl) missing.push('API_URL (where string statuses are reported)')
  if (isLocalhostHttpUrl(config.baseUrl)) missing.push('BASE_URL (the public address the service reaches this worker at)')
  const operator = operatorAccessNote(config)
  if (operator) missing.push(operator)
  return missing
}

/** The API address of one organization. */
export function apiUrlFor(config: Pick<Config, 'apiUrl'>, domain: string): string {
  return config.apiUrl.replaceAll('{organization_domain}', encodeURIComponent(domain)).replace(/\/+$/, '')
}
