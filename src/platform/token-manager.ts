// Per-organization OAuth tokens: stored encrypted in `stores.tokens`, refreshed shortly before they
// expire and once after a 401, one refresh request per organization at a time (single flight in
// this process, plus a pluggable lock for several instances). A refused refresh marks the
// organization disconnected until someone connects it again through /oauth/start.
import type Keyv from 'keyv'
import type { Config } from '../config/load-config.js'
import type { Logger } from '../util/logger.js'
import { isDeadGrant, redirectUriOf, requestToken, type TokenResponse } from './oauth-client.js'
import { deriveKey, loadTokenKey, open, seal, TokenDecryptError } from './token-crypto.js'
import { NotConnectedError, OrganizationDisconnectedError, TokenEndpointError } from './token-errors.js'
import { createLocalLock, type LockFn } from './token-lock.js'

export type { TokenResponse } from './oauth-client.js'
export { NotConnectedError, OrganizationDisconnectedError, TokenEndpointError } from './token-errors.js'

export const DEFAULT_REFRESH_SKEW_MS = 60_000

/**
 * How long a token read from the store is handed out again without reading it anew. Every API
 * request asks for a token: without this, each one was a store read and a decryption (1,237 of
 * them for 30,000 strings in the bench's end-to-end run, most for issue comments). A write by this
 * process (connect, refresh, disconnect) or a 401 forgets it at once; a change made by another
 * instance is seen within this time, and a token it retired meanwhile answers 401, which refreshes
 * from the store.
 */
export const TOKEN_READ_CACHE_MS = 1_000

export type OrganizationState = 'connected' | 'disconnected' | 'not-connected'

export interface OrganizationStatus {
  domain: string
  organizationId?: string
  connected: boolean
  /** connected | disconnected (a refresh was refused: reconnect) | not-connected (webhooks seen, never connected). */
  state: OrganizationState
  /** Epoch ms when the current access token expires, when the server said. */
  expiresAt?: number
  reason?: string
  connectedAt?: number
  refreshedAt?: number
  disconnectedAt?: number
}

/** What lives in the store per organization. Only `sealed` holds secrets, and it is encrypted. */
interface OrgRecord {
  domain: string
  state: OrganizationState
  sealed?: string
  expiresAt?: number
  connectedAt?: number
  refreshedAt?: number
  reason?: string
  disconnectedAt?: number
}

interface Tokens {
  accessToken: string
  refreshToken?: string
  tokenType?: string
  scope?: string
}

export interface TokenManagerDeps {
  config: Config
  /** `stores.tokens`. */
  store: Keyv
  log: Logger
  fetch?: typeof fetch
  /** Named lock held around every refresh and every save; default: in-process. */
  lock?: LockFn
  now?: () => number
  /** Refresh this long before the access token expires. Default 60 s. */
  refreshSkewMs?: number
  /** Encryption key; default: TOKEN_KEY, or the key file in DATA_DIR (see loadTokenKey). */
  key?: Buffer
}

const DOMAIN_RE = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/

/** Lower-cased organization domain, or undefined when it can't be one (it goes into URLs). */
export function normalizeDomain(domain: unknown): string | undefined {
  if (typeof domain !== 'string') return undefined
  const d = domain.trim().toLowerCase()
  return DOMAIN_RE.test(d) && !d.includes('..') ? d : undefined
}

const recordKey = (domain: string) => `org:${domain}`
const idKey = (id: string) => `org-id:${id}`
const domainIdKey = (domain: string) => `org-domain-id:${domain}`
const INDEX_KEY = 'index:domains'
/** The lock (shared across instances) around the index's read and write. */
const INDEX_LOCK = 'oauth-index'
const UNDECRYPTABLE = 'its stored tokens cannot be decrypted with the current token key (was TOKEN_KEY or the key file changed?)'

