// Which domain a delivery's strings are reported under. The organization id is signed (in the body);
// the domain arrives only in an unsigned header (platform notes, "Identity of the sender"). So the
// domain is the one bound to the organization when it was connected; a header that disagrees is
// logged and ignored. Before any binding, the header's domain is used for that delivery only, and
// never a domain bound to another organization: its tokens are not this organization's.
import type { Logger } from '../util/logger.js'
import { normalizeDomain } from './token-manager.js'

export interface OrganizationDirectory {
  /** Bind an organization id to the domain it was connected with. */
  rememberOrganization?(id: string, domain: string): Promise<void>
  /** The domain bound to an organization id. */
  domainOf?(id: string): Promise<string | undefined>
  /** The organization id bound to a domain. */
  organizationOf?(domain: string): Promise<string | undefined>
  status?(): Promise<Array<{ domain: string; organizationId?: string; connected: boolean; expiresAt?: number; reason?: string }>>
}

const WARN_ONCE_MAX = 1000

export function createDomainResolver(directory: OrganizationDirectory, log: Logger): (organizationId: string, domainHeader: string) => Promise<string> {
  // Each disagreement is logged once (per process, bounded), not on every delivery.
  const warned = new Set<string>()
  const warnOnce = (key: string, fields: Record<string, unknown>, message: string) => {
    if (warned.has(key)) return
    if (warned.size >= WARN_ONCE_MAX) warned.clear()
    warned.add(key)
    log.warn(fields, message)
  }
  return async (organizationId, domainHeader) => {
    const header = normalizeDomain(domainHeader)
    let bound = organizationId ? await directory.domainOf?.(organizationId) : undefined
    // A domain connected since by another organization is that one's now (its tokens are not this
    // one's), whatever this organization's old binding says: a link another instance has not
    // dropped yet, or one written before the binding of a domain replaced its owner's.
    if (bound && directory.organizationOf) {
      const owner = await directory.organizationOf(bound)
      if (owner && owner !== organizationId) bound = undefined
    }
    if (bound) {
      if (header && header !== bound) {
        warnOnce(`${organizationId}|${header}`, { organization: organizationId, domain: bound, header: header.slice(0, 100) }, 'a delivery names another domain than the one its organization was connected with; the header is ignored')
      }
      return bound
    }
    if (!header) return organizationId
    const owner = await directory.organizationOf?.(header)
    if (owner && owner !== organizationId) {
      warnOnce(`${organizationId}|${header}`, { organization: organizationId, header: header.slice(0, 100), owner }, "a delivery names a domain connected for another organization; that organization's tokens are not used for it")
      return organizationId
    }
    return header
  }
}
