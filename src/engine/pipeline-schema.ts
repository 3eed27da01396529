// The one JSON Schema of pipeline files. The loader validates every file with it (so unknown keys
// and wrong types are errors located by their path), and `pipelines/pipeline.schema.json` is this
// object written out for editors (a test keeps the two equal; regenerate with
// `node -e "import('./dist/src/engine/pipeline-schema.js').then(m => m.writePipelineSchema())"`).
// `PipelineFile`, the type of a file that passed validation, is derived from the same object.
import { writeFile } from 'node:fs/promises'
import type { FromSchema, JSONSchema } from 'json-schema-to-ts'
import path from 'node:path'
import { PACKAGE_ROOT } from '../config/load-config.js'
import { PORTS } from '../protocol/string-status.js'
import { MAX_TIMER_MS } from './types.js'

const NAME = '^[a-z0-9][a-z0-9-_]*$'

const severity = { enum: ['error', 'warning', 'info'], description: 'Severity of the findings of this check, overriding what the plugin says.' } as const

const maxTextLength = {
  type: 'integer',
  minimum: 0,
  description: 'Longest source, translation or plural form the check reads, in UTF-16 code units; a longer one gets the error finding "too long to check" instead (default: the pipeline\'s maxTextLength, else 50000; 0: no limit).',
} as const

const check = {
  type: 'object',
  additionalProperties: false,
  required: ['uses'],
  properties: {
    uses: { type: 'string', minLength: 1, description: 'A built-in plugin, a plugin of PLUGINS_DIR, `npm:<package>`, or a preset (`standard`, ...).' },
    id: { type: 'string', pattern: NAME, description: 'Name of the check in findings and conditions (findings.<id>); default: the plugin name.' },
    with: { type: 'object', description: 'Options of the plugin (its own JSON Schema). `${settings.x}` takes a step setting; alone, it keeps the setting\'s type.' },
    severity,
    if: { type: 'string', description: 'Run the check only on strings where this holds, e.g. `no errors so far`, `file.type == "android"`.' },
    timeout: { type: 'integer', minimum: 1, maximum: MAX_TIMER_MS, description: 'Longest one call may run, in ms (default: the plugin\'s timeoutMs, else 30000).' },
    maxTextLength,
    enabled: { type: 'boolean', default: true, description: 'false turns the check off (handy to switch off a preset\'s check).' },
    overrides: {
      type: 'object',
      description: 'For a preset: changes to its checks, by check id or plugin name.',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { with: { type: 'object' }, severity, if: { type: 'string' }, timeout: { type: 'integer', minimum: 1, maximum: MAX_TIMER_MS }, maxTextLength, enabled: { type: 'boolean' } },
      },
    },
    fallback: {
      type: 'array',
      description: 'For a preset: checks used instead while the preset is not defined (a warning says so).',
      items: { $ref: '#/$defs/check' },
    },
  },
} as const