export class TokenManager {
  private readonly config: Config
  private readonly store: Keyv
  private readonly log: Logger
  private readonly fetchImpl: typeof fetch
  private readonly lock: LockFn
  private readonly now: () => number
  private readonly skewMs: number
  private readonly key: Buffer
  private readonly inflight = new Map<string, Promise<string>>()
  /** id -> domain bound, and when it was read from the store (re-read after TOKEN_READ_CACHE_MS: another instance may have moved it). */
  private readonly knownIds = new Map<string, { domain: string; at: number }>()
  /** The last record read per domain, its decrypted tokens, and when it was read (TOKEN_READ_CACHE_MS). */
  private readonly recent = new Map<string, { rec: OrgRecord; tokens: Tokens; readAt: number }>()
  /** The read of a domain's record under way, if any (readShared). */
  private readonly reading = new Map<string, { read: Promise<{ rec: OrgRecord | undefined; epoch: number; readAt: number }>; startedAt: number }>()
  /** Moves on at every write and every 401: a read that one of them overtook is not cached. */
  private epoch = 0
  /** Domains whose stored tokens this instance's key cannot open (logged once each). */
  private readonly undecryptable = new Set<string>()
  /**
   * Tokens a refresh got that the store refused to keep, per domain. The token endpoint retired the
   * refresh token it was given, so the stored one is dead: the next refresh writes these instead of
   * sending it (which would be refused, and the organization marked disconnected). `basis` is the
   * sealed record they replace, `at` when they were issued.
   */
  private readonly unsaved = new Map<string, { response: TokenResponse; previousRefreshToken?: string; basis?: string; at: number }>()

  constructor(deps: TokenManagerDeps) {
    this.config = deps.config
    this.store = deps.store
    this.log = deps.log
    this.fetchImpl = deps.fetch ?? fetch
    this.lock = deps.lock ?? createLocalLock()
    this.now = deps.now ?? Date.now
    this.skewMs = deps.refreshSkewMs ?? DEFAULT_REFRESH_SKEW_MS
    this.key = deps.key ?? loadTokenKey(deps.config, deps.log).key
  }

  /** Loads (or on embedded defaults creates) the encryption key, then builds the manager. */
  static async create(deps: TokenManagerDeps): Promise<TokenManager> {
    return new TokenManager(deps)
  }

  /** A key for another purpose (the OAuth state cookie), derived from the token key. */
  derivedKey(purpose: string): Buffer {
    return deriveKey(this.key, purpose)
  }

  /** Exchange an authorization code (with its PKCE verifier) at the token endpoint; stores nothing. */
  async exchangeCode(code: string, codeVerifier: string): Promise<TokenResponse> {
    const grant = { grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: redirectUriOf(this.config) } as const
    return requestToken(this.config, grant, this.fetchImpl)
  }

  /** A valid access token for the organization, refreshed first when it is about to expire. */
  async getAccessToken(domain: string): Promise<string> {
    const d = this.domainOrThrow(domain)
    const now = this.now()
    const cached = this.recent.get(d)
    if (cached && now - cached.readAt >= 0 && now - cached.readAt < TOKEN_READ_CACHE_MS && !this.needsRefresh(cached.rec, now)) return cached.tokens.accessToken
    const { rec, epoch, readAt } = await this.readShared(d)
    // Tokens of a refresh the store refused are newer than any record: written first.
    if (this.unsaved.has(d)) return this.flight(d)
    const tokens = await this.usableTokens(d, rec)
    if (!this.needsRefresh(rec!, this.now())) {
      if (epoch === this.epoch) this.recent.set(d, { rec: rec!, tokens, readAt })
      return tokens.accessToken
    }
    try {
      return await this.flight(d)
    } catch (err) {
      // A refresh that failed for a passing reason must not stop work the current token can still do.
      if (err instanceof TokenEndpointError && err.retryable && rec!.expiresAt !== undefined && this.now() < rec!.expiresAt) {
        this.log.warn({ domain: d, err: err.message }, 'token refresh failed; using the current access token until it expires')
        return tokens.accessToken
      }
      throw err
    }
  }

  /**
   * The API refused `rejectedToken` with 401: refresh once (shared by every concurrent caller) and
   * return the new token. When someone already refreshed past `rejectedToken`, return that newer
   * token without another request.
   */
  async refreshAfterUnauthorized(domain: string, rejectedToken: string): Promise<string> {
    const d = this.domainOrThrow(domain)
    this.forget(d)
    let token = await this.flight(d, rejectedToken)
    // We may have joined a flight that started before this token was rejected and found nothing to
    // do; then refresh once more, now knowing which token the API refused.
    if (token === rejectedToken) token = await this.flight(d, rejectedToken)
    return token
  }

  /** Store the token response of a code exchange (connects or reconnects the organization). */
  async saveTokenResponse(domain: string, response: TokenResponse): Promise<void> {
    const d = this.domainOrThrow(domain)
    await this.lock(`oauth-refresh:${d}`, async () => {
      const previous = await this.read(d)
      await this.writeTokens(d, previous, response, undefined, 'connected')
      // A new connection replaces whatever an earlier refresh could not write.
      this.unsaved.delete(d)
    })
    await this.addToIndex(d)
    this.log.info({ domain: d, expiresIn: response.expires_in }, 'organization connected')
  }

