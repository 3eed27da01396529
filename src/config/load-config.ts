// Configuration from the environment, validated once at start. Every error is reported at once
// (the textlint habit), each naming the variable and what to fix.
import { availableParallelism } from 'node:os'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { OPTIONS, type OptionSpec } from './options.js'
import { operatorAccessNote } from './operator-access.js'

export interface Config {
  port: number
  host: string
  baseUrl: string
  appSecrets: string[]
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  storeUrl: string
  dataDir: string
  pipelinesDir: string
  pluginsDir: string
  openaiApiKey: string
  openaiBaseUrl: string
  headerPrefix: string
  bodyLimit: number
  unverifiedBodies: number
  unverifiedWaitMs: number
  headersTimeoutMs: number
  requestTimeoutMs: number
  metricsToken: string
  queueLimit: number
  backlogMaxMb: number
  backlogOrganizationShare: number
  ingestThreads: number
  pipelineThreads: number
  checkTimeBudgetMs: number
  concurrency: number
  apiMaxInFlight: number
  apiMaxAttempts: number
  apiTimeoutMs: number
  reportLingerMs: number
  dedupeTtlMs: number
  dedupeMax: number
  reconcileIntervalMs: number
  shutdownTimeoutMs: number
  findingsRetentionDays: number
  findingsMax: number
  commentsMaxInFlight: number
  tokenKey: string
  oauthScopes: string
  oauthTokenFormat: 'json' | 'form'
  settingsScriptUrl: string
  operatorPassword: string
  operatorOpen: boolean
  settingsFrameAncestors: string
  queue: 'memory' | 'bullmq'
  queueRedisUrl: string
  queueConcurrency: number
  queueLockMs: number
  logLevel: string
  logFormat: string
}

export class ConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(`Invalid configuration:\n  ${errors.join('\n  ')}`)
    this.name = 'ConfigError'
  }
}

/** Root of the installed package (where pipelines/ and manifest.template.json live). */
export const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)))

// Runs from src/config (vitest) or dist/src/config (built): walk up to our package.json.
function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'manifest.template.json'))) return dir
    if (path.dirname(dir) === dir) return path.resolve(from, '../..')
  }
}

type Env = Readonly<Record<string, string | undefined>>

function parseOne(name: string, spec: OptionSpec, raw: string | undefined, errors: string[]): unknown {
  const value = raw === undefined || (raw === '' && !spec.emptyMeansNone) ? spec.default : raw
  switch (spec.kind) {
    case 'string':
    case 'secret':
      return value ?? ''
    case 'url': {
      if (!value) return ''
      try {
        new URL(value)
      } catch {
        errors.push(`${spec.env}: "${value}" is not a URL (expected e.g. https://example.com)`)
      }
      return value.replace(/\/+$/, '')
    }
    case 'int': {
      if (value === undefined) return 0
      const n = Number(value)
      if (!Number.isInteger(n) || (spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        const range = `${spec.min ?? '-inf'}..${spec.max ?? 'inf'}`
        errors.push(`${spec.env}: "${value}" is not a whole number in ${range}`)
        return Number(spec.default ?? 0)
      }
      return n
    }
    case 'bool':
      return value === 'true' || value === '1' || value === 'yes'
    case 'list':
    case 'secret-list':
      return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)
    case 'enum': {
      if (value !== undefined && !spec.values?.includes(value)) {
        errors.push(`${spec.env}: "${value}" is not one of ${spec.values?.join(', ')}`)
        return spec.default
      }
      return value
    }
    default: {
      const never: never = spec.kind
      throw new Error(`unknown option kind ${String(never)} for ${name}`)
    }
  }
}

