// Named bundles of checks, in the spirit of pofilter's profiles. A pipeline writes
// `uses: standard` and may override any check of the preset. Filled by the check catalog;
// documented in presets.md.
export interface PresetCheck {
  uses: string
  id?: string
  with?: Record<string, unknown>
  severity?: 'error' | 'warning' | 'info'
}

/** Broken strings: nothing translated, placeholders or markup lost. */
const minimal: PresetCheck[] = [
  { uses: 'empty' },
  { uses: 'placeholders' },
  { uses: 'tags' },
]

/** What a reviewer would send back, with matters of style as warnings. */
const standard: PresetCheck[] = [
  ...minimal,
  { uses: 'icu' },
  // Engages only when the source uses Markdown (code span, link, paired emphasis): plain text is not checked.
  { uses: 'markdown' },
  { uses: 'plurals' },
  { uses: 'length' },
  { uses: 'whitespace' },
  { uses: 'punctuation', severity: 'warning' },
  { uses: 'numbers' },
  { uses: 'urls' },
  { uses: 'brackets' },
  { uses: 'escapes' },
  { uses: 'accelerators' },
  // Grades its own findings: an unambiguous repeat ("the the") is an error, one with a grammatical
  // reading (German "dass das das Beste") a warning.
  { uses: 'double-words' },
  { uses: 'unchanged', severity: 'warning' },
]

/**
 * Everything as an error, plus the script check and the glossary. `terminology` has no terms
 * until the pipeline gives it some (`with: { file: glossary.tbx }`); without, it finds nothing.
 */
const strict: PresetCheck[] = [
  ...standard.map(({ severity, ...check }) => (severity === 'warning' || check.uses === 'double-words' ? { ...check, severity: 'error' as const } : check)),
  { uses: 'charset' },
  { uses: 'terminology' },
]

export const PRESETS: Record<string, PresetCheck[]> = { minimal, standard, strict }
