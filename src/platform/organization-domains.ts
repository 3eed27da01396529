// Which domain a delivery's strings are reported under. The organization id is signed (in the body);
// the domain arrives only in an unsigned header (platform notes, "Identity of the sender"). So the
// domain is the one bound to the organization when it was connected; a header that disagrees is
// logged and ignored. Before any binding, the header's domain is used for that delivery only, and
// never a domain bound to another organization: its tokens are not this organization's.
import type { Job } from '../protocol/job.js'
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

/**
 * The domain an organization's strings go under, given the one a delivery's header named (or the
 * one stamped on them at intake): its bound domain, unless another organization has connected that
 * domain since; else the candidate, unless it is bound to another organization; else the id.
 */
async function resolveDomain(directory: OrganizationDirectory, organizationId: string, candidate: string): Promise<{ domain: string; bound?: string; owner?: string }> {
  let bound = organizationId ? await directory.domainOf?.(organizationId) : undefined
  // A domain connected since by another organization is that one's now (its tokens are not this
  // one's), whatever this organization's old binding says: a link another instance has not
  // dropped yet, or one written before the binding of a domain replaced its owner's.
  if (bound && directory.organizationOf) {
    const owner = await directory.organizationOf(bound)
    if (owner && owner !== organizationId) bound = undefined
  }
  if (bound) return { domain: bound, bound }
  if (!candidate) return { domain: organizationId }
  if (candidate === organizationId) return { domain: candidate }
  const owner = await directory.organizationOf?.(candidate)
  if (owner && owner !== organizationId) return { domain: organizationId, owner }
  return { domain: candidate }
}

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
    const header = normalizeDomain(domainHeader) ?? ''
    const r = await resolveDomain(directory, organizationId, header)
    if (r.bound && header && header !== r.bound) {
      warnOnce(`${organizationId}|${header}`, { organization: organizationId, domain: r.bound, header: header.slice(0, 100) }, 'a delivery names another domain than the one its organization was connected with; the header is ignored')
    }
    if (r.owner) {
      warnOnce(`${organizationId}|${header}`, { organization: organizationId, header: header.slice(0, 100), owner: r.owner }, "a delivery names a domain connected for another organization; that organization's tokens are not used for it")
    }
    return r.domain
  }
}

/**
 * The domain an organization's strings are reported under now, for strings stamped with `stamped`
 * when they arrived (kept in the journal, the backlog, Redis; perhaps by a run before a restart):
 * the binding may have changed since. Reconnected under another domain, the organization's
 * strings go under the new one (held under the old, they would wait for a token that never comes);
 * its old domain connected by another organization, they are never reported with that one's tokens;
 * an organization not connected then and connected now goes under its domain. Asked once per group
 * of strings, not kept: a binding made a moment ago counts at once.
 */
export function createCurrentDomain(directory: OrganizationDirectory): (organizationId: string, stamped: string) => Promise<string> {
  return async (organizationId, stamped) => (organizationId ? (await resolveDomain(directory, organizationId, stamped)).domain : stamped)
}

/** Moves logged once each (organization, old domain, new domain), at most this many remembered. */
const MOVES_LOGGED_MAX = 1000

export interface Rebinder {
  /**
   * Put strings under the domain their organization has now (createCurrentDomain), changing each
   * job's `domain` in place; `left(stamped, organization)` is told of each domain they left. A
   * directory that cannot be read leaves them as they are (logged).
   */
  rebind(jobs: readonly Job[]): Promise<void>
  /** Has any of `organizations`, whose strings wait under `domain`, another domain now? */
  moved(domain: string, organizations: readonly string[]): Promise<boolean>
  /**
   * The same for strings under `domain` whose organizations are not known (held in Redis by any
   * instance): the organization bound to the domain, or the one whose id the domain is (one that
   * was not connected when they arrived).
   */
  movedAway(domain: string): Promise<boolean>
}

export function createRebinder(directory: OrganizationDirectory, log: Logger, left: (domain: string, organization: string) => void): Rebinder {
  const currentDomain = createCurrentDomain(directory)
  const logged = new Set<string>()
  const moved = async (domain: string, organizations: readonly string[]) => {
    for (const id of organizations) if ((await currentDomain(id, domain)) !== domain) return true
    return false
  }
  return {
    async rebind(jobs) {
      let organization: string | undefined
      let stamped: string | undefined
      let domain = ''
      for (const job of jobs) {
        if (job.organizationId !== organization || job.domain !== stamped) {
          organization = job.organizationId
          stamped = job.domain
          try {
            domain = await currentDomain(organization, stamped)
          } catch (error) {
            domain = stamped
            log.warn({ err: error, organization }, "could not read the organization's domain; its strings stay under the one they arrived with")
          }
          if (domain !== stamped) {
            left(stamped, organization)
            const move = `${organization}|${stamped}|${domain}`
            if (!logged.has(move)) {
              if (logged.size >= MOVES_LOGGED_MAX) logged.clear()
              logged.add(move)
              log.info({ organization, from: stamped, to: domain }, 'strings that arrived under an earlier domain of their organization go under its domain now')
            }
          }
        }
        if (job.domain !== domain) job.domain = domain
      }
    },
    moved,
    async movedAway(domain) {
      const owner = await directory.organizationOf?.(domain)
      return moved(domain, owner ? [owner, domain] : [domain])
    },
  }
}

/** Jobs split by domain, in order of first appearance; the jobs themselves when they share one (the rule). */
export function byDomain(jobs: readonly Job[]): Job[][] {
  const first = jobs[0]?.domain
  if (jobs.every((j) => j.domain === first)) return [jobs as Job[]]
  const parts = new Map<string, Job[]>()
  for (const j of jobs) {
    const part = parts.get(j.domain)
    if (part) part.push(j)
    else parts.set(j.domain, [j])
  }
  return [...parts.values()]
}
