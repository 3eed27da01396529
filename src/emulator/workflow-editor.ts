// The emulator playing the workflow editor (section 4.6 and the platform notes, "Step settings
// callbacks"): it reads the app's /manifest.json, mints the settings JWT (HS256 with the OAuth
// client secret) and calls the step's updateSettingsUrl / deleteSettingsUrl with a project body
// `{ organizationId, projectId, workflowId, stepId, settings }` or a template body
// `{ organizationId, templateId, stepId, settings }`, as a user saving or deleting the step would.
import { SignJWT } from 'jose'
import type { EmulatorSettings } from './emulator-settings.js'
import type { Tenant } from './tenant.js'
import { PORTS as STATUS_PORTS } from '../protocol/string-status.js'

export interface EditorTarget {
  /** Organization (id or domain). Default the first. */
  organization?: string
  /** Module key of the step. Default the organization's step's key. */
  moduleKey?: string
  /** Default the organization's step id. */
  stepId?: number
  /** The step of a workflow template rather than of the project workflow. */
  template?: boolean
  projectId?: number
  workflowId?: number
  templateId?: number
  /** How the JWT travels: `Authorization: Bearer` (default) or the `jwtToken` query parameter. */
  jwtIn?: 'header' | 'query'
  /** Seconds the JWT lives; negative gives an expired token. Default 300. */
  jwtTtlSeconds?: number
  /** Sign the JWT with this secret instead of the client secret (to test refusals). */
  signingSecret?: string
  /** The `module` claim, when it should differ from the module key (to test refusals). */
  moduleClaim?: string
}

export interface EditorResponse {
  status: number
  body: unknown
  url: string
}

interface StepModule { key: string; updateSettingsUrl?: string; deleteSettingsUrl?: string; url?: string }

const PORTS: readonly string[] = STATUS_PORTS
const EDITOR_MODES = ['side-by-side', 'comfortable', 'multilingual']
const STEP_FIELDS = ['key', 'name', 'logo', 'description', 'boundaries', 'editorMode', 'updateSettingsUrl', 'deleteSettingsUrl', 'url', 'environments']
const WEBHOOK_FIELDS = ['key', 'url', 'events', 'environments']

const isText = (v: unknown): v is string => typeof v === 'string' && v !== ''

/**
 * What the platform's manifest schema would refuse (sections 2.3, 2.4 and the platform notes):
 * a `workflow-step-type` module without one of its fields (logo included), with a field the schema
 * does not know, with a port outside the vocabulary; no `webhook` module beside it.
 */
export function manifestProblems(manifest: Record<string, unknown>): string[] {
  const problems: string[] = []
  const modules = (manifest.modules ?? {}) as Record<string, unknown>
  const steps = modules['workflow-step-type']
  const hooks = modules.webhook
  if (!Array.isArray(steps) || steps.length === 0) problems.push('modules.workflow-step-type: missing or empty')
  for (const [i, raw] of (Array.isArray(steps) ? steps : []).entries()) {
    const m = (raw ?? {}) as Record<string, unknown>
    const at = `modules.workflow-step-type[${i}]${isText(m.key) ? ` (${m.key})` : ''}`
    for (const field of ['key', 'name', 'logo', 'description', 'editorMode']) if (!isText(m[field])) problems.push(`${at}.${field}: required`)
    for (const field of Object.keys(m)) if (!STEP_FIELDS.includes(field)) problems.push(`${at}.${field}: unknown field`)
    if (isText(m.editorMode) && !EDITOR_MODES.includes(m.editorMode)) problems.push(`${at}.editorMode: "${m.editorMode}" is not one of ${EDITOR_MODES.join(', ')}`)
    const b = (m.boundaries ?? {}) as { input?: { ports?: unknown }; outputs?: unknown }
    const ports = b.input?.ports
    if (!Array.isArray(ports) || ports.length === 0) problems.push(`${at}.boundaries.input.ports: required`)
    else for (const p of ports) if (!PORTS.includes(p as string)) problems.push(`${at}.boundaries.input.ports: "${String(p)}" is not a port`)
    if (!Array.isArray(b.outputs) || b.outputs.length === 0) problems.push(`${at}.boundaries.outputs: required`)
    else for (const o of b.outputs as Array<{ port?: unknown }>) if (!PORTS.includes(o?.port as string)) problems.push(`${at}.boundaries.outputs: port "${String(o?.port)}" is not a port`)
    if (m.environments !== undefined && !(Array.isArray(m.environments) && m.environments.every((e) => e === 'service-enterprise'))) problems.push(`${at}.environments: only service-enterprise`)
  }
  if (!Array.isArray(hooks) || hooks.length === 0) problems.push('modules.webhook: an app with a workflow-step-type module must also define a webhook module')
  for (const [i, raw] of (Array.isArray(hooks) ? hooks : []).entries()) {
    const m = (raw ?? {}) as Record<string, unknown>
    const at = `modules.webhook[${i}]`
    for (const field of ['key', 'url']) if (!isText(m[field])) problems.push(`${at}.${field}: required`)
    if (!Array.isArray(m.events) || m.events.length === 0) problems.push(`${at}.events: required`)
    for (const field of Object.keys(m)) if (!WEBHOOK_FIELDS.includes(field)) problems.push(`${at}.${field}: unknown field`)
  }
  return problems
}

