// Authentication of the settings callbacks and the settings iframe: a JWT the service signs with
// HS256 and the app's OAuth client secret, sent as `Authorization: Bearer <jwt>` or as the query
// parameter `jwtToken` (platform notes, "Step settings callbacks").
import createHttpError, { type HttpError } from 'http-errors'
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'

export interface SettingsTokenContext {
  organizationId: string
  projectId?: number
  userId?: string
}

export interface SettingsToken {
  /** The module key the token was issued for. */
  module: string
  domain?: string
  sub?: string
  context: SettingsTokenContext
}

export interface VerifyOptions {
  clientSecret: string
  /** Checked against `aud` when set. */
  clientId?: string
  /** The module key of the route; the token's `module` claim must equal it. */
  moduleKey: string
  /** Seconds of clock skew tolerated on exp (default 10). */
  clockToleranceSec?: number
  /** Longest lifetime (`exp - iat`) accepted, in seconds (default one day). */
  maxLifetimeSec?: number
  /** How far in the future an `iat` may be, for clocks that disagree (default 60 s). */
  iatSkewSec?: number
}

/** A token the service mints for one editor session; a day is generous. */
export const MAX_TOKEN_LIFETIME_SEC = 86_400
export const IAT_SKEW_SEC = 60

/** The token from the Authorization header (Bearer) or the `jwtToken` query parameter. */
export function extractToken(authorization: string | undefined, query: Record<string, unknown>): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
  if (match) return match[1]
  const q = query.jwtToken
  if (typeof q === 'string' && q) return q
  if (Array.isArray(q) && typeof q[0] === 'string' && q[0]) return q[0]
  return undefined
}

function unauthorized(message: string): HttpError {
  const err = createHttpError(401, message, { code: 'unauthorized' })
  err.headers = { 'WWW-Authenticate': 'Bearer error="invalid_token"' }
  return err
}

/**
 * Verify the token and return its claims; throws a 401 HttpError whose message says what is wrong
 * and never repeats the token.
 */
export async function verifySettingsToken(token: string | undefined, options: VerifyOptions): Promise<SettingsToken> {
  if (!options.clientSecret) {
    throw unauthorized('settings callbacks are disabled: CLIENT_SECRET is not configured on this worker, so their tokens cannot be verified')
  }
  if (!token) throw unauthorized('missing token: send "Authorization: Bearer <jwt>" or the jwtToken query parameter')
  let payload: JWTPayload
  try {
    ;({ payload } = await jwtVerify(token, new TextEncoder().encode(options.clientSecret), {
      algorithms: ['HS256'],
      requiredClaims: ['exp'],
      clockTolerance: options.clockToleranceSec ?? 10,
      ...(options.clientId ? { audience: options.clientId } : {}),
    }))
  } catch (error) {
    throw unauthorized(describeJoseError(error))
  }
  // A stolen or leaked token must not be usable for long, nor minted ahead of time.
  const now = Math.floor(Date.now() / 1000)
  const exp = payload.exp as number
  if (payload.iat !== undefined && typeof payload.iat !== 'number') throw unauthorized('token claim "iat" is invalid (not a number)')
  const iat = payload.iat
  if (iat !== undefined && iat > now + (options.iatSkewSec ?? IAT_SKEW_SEC)) throw unauthorized('token was issued in the future (iat); check the clocks')
  const maxLifetime = options.maxLifetimeSec ?? MAX_TOKEN_LIFETIME_SEC
  if (exp - (iat ?? now) > maxLifetime) throw unauthorized(`token lifetime (exp - iat) is longer than ${maxLifetime} s (one day)`)
  if (payload.module !== options.moduleKey) {
    throw unauthorized(`token was issued for module "${String(payload.module ?? '(none)')}", not for "${options.moduleKey}"`)
  }
  const context = (payload.context ?? {}) as Record<string, unknown>
  const organizationId = context.organization_id
  if ((typeof organizationId !== 'string' && typeof organizationId !== 'number') || organizationId === '') {
    throw unauthorized('token has no context.organization_id')
  }
  // Absent (null, "" or 0 as well): the template editor's token, which reaches the organization's
  // templates and steps. Present but not a project id: refused, never widened to that reach.
  const rawProject = context.project_id
  const noProject = rawProject === undefined || rawProject === null || rawProject === '' || rawProject === 0 || rawProject === '0'
  const projectId = noProject ? undefined : typeof rawProject === 'number' || (typeof rawProject === 'string' && /^\d+$/.test(rawProject)) ? Number(rawProject) : Number.NaN
  if (projectId !== undefined && !(Number.isInteger(projectId) && projectId > 0)) throw unauthorized(`token's context.project_id is not a project id: ${JSON.stringify(rawProject)?.slice(0, 40)}`)
  return {
    module: options.moduleKey,
    domain: typeof payload.domain === 'string' ? payload.domain : undefined,
    sub: payload.sub,
    context: {
      organizationId: String(organizationId),
      projectId,
      userId: context.user_id === undefined || context.user_id === null ? undefined : String(context.user_id),
    },
  }
}

function describeJoseError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'token has expired'
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'token is not signed with HS256'
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'token signature does not match (check that CLIENT_SECRET is the OAuth client secret of this app)'
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'token audience (aud) is not this app\'s CLIENT_ID'
    return `token claim "${error.claim}" is invalid (${error.reason})`
  }
  if (error instanceof joseErrors.JOSENotSupported) return 'token uses an unsupported algorithm or header'
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid) return 'token is malformed'
  return 'token could not be verified'
}
