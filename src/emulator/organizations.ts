// The emulator's organizations: the first from the emulator's own options (its app_secret is the
// `appSecret` setting), the rest from `organizations` or `addOrganization`. Looked up by id or
// domain, one Map hit.
import { randomBytes } from 'node:crypto'
import { DEFAULT_SEED, type SeedOptions } from './sample-project.js'
import { Tenant, type OrganizationOptions } from './tenant.js'

export class Organizations {
  readonly list: Tenant[] = []
  readonly first: Tenant
  private readonly byKey = new Map<string, Tenant>()

  constructor(
    /** Seed options every organization starts from (its own options override them). */
    private readonly seedDefaults: SeedOptions,
    first: { id?: string; domain?: string; appSecret: () => string },
  ) {
    this.first = this.add(new Tenant(first.id ?? DEFAULT_SEED.organizationId, first.domain ?? DEFAULT_SEED.domain, first.appSecret, seedDefaults))
  }

  /** The organization with this id or domain; the first when `key` is undefined; throws on an unknown one. */
  get(key?: string): Tenant {
    if (key === undefined) return this.first
    const found = this.byKey.get(String(key))
    if (!found) throw new Error(`emulator: no organization "${key}" (have ${this.list.map((t) => `${t.id}/${t.domain}`).join(', ')})`)
    return found
  }

  /** The organization with this id or domain, or undefined. */
  find(key: string): Tenant | undefined {
    return this.byKey.get(key)
  }

  /** Adds an organization beyond the first, with its own project and step ids unless given. */
  create(o: OrganizationOptions): Tenant {
    const secret = o.appSecret ?? randomBytes(24).toString('base64url')
    const { id, domain, appSecret: _secret, workflowId, templateId, ...seed } = o
    // Ids are global on the platform: another organization's project and step get their own by default.
    const n = this.list.length
    const ids = {
      projectId: (this.seedDefaults.projectId ?? DEFAULT_SEED.projectId) + 100 * n,
      stepId: (this.seedDefaults.stepId ?? DEFAULT_SEED.stepId) + 100 * n,
    }
    return this.add(
      new Tenant(id, domain, () => secret, { ...this.seedDefaults, ...ids, ...seed }, {
        ...(workflowId !== undefined ? { workflowId } : {}),
        ...(templateId !== undefined ? { templateId } : {}),
      }),
    )
  }

  private add(tenant: Tenant): Tenant {
    if (this.byKey.has(tenant.id) || this.byKey.has(tenant.domain)) throw new Error(`emulator: organization ${tenant.id} / ${tenant.domain} exists already`)
    if (!/^[a-z0-9][a-z0-9-]*$/i.test(tenant.domain)) throw new Error(`emulator: organization domain "${tenant.domain}" must be letters, digits and dashes`)
    this.list.push(tenant)
    this.byKey.set(tenant.id, tenant)
    this.byKey.set(tenant.domain, tenant)
    return tenant
  }
}
