// Everything about the emulator that a test may change while it runs: where webhooks go, how
// they are signed and retried, whether the user approves, and the faults the API injects.
import { randomBytes } from 'node:crypto'

export interface FaultSettings {
  /** Fraction of API answers replaced by 500. */
  errorRate: number
  /** Fraction of API answers replaced by 429 with Retry-After. */
  rateLimitRate: number
  /** Retry-After (seconds) sent with every 429. */
  retryAfterSeconds: number
  /** Random latency added to every API answer, [min, max] milliseconds. */
  latencyMs: [number, number]
  /** When set, access tokens stop working this many seconds after issue (overrides expires_in). */
  tokenTtlSeconds: number | null
  /** Refuse every refresh with 400 invalid_grant. */
  refuseRefresh: boolean
  /**
   * Access tokens are opaque strings, with no claims to read (the interface document shows
   * neither their claims nor their structure): a worker learns nothing of the organization from them.
   */
  opaqueTokens: boolean
  /** API requests one organization may have in flight; beyond it 429 (the service: 20). 0: no limit. */
  maxInFlight: number
  /** Statuses (429, 500, 503, ...) to answer the next API requests with, in order, before any other fault. */
  nextStatuses: number[]
  /**
   * Lost answers: the request is carried out (a PATCH routes its strings, a POST creates its
   * comment), then its answer is replaced by this status (a gateway's 502/504 while the service
   * went on). The next API requests that change something (PATCH, POST), in order, one status each.
   */
  nextLostAnswers: number[]
  /** Fraction of API requests that change something carried out and then answered 502 (lost answers, at random). */
  lostAnswerRate: number
  /**
   * Late answers: while true, requests that change something (PATCH, POST) are carried out at
   * once and their answers wait (a service that applied an update and answers late: the string
   * may be sent back and delivered again before the app hears). Set it false to let them go.
   */
  holdAnswers: boolean
}

export interface EmulatorSettings {
  /** Where webhook batches go. */
  webhookUrl: string | null
  /** app_secret that signs webhooks. */
  appSecret: string
  /** Does the user approve the authorization request? */
  approve: boolean
  /** Prefix of the webhook headers: X-Service-Id, X-Service-Domain, X-Service-Signature. */
  headerPrefix: string
  userAgent: string
  /** Name of the header that carries the module key (X-Module-Key). */
  moduleKeyHeader: string
  /**
   * The key of the app's `webhook` module, sent in X-Module-Key (section 5.3: the receiving
   * module). Default `switchyard-webhook`, the key the worker's manifest gives its webhook module.
   */
  webhookModuleKey: string
  /** The app's base URL (where /manifest.json is), for the workflow editor; null: the origin of webhookUrl. */
  appUrl: string | null
  /** Events per webhook batch. */
  batchSize: number
  /** Webhook deliveries in flight at once. */
  parallel: number
  /** Retries of a batch answered with a non-2XX (or not answered) before its strings become FAILED. */
  retries: number
  retryDelayMs: number
  /** Unused: the sender ignores Retry-After (kept so that old settings still apply). */
  retryAfterCapMs: number
  /** The service wants a 2XX within 30 s. */
  deliveryTimeoutMs: number
  /** expires_in of new access tokens. */
  expiresIn: number
  /** Most operations in one status PATCH. */
  maxPatchOperations: number
  faults: FaultSettings
}

export type SettingsPatch = Partial<Omit<EmulatorSettings, 'faults'>> & { faults?: Partial<FaultSettings> }

export function defaultFaults(): FaultSettings {
  return {
    errorRate: 0,
    rateLimitRate: 0,
    retryAfterSeconds: 1,
    latencyMs: [0, 0],
    tokenTtlSeconds: null,
    refuseRefresh: false,
    opaqueTokens: false,
    maxInFlight: 20,
    nextStatuses: [],
    nextLostAnswers: [],
    lostAnswerRate: 0,
    holdAnswers: false,
  }
}

export function defaultSettings(): EmulatorSettings {
  return {
    webhookUrl: null,
    appSecret: randomBytes(24).toString('base64url'),
    approve: true,
    headerPrefix: 'X-Service-',
    userAgent: 'Service-Webhook',
    moduleKeyHeader: 'X-Module-Key',
    webhookModuleKey: 'switchyard-webhook',
    appUrl: null,
    batchSize: 100,
    parallel: 4,
    retries: 3,
    retryDelayMs: 200,
    retryAfterCapMs: 5000,
    deliveryTimeoutMs: 30_000,
    expiresIn: 7200,
    maxPatchOperations: 500,
    faults: defaultFaults(),
  }
}