export class WorkflowEditor {
  constructor(
    private readonly settings: EmulatorSettings,
    private readonly client: { clientId: string; clientSecret: string },
    private readonly tenant: (key?: string) => Tenant,
  ) {}

  private appUrl(): string {
    const base = this.settings.appUrl ?? (this.settings.webhookUrl ? new URL(this.settings.webhookUrl).origin : null)
    if (!base) throw new Error('emulator: the editor needs the app address (configure({ appUrl }) or webhookUrl)')
    return base.replace(/\/+$/, '')
  }

  /** The app's manifest, fetched from `${appUrl}/manifest.json`. */
  async manifest(): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.appUrl()}/manifest.json`)
    if (!res.ok) throw new Error(`emulator: GET /manifest.json answered ${res.status}`)
    return (await res.json()) as Record<string, unknown>
  }

  private async module(key: string): Promise<{ module: StepModule; base: string }> {
    const manifest = await this.manifest()
    const steps = ((manifest.modules as Record<string, unknown> | undefined)?.['workflow-step-type'] ?? []) as StepModule[]
    const module = steps.find((m) => m.key === key)
    if (!module) throw new Error(`emulator: the manifest has no workflow-step-type module "${key}" (has ${steps.map((m) => m.key).join(', ')})`)
    // The platform resolves module URLs against the manifest's baseUrl; an explicit `appUrl` wins
    // (a worker on an OS-chosen port cannot know its own address before it starts).
    const base = this.settings.appUrl ?? (typeof manifest.baseUrl === 'string' && manifest.baseUrl !== '' ? manifest.baseUrl : this.appUrl())
    return { module, base }
  }

  /**
   * Checks the app's manifest as the platform would (`manifestProblems`) and fetches every logo
   * it names (the manifest's and each step's): each must answer 200 with an image. [] when all is well.
   */
  async checkManifest(): Promise<string[]> {
    const manifest = await this.manifest()
    const problems = manifestProblems(manifest)
    const base = this.settings.appUrl ?? (isText(manifest.baseUrl) ? manifest.baseUrl : this.appUrl())
    const logos: Array<[string, string]> = []
    if (isText(manifest.logo)) logos.push(['logo', manifest.logo])
    const steps = ((manifest.modules as Record<string, unknown> | undefined)?.['workflow-step-type'] ?? []) as Array<Record<string, unknown>>
    for (const [i, m] of (Array.isArray(steps) ? steps : []).entries()) if (isText(m.logo)) logos.push([`modules.workflow-step-type[${i}].logo`, m.logo])
    for (const [where, logo] of logos) {
      const url = /^https?:/.test(logo) ? logo : `${base.replace(/\/+$/, '')}${logo.startsWith('/') ? logo : `/${logo}`}`
      try {
        const res = await fetch(url)
        await res.arrayBuffer()
        if (res.status !== 200) problems.push(`${where}: ${logo} answered ${res.status}`)
        else if (!/^image\//.test(res.headers.get('content-type') ?? '')) problems.push(`${where}: ${logo} is not an image (${res.headers.get('content-type') ?? 'no content-type'})`)
      } catch (error) {
        problems.push(`${where}: ${logo} could not be fetched (${(error as Error).message})`)
      }
    }
    return problems
  }

  /** The settings JWT the platform sends with the settings calls and the iframe. */
  async mintJwt(target: EditorTarget = {}): Promise<string> {
    const tenant = this.tenant(target.organization)
    const moduleKey = target.moduleKey ?? tenant.sample.step.applicationModule.moduleKey
    const now = Math.floor(Date.now() / 1000)
    const ttl = target.jwtTtlSeconds ?? 300
    const userId = Number(tenant.sample.user.id)
    return new SignJWT({
      domain: tenant.domain,
      module: target.moduleClaim ?? moduleKey,
      // A template's editor has no project: its token names none.
      context: target.template ? { organization_id: Number(tenant.id), user_id: userId } : { project_id: target.projectId ?? tenant.sample.project.id, organization_id: Number(tenant.id), user_id: userId },
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setAudience(this.client.clientId)
      .setSubject(String(userId))
      .setIssuedAt(ttl < 0 ? now + ttl - 60 : now)
      .setExpirationTime(now + ttl)
      .sign(new TextEncoder().encode(target.signingSecret ?? this.client.clientSecret))
  }

  private body(target: EditorTarget, settings?: Record<string, unknown>): Record<string, unknown> {
    const tenant = this.tenant(target.organization)
    const stepId = target.stepId ?? tenant.sample.step.id
    const where = target.template
      ? { organizationId: Number(tenant.id), templateId: target.templateId ?? tenant.templateId, stepId }
      : { organizationId: Number(tenant.id), projectId: target.projectId ?? tenant.sample.project.id, workflowId: target.workflowId ?? tenant.workflowId, stepId }
    return settings === undefined ? where : { ...where, settings }
  }

  private async call(method: 'POST' | 'DELETE', which: 'updateSettingsUrl' | 'deleteSettingsUrl', target: EditorTarget, settings?: Record<string, unknown>): Promise<EditorResponse> {
    const tenant = this.tenant(target.organization)
    const moduleKey = target.moduleKey ?? tenant.sample.step.applicationModule.moduleKey
    const { module, base } = await this.module(moduleKey)
    const path = module[which]
    if (!path) throw new Error(`emulator: module "${moduleKey}" has no ${which}`)
    const jwt = await this.mintJwt({ ...target, moduleKey })
    const url = new URL(`${base.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`)
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (target.jwtIn === 'query') url.searchParams.set('jwtToken', jwt)
    else headers.authorization = `Bearer ${jwt}`
    const res = await fetch(url, { method, headers, body: JSON.stringify(this.body(target, settings)) })
    const text = await res.text()
    let body: unknown = text
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body, url: url.toString() }
  }

  /** A user saves the step's settings in the workflow editor: POST <updateSettingsUrl>. */
  saveSettings(settings: Record<string, unknown>, target: EditorTarget = {}): Promise<EditorResponse> {
    return this.call('POST', 'updateSettingsUrl', target, settings)
  }

  /** A user deletes the step: DELETE <deleteSettingsUrl> with the same fields, no settings. */
  deleteStep(target: EditorTarget = {}): Promise<EditorResponse> {
    return this.call('DELETE', 'deleteSettingsUrl', target)
  }

  /**
   * The address the editor loads in the settings iframe: the module `url` with `jwtToken`, and the
   * step it edits, `stepId` (and `templateId` for a template's step). The interface document does
   * not say how the iframe learns its step; without it a settings page cannot show the step's
   * settings (docs/settings.md, "The page and the service").
   */
  async settingsPageUrl(target: EditorTarget = {}): Promise<string> {
    const tenant = this.tenant(target.organization)
    const moduleKey = target.moduleKey ?? tenant.sample.step.applicationModule.moduleKey
    const { module, base } = await this.module(moduleKey)
    if (!module.url) throw new Error(`emulator: module "${moduleKey}" has no url`)
    const url = new URL(`${base.replace(/\/+$/, '')}${module.url.startsWith('/') ? module.url : `/${module.url}`}`)
    const where = this.body(target)
    url.searchParams.set('stepId', String(where.stepId))
    if (target.template) url.searchParams.set('templateId', String(where.templateId))
    url.searchParams.set('jwtToken', await this.mintJwt({ ...target, moduleKey }))
    return url.toString()
  }
}
