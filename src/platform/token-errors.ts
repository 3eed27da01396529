// Typed errors of the token manager. The queue tells them apart: a disconnected or never connected
// organization keeps its jobs waiting in the journal; a token endpoint error may be retried.
// None of them ever carries a token.

/** No tokens were ever stored for this organization: someone has to connect it at /oauth/start. */
export class NotConnectedError extends Error {
  readonly code = 'NOT_CONNECTED'
  readonly retryable = false
  constructor(readonly domain: string) {
    super(`organization "${domain}" is not connected: open the operator page and connect it (/oauth/start?domain=${encodeURIComponent(domain)})`)
    this.name = 'NotConnectedError'
  }
}

/** The authorization server refused the refresh token (or the stored tokens are unusable): reconnect. */
export class OrganizationDisconnectedError extends Error {
  readonly code = 'ORGANIZATION_DISCONNECTED'
  readonly retryable = false
  constructor(readonly domain: string, readonly reason: string) {
    super(`organization "${domain}" is disconnected (${reason}): reconnect it from the operator page (/oauth/start?domain=${encodeURIComponent(domain)})`)
    this.name = 'OrganizationDisconnectedError'
  }
}

/** The token endpoint failed or answered something unusable. `oauthError` is its `error` code, if any. */
export class TokenEndpointError extends Error {
  readonly code = 'TOKEN_ENDPOINT'
  constructor(
    message: string,
    readonly details: { status?: number; oauthError?: string; retryable: boolean },
  ) {
    super(message)
    this.name = 'TokenEndpointError'
  }
  get retryable(): boolean {
    return this.details.retryable
  }
  get oauthError(): string | undefined {
    return this.details.oauthError
  }
  get status(): number | undefined {
    return this.details.status
  }
}
