// The app manifest: manifest.template.json with BASE_URL and CLIENT_ID filled in, one
// `workflow-step-type` module per pipeline (every field of section 2.3, URLs relative) and one
// `webhook` module listing the events the pipelines need.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PACKAGE_ROOT } from '../config/load-config.js'
import { settingsPathFor } from '../settings/settings-routes.js'
import { RECALCULATION_EVENT } from '../webhooks/event-types.js'

export const WEBHOOK_MODULE_KEY = 'switchyard-webhook'
export const WEBHOOK_PATH = '/webhooks'
export const ENVIRONMENT = 'service-enterprise'

export interface ManifestPipeline {
  key: string
  name: string
  description: string
  editorMode: string
  input: readonly string[]
  outputs: ReadonlyArray<{ name: string; port: string; title: string }>
  logo?: { path: string; contentType: string }
}

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

export function renderManifest(input: { baseUrl: string; clientId: string; pipelines: ManifestPipeline[]; events: string[] }): Record<string, unknown> {
  const manifest = fill(loadTemplate(), { baseUrl: input.baseUrl, clientId: input.clientId }) as Record<string, unknown>
  const steps = input.pipelines.map((p) => {
    const paths = stepPaths(p.key)
    return {
      key: p.key,
      name: p.name,
      ...(p.logo ? { logo: paths.logo } : {}),
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
