// What the worker sends back (section 2.7): a string's status record and the ports a status
// update may name.

/** String status record (section 2.7). */
export interface StatusRecord {
  stringId: number
  languageId: string
  stepId: number
  status: string
  output: string
}

export const PORTS = ['untranslated', 'translated', 'approved', 'all', 'false', 'true', 'skipped', 'initial'] as const
export type Port = (typeof PORTS)[number]
