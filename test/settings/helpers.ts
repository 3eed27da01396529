// Shared set-up of the settings tests: a SettingsTarget built with ajv (the engine's Pipeline has
// the same shape), JWTs signed the way the service signs them, and a Koa app serving the router.
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { Ajv } from 'ajv'
import Keyv from 'keyv'
import Koa from 'koa'
import { SignJWT } from 'jose'
import { formatAjvErrors } from '../../src/engine/instantiate-plugin.js'
import { loadConfig, type Config } from '../../src/config/load-config.js'
import { silentLogger } from '../../src/util/logger.js'
import { SettingsService } from '../../src/settings/settings-service.js'
import { createSettingsRouter, type SettingsRouterDeps, type SettingsTarget } from '../../src/settings/settings-routes.js'

export const CLIENT_ID = 'switchyard-test-client'
export const CLIENT_SECRET = 'test-client-secret-of-at-least-32-bytes!'
export const ORG = '200'

export const QA_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['tone'],
  properties: {
    tone: { type: 'string', title: 'Tone', enum: ['formal', 'informal'], default: 'formal', description: 'Register the AI proofreader expects.' },
    maxLengthRatio: { type: 'number', title: 'Longest translation, as a multiple of the source', minimum: 1, maximum: 5, default: 1.5 },
    retries: { type: 'integer', title: 'Retries', minimum: 0, maximum: 10, default: 2 },
    note: { type: 'string', title: 'Note for translators', maxLength: 500 },
    code: { type: 'string', title: 'Project code', pattern: '^[A-Z]{2,3}$' },
    strict: { type: 'boolean', title: 'Strict mode', default: false },
    forbidden: { type: 'array', title: 'Forbidden words', items: { type: 'string', minLength: 1 } },
  },
} as const

export function makeTarget(key: string, schema: object = QA_SCHEMA, name = 'QA gate'): SettingsTarget {
  const validate = new Ajv({ allErrors: true, useDefaults: true, strict: false }).compile(schema)
  return {
    key,
    name,
    settingsSchema: schema,
    resolveSettings(stored) {
      const copy = structuredClone(stored ?? {})
      return validate(copy) ? { ok: true, settings: copy as Record<string, unknown> } : { ok: false, errors: formatAjvErrors(validate.errors) }
    },
  }
}

export interface TokenOptions {
  module?: string
  org?: string | number
  projectId?: number | null
  aud?: string
  secret?: string
  alg?: string
  expiresIn?: string | number
  iat?: number
  domain?: string
}

export async function signToken(o: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT({
    domain: o.domain ?? 'acme',
    module: o.module ?? 'qa-gate',
    context: { project_id: o.projectId === undefined ? 7 : o.projectId, organization_id: o.org ?? Number(ORG), user_id: 3 },
  })
    .setProtectedHeader({ alg: o.alg ?? 'HS256', typ: 'JWT' })
    .setSubject('3')
    .setAudience(o.aud ?? CLIENT_ID)
    .setIssuedAt(o.iat)
    .setExpirationTime(o.expiresIn ?? '5m')
  return jwt.sign(new TextEncoder().encode(o.secret ?? CLIENT_SECRET))
}

/** An unsecured token (`alg: none`) with valid-looking claims. */
export function unsecuredToken(): string {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const now = Math.floor(Date.now() / 1000)
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ aud: CLIENT_ID, sub: '3', domain: 'acme', module: 'qa-gate', context: { project_id: 7, organization_id: Number(ORG), user_id: 3 }, iat: now, exp: now + 300 })}.`
}

export interface Harness {
  url: string
  service: SettingsService
  store: Keyv
  config: Config
  close(): Promise<void>
}

export async function startHarness(overrides: Partial<Config> = {}, targets: SettingsTarget[] = [makeTarget('qa-gate'), makeTarget('other-step')], extra: Pick<SettingsRouterDeps, 'bindOrganization'> = {}): Promise<Harness> {
  // Overrides applied after loading: the routes must also hold with a configuration the start-up
  // check would refuse (CLIENT_ID without CLIENT_SECRET), e.g. one built in code.
  const config: Config = { ...loadConfig({}, { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, storeUrl: 'memory://' }), ...overrides }
  const store = new Keyv()
  const service = new SettingsService(store, silentLogger())
  const byKey = new Map(targets.map((t) => [t.key, t]))
  const router = createSettingsRouter({ config, settings: service, pipelines: () => byKey, log: silentLogger(), ...extra })
  const app = new Koa()
  app.use(router.routes())
  app.use(router.allowedMethods())
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    service,
    store,
    config,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  }
}
