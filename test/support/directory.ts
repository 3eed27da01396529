// Tokens by domain and the bindings a connection makes (organization id <-> domain), as the token
// manager keeps them, for tests of what a change of binding does to waiting strings.
import type { OrganizationDirectory } from '../../src/platform/organization-domains.js'
import { OrganizationUnavailableError, type TokenProvider } from '../../src/platform/token-provider.js'

/** Tokens by domain and the bindings a connection makes, as the token manager keeps them. */
export class Directory implements TokenProvider, OrganizationDirectory {
  readonly tokens = new Map<string, string>()
  private readonly ids = new Map<string, string>()
  private readonly owners = new Map<string, string>()
  async getAccessToken(domain: string): Promise<string> {
    const token = this.tokens.get(domain)
    if (!token) throw new OrganizationUnavailableError(domain, 'not connected')
    return token
  }
  async refreshAfterUnauthorized(domain: string): Promise<string> {
    return this.getAccessToken(domain)
  }
  async domainOf(id: string): Promise<string | undefined> {
    return this.ids.get(id)
  }
  async organizationOf(domain: string): Promise<string | undefined> {
    return this.owners.get(domain)
  }
  /** Connect `id` under `domain` (the binding replaces the domain's earlier owner's link, as the token manager's does). */
  connect(id: string, domain: string): void {
    const previous = this.owners.get(domain)
    if (previous && previous !== id && this.ids.get(previous) === domain) this.ids.delete(previous)
    this.ids.set(id, domain)
    this.owners.set(domain, id)
    this.tokens.set(domain, `token-${domain}`)
  }
}
