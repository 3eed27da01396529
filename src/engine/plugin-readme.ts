// The generated parts of a plugin's README: its Options table, from the options schema, and its
// Codes table, from its messages. `scripts/plugin-readmes.mjs` writes them between their markers;
// the catalog test (test/plugins/catalog.test.ts) checks that every README's copy is current.
import type { MessageSpec, PluginDefinition } from './types.js'

type Schema = Record<string, unknown>

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ')
const json = (v: unknown) => `\`${JSON.stringify(v).replaceAll('|', '\\|')}\``

/** How a property's type reads in the table: `boolean`, `array of string`, `"a" \| "b"`, `string or array`. */
function typeOf(p: Schema): string {
  if (Array.isArray(p.enum)) return p.enum.map((v) => json(v)).join(' \\| ')
  const variants = (p.oneOf ?? p.anyOf) as Schema[] | undefined
  if (variants) return variants.map(typeOf).join(' or ')
  if (p.type === 'array' && p.items && typeof p.items === 'object') {
    const items = p.items as Schema
    const inner = Array.isArray(items.enum) ? `(${typeOf(items)})` : typeOf(items)
    return `array of ${inner}`
  }
  if (Array.isArray(p.type)) return p.type.join(' or ')
  return typeof p.type === 'string' ? p.type : 'any'
}

/** The Options table: one row per property of the options schema, in schema order. */
export function pluginOptionsTable(definition: Pick<PluginDefinition<never>, 'options'>): string {
  const properties = ((definition.options as Schema).properties ?? {}) as Record<string, Schema>
  const required = new Set(((definition.options as Schema).required ?? []) as string[])
  const rows = Object.entries(properties).map(([name, p]) => {
    const def = p.default !== undefined ? json(p.default) : required.has(name) ? '(required)' : ''
    return `| \`${name}\` | ${typeOf(p)} | ${def} | ${cell(String(p.description ?? ''))} |`
  })
  if (!rows.length) return 'No options.'
  return ['| option | type | default | what it does |', '|---|---|---|---|', ...rows].join('\n')
}

/** The Codes table: one row per code the plugin declares, in declaration order. */
export function pluginCodesTable(definition: Pick<PluginDefinition<never>, 'messages'>): string {
  const entries = Object.entries(definition.messages ?? {}) as [string, MessageSpec<never>][]
  const rows = entries.map(([code, spec]) => {
    const severity = (typeof spec.severity === 'string' ? [spec.severity] : spec.severity).map((s) => `\`${s}\``).join(' or ')
    return `| \`${code}\` | ${severity} | ${cell(spec.meaning)} |`
  })
  return ['| code | severity | meaning |', '|---|---|---|', ...rows].join('\n')
}

export const GENERATED = {
  options: {
    start: '<!-- options:start (generated from the options schema by scripts/plugin-readmes.mjs; do not edit by hand) -->',
    end: '<!-- options:end -->',
    table: pluginOptionsTable,
  },
  codes: {
    start: '<!-- codes:start (generated from the plugin\'s messages by scripts/plugin-readmes.mjs; do not edit by hand) -->',
    end: '<!-- codes:end -->',
    table: pluginCodesTable,
  },
} as const

/** The text between a generated part's markers, or undefined when the markers are missing. */
export function generatedPart(readme: string, part: keyof typeof GENERATED): string | undefined {
  const { start, end } = GENERATED[part]
  const i = readme.indexOf(start)
  const j = readme.indexOf(end)
  if (i === -1 || j < i) return undefined
  return readme.slice(i + start.length, j).trim()
}

/** The README with its generated parts current. A part whose markers are missing is left out. */
export function updatePluginReadme(readme: string, definition: PluginDefinition<never>): string {
  let out = readme
  for (const part of Object.keys(GENERATED) as (keyof typeof GENERATED)[]) {
    const { start, end, table } = GENERATED[part]
    const i = out.indexOf(start)
    const j = out.indexOf(end)
    if (i === -1 || j < i) continue
    out = `${out.slice(0, i + start.length)}\n${table(definition)}\n${out.slice(j)}`
  }
  return out
}
