// The app manifest: manifest.template.json with BASE_URL and CLIENT_ID filled in, one
// `workflow-step-type` module per pipeline (every field of section 2.3, URLs relative) and one
// `webhook` module listing the events the pipelines need. Every logo it names is served
// (server/app.ts): the app's from assets/logo.png, each step's from its pipeline or
// assets/step-logo.png. The platform refuses fields it does not know, so the modules carry the
// fields of sections 2.3 and 2.4 and nothing else.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PACKAGE_ROOT } from '../config/load-config.js'
import type { Pipeline } from '../engine/pipeline.js'
import { settingsPathFor } from '../settings/settings-routes.js'
import { RECALCULATION_EVENT } from '../protocol/service-events.js'

export const WEBHOOK_MODULE_KEY = 'switchyard-webhook'
export const WEBHOOK_PATH = '/webhooks'
export const ENVIRONMENT = 'service-enterprise'

export interface LogoFile {
  path: string
  contentType: string
}

/** The app's logo, which manifest.template.json names as `/logo.png`. */
export const APP_LOGO_PATH = '/logo.png'
export const APP_LOGO: LogoFile = { path: path.join(PACKAGE_ROOT, 'assets', 'logo.png'), contentType: 'image/png' }
/** A step's logo when its pipeline names none: the platform requires one on every step module. */
export const DEFAULT_STEP_LOGO: LogoFile = { path: path.join(PACKAGE_ROOT, 'assets', 'step-logo.png'), contentType: 'image/png' }

export const stepPaths = (key: string) => ({
  settings: settingsPathFor(key),
  logo: `/steps/${encodeURIComponent(key)}/logo`,
})

let template: Record<string, unknown> | undefined
function loadTemplate(): Record<string, unknown> {
  template ??= JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'manifest.template.json'), 'utf8')) as Record<string, unknown>
  return template
}

function fill(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (m, name: string) => vars[name] ?? m)
  if (Array.isArray(value)) return value.map((v) => fill(v, vars))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]))
  return value
}

export function renderManifest(input: { baseUrl: string; clientId: string; pipelines: Array<Pick<Pipeline, 'key' | 'name' | 'description' | 'editorMode' | 'input' | 'outputs' | 'logo'>>; events: string[]; scopes?: string }): Record<string, unknown> {
  const manifest = fill(loadTemplate(), { baseUrl: input.baseUrl, clientId: input.clientId }) as Record<string, unknown>
  // The scopes the authorization asks for (OAUTH_SCOPES): the manifest says the same.
  const scopes = input.scopes?.split(/\s+/).filter(Boolean)
  if (scopes?.length) manifest.scopes = scopes
  const steps = input.pipelines.map((p) => {
    const paths = stepPaths(p.key)
    return {
      key: p.key,
      name: p.name,
      // Required by the platform's manifest schema: the pipeline's logo, else DEFAULT_STEP_LOGO.
      logo: paths.logo,
      description: p.description,
      boundaries: {
        input: { title: 'Input', ports: [...p.input] },
        outputs: p.outputs.map((o) => ({ title: o.title, port: o.port })),
      },
      editorMode: p.editorMode,
      updateSettingsUrl: paths.settings,
      deleteSettingsUrl: paths.settings,
      url: paths.settings,
      environments: [ENVIRONMENT],
    }
  })
  const events = [...new Set([RECALCULATION_EVENT, ...input.events])]
  const modules = (manifest.modules ?? {}) as Record<string, unknown>
  manifest.modules = {
    ...modules,
    'workflow-step-type': steps,
    webhook: [{ key: WEBHOOK_MODULE_KEY, url: WEBHOOK_PATH, events, environments: [ENVIRONMENT] }],
  }
  return manifest
}

/** Whether the manifest names a step module with this key (so its logo route must answer). */
export function namesStep(manifest: Record<string, unknown>, key: string): boolean {
  const steps = (manifest.modules as Record<string, unknown> | undefined)?.['workflow-step-type']
  return Array.isArray(steps) && steps.some((s) => (s as { key?: unknown }).key === key)
}
