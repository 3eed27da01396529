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
  out = out.replace(/[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, '[redacted]')
  return out.replace(/[A-Za-z0-9+/_=-]{40,}/g, '[redacted]')
}