  /**
   * Bind an organization id to the domain it was connected with (tokens are keyed by domain;
   * webhooks name the organization by id). Only signed sources bind (a connection, or a settings
   * token through bindFromSettings): a webhook's domain header is not signed. Writes only when the
   * pair is new.
   */
  async rememberOrganization(id: string, domain: string): Promise<void> {
    const d = normalizeDomain(domain)
    if (!d || !id) return
    const known = this.knownIds.get(id)
    if (known?.domain === d && this.now() - known.at < TOKEN_READ_CACHE_MS) return
    if ((await this.store.get<string>(idKey(id))) !== d) await this.store.set(idKey(id), d)
    const previous = await this.store.get<string>(domainIdKey(d))
    if (previous !== id) {
      await this.store.set(domainIdKey(d), id)
      // The domain was another organization's (it moved elsewhere): its link to the domain goes,
      // so that its deliveries are never reported with this organization's tokens.
      if (previous && (await this.store.get<string>(idKey(previous))) === d) await this.store.delete(idKey(previous))
      if (previous) this.knownIds.delete(previous)
    }
    await this.addToIndex(d)
    this.knownIds.set(id, { domain: d, at: this.now() })
  }

  /**
   * Bind an organization id to the domain a settings token names with it (`domain` and
   * `context.organization_id`, signed with the client secret): the access token got at
   * connection may not say which organization it is (its claims are not part of the interface
   * document). Only to a domain connected here (one spelled otherwise than the connected one binds
   * nothing) and bound to no other organization (one that moved to another domain since no longer
   * holds it); an organization bound to another domain moves to
   * this one (connected again under a new domain, its settings tokens name that one). Whether it
   * bound.
   */
  async bindFromSettings(id: string, domain: string): Promise<boolean> {
    const d = normalizeDomain(domain)
    if (!d || !id || (await this.domainOf(id)) === d) return false
    if ((await this.read(d)) === undefined) return false
    const owner = await this.organizationOf(d)
    // An owner bound to another domain since (it moved) left only a stale link to this one.
    if (owner !== undefined && owner !== id && (await this.domainOf(owner)) === d) return false
    await this.rememberOrganization(id, d)
    return true
  }

  /** The organization id bound to a domain when it was connected, if any. */
  async organizationOf(domain: string): Promise<string | undefined> {
    const d = normalizeDomain(domain)
    if (!d) return undefined
    return (await this.store.get<string>(domainIdKey(d))) ?? undefined
  }

  async domainOf(id: string): Promise<string | undefined> {
    const known = this.knownIds.get(id)
    if (known && this.now() - known.at < TOKEN_READ_CACHE_MS) return known.domain
    const d = await this.store.get<string>(idKey(id))
    if (d) this.knownIds.set(id, { domain: d, at: this.now() })
    else this.knownIds.delete(id)
    return d ?? undefined
  }

  /** Every organization the worker knows, for /healthz, /readyz and the operator page. No secrets. */
  async status(): Promise<OrganizationStatus[]> {
    const domains = (await this.store.get<string[]>(INDEX_KEY)) ?? []
    const out: OrganizationStatus[] = []
    for (const domain of [...domains].sort()) {
      const rec = await this.read(domain)
      const organizationId = await this.store.get<string>(domainIdKey(domain))
      const state: OrganizationState = rec?.state ?? 'not-connected'
      const s: OrganizationStatus = { domain, connected: state === 'connected', state }
      if (organizationId) s.organizationId = organizationId
      if (!rec) {
        s.reason = 'webhooks arrive for this organization but it was never connected'
        out.push(s)
        continue
      }
      if (rec.expiresAt !== undefined) s.expiresAt = rec.expiresAt
      if (rec.reason) s.reason = rec.reason
      if (state === 'connected' && rec.sealed && !this.canOpen(rec.sealed, domain)) {
        // Connected for the instances with the key they were sealed with; not for this one.
        s.connected = false
        s.state = 'disconnected'
        s.reason = UNDECRYPTABLE
      }
      if (rec.connectedAt !== undefined) s.connectedAt = rec.connectedAt
      if (rec.refreshedAt !== undefined) s.refreshedAt = rec.refreshedAt
      if (rec.disconnectedAt !== undefined) s.disconnectedAt = rec.disconnectedAt
      out.push(s)
    }
    return out
  }