export const pipelineSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://switchyard.dev/pipeline.schema.json',
  title: 'Switchyard pipeline',
  description: 'A custom workflow step: which checks run on each string and which output it goes to.',
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'input', 'outputs', 'checks'],
  $defs: { check },
  properties: {
    $schema: { type: 'string' },
    key: { type: 'string', pattern: NAME, maxLength: 64, description: 'Module key of the workflow-step-type module; unique across pipelines.' },
    name: { type: 'string', minLength: 1, description: 'Name of the step type in the workflow editor.' },
    description: { type: 'string', default: '', description: 'What the step does, shown in the workflow editor.' },
    logo: { type: 'string', description: 'Image file beside the pipeline (png, svg, jpg, gif, webp), 48x48 recommended.' },
    editorMode: { enum: ['side-by-side', 'comfortable', 'multilingual'], default: 'side-by-side', description: 'Editor mode of the step.' },
    input: {
      type: 'array', minItems: 1, uniqueItems: true,
      items: { enum: [...PORTS] },
      description: 'Ports the step accepts (boundaries.input.ports).',
    },
    outputs: {
      type: 'object', minProperties: 1,
      description: 'Named outputs; routes name them, the service sees their port.',
      propertyNames: { pattern: NAME },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['port'],
        properties: {
          port: { enum: [...PORTS], description: 'Port of the output (the value sent in the status update).' },
          title: { type: 'string', description: 'Title of the output in the workflow editor; default: the output name.' },
        },
      },
    },
    settings: {
      type: 'object',
      description: 'JSON Schema of the step\'s settings (an object schema; `properties` with defaults).',
      properties: { type: { const: 'object' }, properties: { type: 'object', additionalProperties: { type: 'object' } }, required: { type: 'array', items: { type: 'string' } } },
    },
    checks: { type: 'array', items: { $ref: '#/$defs/check' }, description: 'Checks, run in order.' },
    route: {
      type: 'array',
      description: 'Routing rules; the first that matches wins. A string that matches none is parked.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['to'],
        properties: {
          if: { type: 'string', description: 'Condition, e.g. `errors > 0`; leave out on the last rule for "everything else".' },
          to: { type: 'string', description: 'Output name, or "" to park.' },
        },
      },
    },
    maxTextLength: { ...maxTextLength, default: 50_000, description: 'Default of every check\'s maxTextLength: longer texts get the error finding "too long to check" instead of being checked slowly (0: no limit).' },
    issues: {
      type: 'object',
      additionalProperties: false,
      description: 'Raise one issue at the service on each string the pipeline sends back, listing its findings; resolve it when the string later passes (docs/findings.md).',
      properties: {
        raise: { type: 'boolean', default: true, description: 'false turns issues off (the findings log still keeps the findings).' },
        outputs: {
          type: 'array', uniqueItems: true, items: { type: 'string', pattern: NAME },
          description: 'Outputs that send a string back. Default: the outputs of routes whose `if` counts errors.',
        },
      },
    },
    'on-error': { type: 'string', default: 'park', description: 'When a plugin fails on a string: `park` (""), `retry`, or an output name.' },
    events: {
      type: 'array',
      description: 'Other webhook events (project.translated, ...) handed to plugins\' onEvent.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['on', 'uses'],
        properties: {
          on: { type: 'string', minLength: 1, description: 'Event name, e.g. project.translated.' },
          uses: { type: 'string', minLength: 1 },
          id: { type: 'string', pattern: NAME },
          with: { type: 'object' },
          timeout: { type: 'integer', minimum: 1, maximum: MAX_TIMER_MS },
        },
      },
    },
  },
} as const

// json-schema-to-ts cannot follow a schema into itself (a check's `fallback` holds checks), so the
// two recursive properties are typed by hand and everything else comes from the schema. The loader
// does not fill in defaults, so a property with a default stays optional.
type Untyped<Schema extends { properties: object }, Name extends keyof Schema['properties']> =
  Omit<Schema, 'properties'> & { properties: Omit<Schema['properties'], Name> & { [K in Name]: Record<string, never> } }
type Typed<Schema extends JSONSchema> = FromSchema<Schema, { keepDefaultedPropertiesOptional: true }>

/** One entry of `checks`: a plugin or a preset, as written. */
export type CheckEntry = Typed<Untyped<typeof check, 'fallback'>> & { fallback?: CheckEntry[] }

/** A pipeline file as validated by `pipelineSchema`. */
export type PipelineFile = Typed<Untyped<Omit<typeof pipelineSchema, '$defs'>, 'checks'>> & { checks: CheckEntry[] }

export type EditorMode = NonNullable<PipelineFile['editorMode']>

/** Write the schema for editors (pipelines/pipeline.schema.json). */
export async function writePipelineSchema(file = path.join(PACKAGE_ROOT, 'pipelines', 'pipeline.schema.json')): Promise<void> {
  await writeFile(file, `${JSON.stringify(pipelineSchema, null, 2)}\n`)
}
