// `${settings.x}` in a check's options. A value that is exactly one reference keeps the setting's
// type (a number stays a number); a reference inside a longer string is turned into text.
const REF = /\$\{\s*settings\.([A-Za-z_][\w-]*)\s*\}/g
const WHOLE = /^\$\{\s*settings\.([A-Za-z_][\w-]*)\s*\}$/

/** Every setting name referenced anywhere in a value, with the path where it appears. */
export function settingReferences(value: unknown, path: (string | number)[] = [], out: Array<{ name: string; path: (string | number)[] }> = []) {
  if (typeof value === 'string') {
    for (const m of value.matchAll(REF)) out.push({ name: m[1]!, path })
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => settingReferences(v, [...path, i], out))
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) settingReferences(v, [...path, k], out)
  }
  return out
}

/** The setting's own value: a name the settings lack (toString, constructor...) has none. */
const settingValue = (settings: Record<string, unknown>, name: string): unknown => (Object.hasOwn(settings, name) ? settings[name] : undefined)

/** A copy of `value` with the references replaced by the settings' values. */
export function interpolateSettings(value: unknown, settings: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value)
    if (whole) return settingValue(settings, whole[1]!)
    if (!value.includes('${')) return value
    return value.replace(REF, (_, name: string) => {
      const v = settingValue(settings, name)
      return v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)
    })
  }
  if (Array.isArray(value)) {
    // A setting without a value leaves its item out, as it leaves an option out: a hole would be
    // refused by the plugin's schema, and every string of a step that had not set it parked.
    const out: unknown[] = []
    for (const v of value) {
      const r = interpolateSettings(v, settings)
      if (r !== undefined) out.push(r)
    }
    return out
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      const r = interpolateSettings(v, settings)
      // A setting without a value leaves the option out, so the plugin's default applies.
      if (r !== undefined) out[k] = r
    }
    return out
  }
  return value
}