  // --- internals -------------------------------------------------------------------------------

  private canOpen(sealed: string, domain: string): boolean {
    try {
      open(this.key, sealed, domain)
      return true
    } catch {
      return false
    }
  }

  private domainOrThrow(domain: string): string {
    const d = normalizeDomain(domain)
    if (!d) throw new NotConnectedError(String(domain).slice(0, 100))
    return d
  }

  /**
   * Due `skewMs` before expiry, or half-way through a token's life when it lives shorter than
   * twice that (issued when it was refreshed or connected): a token of 60 s or less would
   * otherwise be due as it is issued, and refreshed for every request.
   */
  private needsRefresh(rec: OrgRecord, now: number): boolean {
    if (rec.expiresAt === undefined) return false
    const issuedAt = rec.refreshedAt ?? rec.connectedAt
    const skew = issuedAt === undefined ? this.skewMs : Math.min(this.skewMs, Math.max(0, rec.expiresAt - issuedAt) / 2)
    return now >= rec.expiresAt - skew
  }

  private async read(domain: string): Promise<OrgRecord | undefined> {
    return (await this.store.get<OrgRecord>(recordKey(domain))) ?? undefined
  }

  /**
   * One read of the record at a time per domain, shared by the callers that find no token cached
   * meanwhile (a run's requests start together). A write or a 401 lets the next caller read anew.
   */
  private readShared(domain: string): Promise<{ rec: OrgRecord | undefined; epoch: number; readAt: number }> {
    const now = this.now()
    const under = this.reading.get(domain)
    // A read that has not answered within the cache's time is not joined: a stuck query of the
    // store holds up its own callers, not every later one.
    if (under && now - under.startedAt >= 0 && now - under.startedAt < TOKEN_READ_CACHE_MS) return under.read
    const epoch = this.epoch
    const read = this.read(domain).then((rec) => ({ rec, epoch, readAt: now }))
    const entry = { read, startedAt: now }
    this.reading.set(domain, entry)
    const done = () => { if (this.reading.get(domain) === entry) this.reading.delete(domain) }
    read.then(done, done)
    return read
  }

  private forget(domain: string): void {
    this.epoch++
    this.recent.delete(domain)
    this.reading.delete(domain)
  }

  private async write(domain: string, rec: OrgRecord): Promise<void> {
    this.forget(domain)
    let ok: boolean
    try {
      ok = await this.store.set(recordKey(domain), rec)
    } finally {
      // A read that began while the record was being written may have kept the one it replaced.
      this.forget(domain)
    }
    if (ok === false) throw new Error(`could not write the tokens of "${domain}" to the store (STORE_URL)`)
  }

  /** The decrypted tokens of a connected organization, or the typed error saying why there are none. */
  private async usableTokens(domain: string, rec: OrgRecord | undefined): Promise<Tokens> {
    if (!rec || rec.state === 'not-connected' || (!rec.sealed && rec.state !== 'disconnected')) throw new NotConnectedError(domain)
    if (rec.state === 'disconnected' || !rec.sealed) throw new OrganizationDisconnectedError(domain, rec.reason ?? 'disconnected')
    try {
      return open<Tokens>(this.key, rec.sealed, domain)
    } catch (err) {
      if (!(err instanceof TokenDecryptError)) throw err
      // This instance's key is not the one the tokens were sealed with: it cannot use them, but
      // they are not dead. Written disconnected, the record would lose them for every instance
      // sharing the store (one replica started without TOKEN_KEY disconnected every organization),
      // and for this one once its key is put right ("Restore the old key", docs/connect.md).
      if (!this.undecryptable.has(domain)) {
        this.undecryptable.add(domain)
        this.log.error({ domain }, `${UNDECRYPTABLE}; its tokens are left in the store as they are: give this instance the TOKEN_KEY they were sealed with, or connect the organization again`)
      }
      throw new OrganizationDisconnectedError(domain, UNDECRYPTABLE)
    }
  }

  private flight(domain: string, rejectedToken?: string): Promise<string> {
    const existing = this.inflight.get(domain)
    if (existing) return existing
    const p: Promise<string> = this.lock(`oauth-refresh:${domain}`, () => this.refreshLocked(domain, rejectedToken)).finally(() => {
      if (this.inflight.get(domain) === p) this.inflight.delete(domain)
    })
    this.inflight.set(domain, p)
    return p
  }