function fraction(name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw new Error(`${name} must be a number between 0 and 1`)
  return value
}

function count(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`)
  return value
}

function text(name: string, value: unknown): string {
  if (typeof value !== 'string') throw new Error(`${name} must be a string`)
  return value
}

/**
 * Applies a patch in place, validating every field first so that a bad patch changes nothing.
 * Throws an Error naming the bad field.
 */
export function applySettingsPatch(settings: EmulatorSettings, patch: SettingsPatch): EmulatorSettings {
  const next: EmulatorSettings = { ...settings, faults: { ...settings.faults } }
  for (const [key, value] of Object.entries(patch) as Array<[keyof SettingsPatch, unknown]>) {
    if (value === undefined) continue
    switch (key) {
      case 'webhookUrl':
        if (value !== null) new URL(text(key, value))
        next.webhookUrl = value as string | null
        break
      case 'appUrl':
        if (value !== null) new URL(text(key, value))
        next.appUrl = value as string | null
        break
      case 'appSecret':
      case 'webhookModuleKey':
      case 'headerPrefix':
      case 'userAgent':
      case 'moduleKeyHeader':
        next[key] = text(key, value)
        break
      case 'approve':
        if (typeof value !== 'boolean') throw new Error('approve must be a boolean')
        next.approve = value
        break
      case 'batchSize':
      case 'parallel':
      case 'expiresIn':
      case 'maxPatchOperations':
        next[key] = count(key, value, 1)
        break
      case 'retries':
      case 'retryDelayMs':
      case 'retryAfterCapMs':
      case 'deliveryTimeoutMs':
        next[key] = count(key, value, 0)
        break
      case 'faults':
        next.faults = applyFaultPatch(next.faults, value as Partial<FaultSettings>)
        break
      default: {
        const never: never = key
        throw new Error(`unknown setting ${String(never)}`)
      }
    }
  }
  Object.assign(settings, next)
  return settings
}

export function applyFaultPatch(faults: FaultSettings, patch: Partial<FaultSettings>): FaultSettings {
  if (typeof patch !== 'object' || patch === null) throw new Error('faults must be an object')
  const next = { ...faults }
  for (const [key, value] of Object.entries(patch) as Array<[keyof FaultSettings, unknown]>) {
    if (value === undefined) continue
    switch (key) {
      case 'errorRate':
      case 'rateLimitRate':
      case 'lostAnswerRate':
        next[key] = fraction(`faults.${key}`, value)
        break
      case 'retryAfterSeconds':
      case 'maxInFlight':
        next[key] = count(`faults.${key}`, value, 0)
        break
      case 'latencyMs': {
        const range = typeof value === 'number' ? [value, value] : value
        if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => typeof n === 'number' && n >= 0) || range[0] > range[1]) {
          throw new Error('faults.latencyMs must be [min, max] milliseconds (or one number)')
        }
        next.latencyMs = [range[0], range[1]]
        break
      }
      case 'tokenTtlSeconds':
        next.tokenTtlSeconds = value === null ? null : count('faults.tokenTtlSeconds', value, 0)
        break
      case 'refuseRefresh':
        if (typeof value !== 'boolean') throw new Error('faults.refuseRefresh must be a boolean')
        next.refuseRefresh = value
        break
      case 'opaqueTokens':
      case 'holdAnswers':
        if (typeof value !== 'boolean') throw new Error(`faults.${key} must be a boolean`)
        next[key] = value
        break
      case 'nextStatuses':
        if (!Array.isArray(value) || !value.every((n) => Number.isInteger(n) && n >= 100 && n <= 599)) {
          throw new Error('faults.nextStatuses must be an array of HTTP status codes')
        }
        next.nextStatuses = [...value]
        break
      case 'nextLostAnswers':
        if (!Array.isArray(value) || !value.every((n) => Number.isInteger(n) && n >= 400 && n <= 599)) {
          throw new Error('faults.nextLostAnswers must be an array of HTTP error status codes')
        }
        next.nextLostAnswers = [...value]
        break
      default: {
        const never: never = key
        throw new Error(`unknown fault ${String(never)}`)
      }
    }
  }
  return next
}