/** Read and validate the configuration; throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const errors: string[] = []
  const out: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(OPTIONS) as Array<[string, OptionSpec]>) {
    out[name] = parseOne(name, spec, env[spec.env], errors)
  }
  const config = { ...(out as unknown as Config), ...overrides }
  if ((env.INGEST_THREADS ?? '') === '' && overrides.ingestThreads === undefined) config.ingestThreads = defaultIngestThreads()
  if ((env.PIPELINE_THREADS ?? '') === '' && overrides.pipelineThreads === undefined) config.pipelineThreads = defaultPipelineThreads()
  if (!config.baseUrl) config.baseUrl = `http://localhost:${config.port}`
  if (!config.pipelinesDir) config.pipelinesDir = path.join(PACKAGE_ROOT, 'pipelines')
  if (!config.storeUrl) config.storeUrl = `sqlite://${path.join(config.dataDir, 'switchyard.sqlite')}`
  if (!/^(sqlite|redis|rediss|postgres|postgresql|memory):\/\//.test(config.storeUrl)) {
    errors.push(`STORE_URL: "${config.storeUrl}" must start with sqlite://, redis://, postgres:// or memory://`)
  }
  if (config.apiUrl && !/^https?:\/\//.test(config.apiUrl)) {
    errors.push(`API_URL: "${config.apiUrl}" must be an http(s) address; it may hold {organization_domain}`)
  }
  if (!/^[A-Za-z][A-Za-z0-9-]*-$/.test(config.headerPrefix)) {
    errors.push(`HEADER_PREFIX: "${config.headerPrefix}" must look like X-Service- (letters, digits, dashes, ending in -)`)
  }
  // The id alone lets an authorization start, but the code exchange and every token refresh need
  // the secret (and settings callbacks are verified with it): refuse to start half-configured.
  if (config.clientId && !config.clientSecret) {
    errors.push('CLIENT_SECRET: required when CLIENT_ID is set (the token exchange and every refresh send it, and settings callbacks are verified with it); set CLIENT_SECRET to the OAuth client secret, or unset CLIENT_ID')
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    errors.push(`HEADERS_TIMEOUT_MS (${config.headersTimeoutMs}) must not be longer than REQUEST_TIMEOUT_MS (${config.requestTimeoutMs})`)
  }
  if (errors.length) throw new ConfigError(errors)
  return config
}

/**
 * One decoding thread per core, up to 4 (beyond that the main thread, which takes the decoded
 * jobs, is the limit), and none on a single core, where a thread only adds the hop (bench).
 */
/**
 * Pipeline threads when PIPELINE_THREADS is not set: one core left to the main thread and the
 * ingest threads, at most 4, and at least one: the point is that no check can stop the main
 * thread, not parallelism. Each thread holds its own copy of the pipelines and plugins (about
 * 40 MB): on 2 cores a second one took the flood bench's peak from 288 to 330 MB, over the 300
 * MB target, with no throughput to show for it on this machine (docs/performance.md).
 */
export function defaultPipelineThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, 4))
}

export function defaultIngestThreads(cores = availableParallelism()): number {
  return cores > 1 ? Math.min(cores, 4) : 0
}

/** What is missing to connect a real organization, in words an operator can act on. */
export function missingForProduction(config: Config): string[] {
  const missing: string[] = []
  if (config.appSecrets.length === 0) missing.push('APP_SECRET (webhooks cannot be verified, so every webhook is refused)')
  if (!config.clientId || !config.clientSecret) missing.push('CLIENT_ID and CLIENT_SECRET (no organization can connect; settings callbacks are refused)')
  if (!config.authUrl) missing.push('AUTH_URL (the authorization server)')
  if (!config.apiUrl) missing.push('API_URL (where string statuses are reported)')
  if (config.baseUrl.startsWith('http://localhost')) missing.push('BASE_URL (the public address the service reaches this worker at)')
  const operator = operatorAccessNote(config)
  if (operator) missing.push(operator)
  return missing
}

/** The API address of one organization. */
export function apiUrlFor(config: Pick<Config, 'apiUrl'>, domain: string): string {
  return config.apiUrl.replaceAll('{organization_domain}', encodeURIComponent(domain)).replace(/\/+$/, '')
}
