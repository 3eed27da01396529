// Shapes of what the service sends (interface document, sections 2.5 and 2.6). The ajv schemas
// in batch-schema.ts validate these at the edge; the types here describe what passed.
import type { Language } from '../engine/types.js'

export interface StringRecord {
  id: number
  identifier: string
  key: string
  text: string
  type: string
  context: string
  maxLength: string | number
  isHidden: boolean
  isDuplicate: boolean
  masterStringId: number | null
  revision: number
  hasPlurals: boolean
  labelIds: number[]
  url: string
  createdAt: string
  updatedAt: string | null
  file: {
    id: number
    name: string
    title: string | null
    type: string
    path: string
    status: string
    revision: string
    branch: { id: number | null }
    directory: { id: number | null }
    project: Record<string, unknown> | null
  }
  project: {
    id: number
    userId: number
    sourceLanguageId: string
    targetLanguageIds: string[]
    identifier: string
    name: string
    [k: string]: unknown
  }
}

export interface WorkflowStep {
  id: number
  title: string
  type: string
  languages: string[]
  applicationModule: { applicationIdentifier: string; moduleKey: string }
}

export interface StringStatus {
  status: string
  output: string
  originEvent: string
  organizationId: string
  translation: StringRecord
  sourceLanguage: Language
  affectedLanguage: Language
  workflowStep: WorkflowStep
  user: { id: string; username: string; fullName: string; avatarUrl: string }
}

export const RECALCULATION_EVENT = 'string.status_on_step.recalculation_triggered'

export interface RecalculationEvent {
  event: typeof RECALCULATION_EVENT
  stringStatus: StringStatus
}

export interface OtherEvent {
  event: string
  [field: string]: unknown
}

export interface WebhookBatch {
  events: Array<RecalculationEvent | OtherEvent>
}

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
