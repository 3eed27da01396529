// APP_SECRET entries: `SECRET` applies to every organization, `ORG_ID=SECRET` to that organization
// only; several entries per organization let a secret be rotated. The service gives each
// installation (organization) its own app_secret, so a worker serving several organizations
// verifies each delivery with the secrets of the organization it claims to come from.

import { MISSING_SECRET } from '../config/app-secret-entries.js'

export interface AppSecret {
  /** Undefined: the secret applies to every organization. */
  organizationId?: string
  secret: string
}

/** What an organization id in `ORG_ID=SECRET` may look like (the service's ids are numeric). */
const ORGANIZATION_ID = /^[A-Za-z0-9_.-]{1,64}$/

/**
 * Parse APP_SECRET's comma-separated entries. An entry is scoped when the part before its first
 * `=` is an organization id and the part after it is a secret that does not start with `=`; so a
 * base64 secret with its `=` padding (`abc=`, `abc==`) stays a plain secret.
 */
export function parseAppSecrets(entries: readonly string[]): AppSecret[] {
  const out: AppSecret[] = []
  for (const raw of entries) {
    const entry = raw.trim()
    if (!entry || MISSING_SECRET.test(entry)) continue
    const at = entry.indexOf('=')
    const id = at > 0 ? entry.slice(0, at) : ''
    const secret = at > 0 ? entry.slice(at + 1) : ''
    if (ORGANIZATION_ID.test(id) && secret !== '' && !secret.startsWith('=')) out.push({ organizationId: id, secret })
    else out.push({ secret: entry })
  }
  return out
}

/**
 * The secrets a delivery from `organizationId` may be signed with: that organization's own and the
 * plain ones. Without an organization (no id header), every secret.
 */
export function secretsFor(secrets: readonly AppSecret[], organizationId: string): AppSecret[] {
  if (!organizationId) return [...secrets]
  return secrets.filter((s) => s.organizationId === undefined || s.organizationId === organizationId)
}

/** Organizations that have a secret of their own (for the start-up summary; never the secrets). */
export function scopedOrganizations(secrets: readonly AppSecret[]): string[] {
  return [...new Set(secrets.flatMap((s) => (s.organizationId ? [s.organizationId] : [])))]
}
