// Secrets out of a text another server wrote (an error body, an error message) before it reaches
// an Error, the log or a page: the token endpoint's errors (oauth-client.ts) and the API's
// refusals (api-client.ts), which may quote what was sent (an Authorization header, a grant).

/**
 * Every secret given (of 4 characters or more) replaced by [redacted], and so is anything that
 * looks like a JWT or a long opaque credential (40 or more base64/base64url characters), whoever
 * it belongs to. The rest of the text is kept as it is.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]')
  // One pass over runs of credential characters (dots included), each judged alone: a pattern
  // searched anywhere in the text would try every start of a long run (quadratic: 2 s for 40 KB).
  return out.replace(CREDENTIAL_RUN, redactRun)
}

function redactRun(run: string): string {
  if (run.length < 40 && !JWT.test(run)) return run
  const kept = run.replace(JWT_ANYWHERE, '[redacted]')
  // A path (`/api/v2/projects/7/...`) is kept: what an operator reads an error by. Its parts are
  // short; a credential inside one is still taken.
  if (kept.startsWith('/') && kept.split('/').every((part) => part.length < 40)) return kept
  return kept.replace(OPAQUE, '[redacted]')
}

/** Text that may hold a credential: letters, digits and + / _ = - . (a JWT's parts are joined by dots). */
const CREDENTIAL_RUN = /[A-Za-z0-9+/_=.-]{30,}/g
/** A JWT: three base64url parts of 10 or more characters, joined by dots. */
const JWT = /[A-Za-z0-9_-]{10}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10}/
const JWT_ANYWHERE = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g
/** A long opaque credential: 40 or more base64 or base64url characters. */
const OPAQUE = /[A-Za-z0-9+/_=-]{40,}/g
