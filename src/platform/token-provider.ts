// What the API client needs from whoever holds the organizations' tokens (the TokenManager).

export interface TokenProvider {
  /** A valid access token for the organization; throws OrganizationUnavailableError when it has none. */
  getAccessToken(domain: string): Promise<string>
  /** The token was refused with 401: refresh (once, shared by concurrent callers) and return the new one. */
  refreshAfterUnauthorized(domain: string, rejectedToken: string): Promise<string>
}

/** The organization is not connected, or its refresh token was refused: its jobs wait, not fail. */
export class OrganizationUnavailableError extends Error {
  constructor(readonly domain: string, reason: string) {
    super(`organization "${domain}" is not connected: ${reason}`)
    this.name = 'OrganizationUnavailableError'
  }
}

/**
 * Does this error mean "no usable token for now": the organization is not connected, was
 * disconnected, or its token endpoint failed in a way worth retrying? Its jobs then wait (held,
 * still journaled) until a token can be had again, rather than being parked.
 */
export function isOrganizationUnavailable(error: unknown): boolean {
  if (error instanceof OrganizationUnavailableError) return true
  const e = error as { code?: string; retryable?: boolean } | null
  return e?.code === 'NOT_CONNECTED' || e?.code === 'ORGANIZATION_DISCONNECTED' || (e?.code === 'TOKEN_ENDPOINT' && e.retryable === true)
}

/** Tokens handed in directly (tests, `switchyard try`); refresh is impossible. */
export class StaticTokenProvider implements TokenProvider {
  constructor(private readonly tokens: Map<string, string>) {}
  async getAccessToken(domain: string): Promise<string> {
    const t = this.tokens.get(domain) ?? this.tokens.get('*')
    if (!t) throw new OrganizationUnavailableError(domain, 'no token')
    return t
  }
  async refreshAfterUnauthorized(domain: string): Promise<string> {
    throw new OrganizationUnavailableError(domain, 'token refused and cannot be refreshed')
  }
}
