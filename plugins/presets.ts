// Named bundles of checks, in the spirit of pofilter's profiles. A pipeline writes
// `uses: standard` and may override any check of the preset. Filled by the check catalog.
export interface PresetCheck {
  uses: string
  id?: string
  with?: Record<string, unknown>
  severity?: 'error' | 'warning' | 'info'
}

export const PRESETS: Record<string, PresetCheck[]> = {}
