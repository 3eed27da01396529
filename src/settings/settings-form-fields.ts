// From a pipeline's settings JSON Schema to the fields of the settings page. Only the top-level
// properties become fields; the browser-side validation in the page works on these descriptors
// (it cannot run ajv), and the server validates again with ajv when the service saves.

export type FieldKind = 'text' | 'textarea' | 'number' | 'integer' | 'checkbox' | 'select' | 'lines' | 'json'

export interface FormField {
  name: string
  kind: FieldKind
  title: string
  description?: string
  required: boolean
  default?: unknown
  /** select: allowed values; lines: allowed values of each line. */
  enum?: unknown[]
  /** text/textarea, and each line of `lines`. */
  pattern?: string
  minLength?: number
  maxLength?: number
  /** number/integer, inclusive. */
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  /** lines */
  minItems?: number
  maxItems?: number
}

type Schema = Record<string, unknown>

const isObject = (v: unknown): v is Schema => !!v && typeof v === 'object' && !Array.isArray(v)
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** Primary type of a property: the first non-null type named, or one inferred from enum/const. */
function typeOf(prop: Schema): string | undefined {
  const t = prop.type
  if (typeof t === 'string') return t
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined
  if (Array.isArray(prop.enum)) return 'enum'
  return undefined
}

export function formFields(schema: object): FormField[] {
  const root = schema as Schema
  const properties = isObject(root.properties) ? root.properties : {}
  const required = new Set(Array.isArray(root.required) ? root.required.filter((r): r is string => typeof r === 'string') : [])
  const fields: FormField[] = []
  for (const [name, raw] of Object.entries(properties)) {
    if (!isObject(raw)) continue
    const base = {
      name,
      title: str(raw.title) ?? name,
      description: str(raw.description),
      required: required.has(name),
      default: raw.default,
    }
    const type = typeOf(raw)
    if (Array.isArray(raw.enum) && type !== 'array') {
      fields.push({ ...base, kind: 'select', enum: raw.enum })
      continue
    }
    switch (type) {
      case 'string': {
        const maxLength = num(raw.maxLength)
        fields.push({
          ...base,
          kind: raw.format === 'textarea' || (maxLength !== undefined && maxLength > 200) ? 'textarea' : 'text',
          pattern: str(raw.pattern),
          minLength: num(raw.minLength),
          maxLength,
        })
        break
      }
      case 'number':
      case 'integer':
        fields.push({
          ...base,
          kind: type,
          minimum: num(raw.minimum),
          maximum: num(raw.maximum),
          exclusiveMinimum: num(raw.exclusiveMinimum),
          exclusiveMaximum: num(raw.exclusiveMaximum),
        })
        break
      case 'boolean':
        fields.push({ ...base, kind: 'checkbox' })
        break
      case 'array': {
        const items = isObject(raw.items) ? raw.items : {}
        if (typeOf(items) === 'string' || (Array.isArray(items.enum) && items.enum.every((v) => typeof v === 'string'))) {
          fields.push({
            ...base,
            kind: 'lines',
            enum: Array.isArray(items.enum) ? items.enum : undefined,
            pattern: str(items.pattern),
            minLength: num(items.minLength),
            maxLength: num(items.maxLength),
            minItems: num(raw.minItems),
            maxItems: num(raw.maxItems),
          })
        } else {
          fields.push({ ...base, kind: 'json' })
        }
        break
      }
      default:
        // Objects, arrays of objects, untyped properties: edited as JSON, checked by the server.
        fields.push({ ...base, kind: 'json' })
    }
  }
  return fields
}
