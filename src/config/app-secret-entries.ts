// APP_SECRET entries the configuration refuses (here, not in webhooks/: the webhooks read the
// configuration, never the other way).

/**
 * `1001=` with nothing after it: an organization's entry whose secret is missing (an unset
 * variable in `1001=${SECRET}`). Never a secret: as a plain one it would be a secret anyone who
 * knows the organization's id could sign with, valid for every organization.
 */
export const MISSING_SECRET = /^\d{1,64}=$/

/** The entries of APP_SECRET that name an organization but no secret (`1001=`); the configuration refuses them. */
export function entriesWithoutSecret(entries: readonly string[]): string[] {
  return entries.map((e) => e.trim()).filter((e) => MISSING_SECRET.test(e))
}