  /** Runs under the lock; re-reads the store because another instance may have refreshed already. */
  private async refreshLocked(domain: string, rejectedToken: string | undefined): Promise<string> {
    let rec = await this.read(domain)
    const kept = this.unsaved.get(domain)
    if (kept) {
      // Still the record they replace (or one disconnected since, by a refresh with its dead
      // refresh token on another instance): they are the newest tokens. Anything else was written
      // later (a reconnection) and wins.
      if (rec?.sealed === kept.basis || (rec?.state === 'disconnected' && (rec.disconnectedAt ?? 0) >= kept.at)) {
        await this.writeTokens(domain, rec, kept.response, kept.previousRefreshToken, 'refreshed', kept.at)
        this.log.info({ domain }, 'tokens of an earlier refresh written to the store')
        rec = await this.read(domain)
      }
      this.unsaved.delete(domain)
    }
    const tokens = await this.usableTokens(domain, rec)
    const stale = (rejectedToken !== undefined && tokens.accessToken === rejectedToken) || this.needsRefresh(rec!, this.now())
    if (!stale) return tokens.accessToken
    if (!tokens.refreshToken) {
      const reason = 'the access token expired and the authorization server gave no refresh token'
      await this.markDisconnected(domain, reason)
      throw new OrganizationDisconnectedError(domain, reason)
    }
    let response: TokenResponse
    try {
      response = await requestToken(this.config, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken }, this.fetchImpl)
    } catch (err) {
      if (!isDeadGrant(err)) {
        this.log.warn({ domain, err: (err as Error).message }, 'token refresh failed')
        throw err
      }
      const reason = `the authorization server refused the refresh token (${(err as TokenEndpointError).oauthError})`
      await this.markDisconnected(domain, reason)
      throw new OrganizationDisconnectedError(domain, reason)
    }
    // The server has now retired the old refresh token: the new one must be durable before the new
    // access token is handed out, or a crash would leave us holding only a refused token.
    const at = this.now()
    try {
      await this.writeTokens(domain, rec, response, tokens.refreshToken, 'refreshed', at)
    } catch (error) {
      this.unsaved.set(domain, { response, ...(tokens.refreshToken ? { previousRefreshToken: tokens.refreshToken } : {}), ...(rec!.sealed ? { basis: rec!.sealed } : {}), at })
      this.log.error({ domain, err: (error as Error).message }, 'refreshed tokens could not be written to the store; kept in memory and written at the next try (the old refresh token is no longer valid)')
      throw error
    }
    this.log.info({ domain, expiresIn: response.expires_in }, 'access token refreshed')
    return response.access_token
  }

  private async writeTokens(
    domain: string,
    previous: OrgRecord | undefined,
    response: TokenResponse,
    previousRefreshToken: string | undefined,
    how: 'connected' | 'refreshed',
    now = this.now(),
  ): Promise<void> {
    const tokens: Tokens = { accessToken: response.access_token }
    const refreshToken = response.refresh_token ?? previousRefreshToken
    if (refreshToken) tokens.refreshToken = refreshToken
    if (response.token_type) tokens.tokenType = response.token_type
    if (response.scope) tokens.scope = response.scope
    const rec: OrgRecord = { domain, state: 'connected', sealed: seal(this.key, tokens, domain) }
    if (response.expires_in !== undefined) rec.expiresAt = now + response.expires_in * 1000
    rec.connectedAt = how === 'connected' ? now : (previous?.connectedAt ?? now)
    if (how === 'refreshed') rec.refreshedAt = now
    await this.write(domain, rec)
  }

  private async markDisconnected(domain: string, reason: string): Promise<void> {
    const next: OrgRecord = { domain, state: 'disconnected', reason, disconnectedAt: this.now() }
    // The refresh token is dead; don't keep secrets we can no longer use.
    await this.write(domain, next)
    await this.addToIndex(domain)
    this.log.error({ domain, reason }, `organization disconnected: reconnect it at ${this.config.baseUrl}/oauth/start?domain=${encodeURIComponent(domain)}`)
  }

  private async addToIndex(domain: string): Promise<void> {
    if (((await this.store.get<string[]>(INDEX_KEY)) ?? []).includes(domain)) return
    // One document every instance sharing the store reads and writes again: under the shared lock,
    // or two instances adding organizations at once each write their list over the other's.
    await this.lock(INDEX_LOCK, async () => {
      const domains = (await this.store.get<string[]>(INDEX_KEY)) ?? []
      if (!domains.includes(domain)) await this.store.set(INDEX_KEY, [...domains, domain])
    })
  }
}
