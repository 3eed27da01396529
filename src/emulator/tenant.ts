// One organization of the emulated service: its id, domain and app_secret, its sample project
// (project, workflow step, languages, strings) with the statuses on the step, and the things a
// manager or the platform does to it: send a finished string back, Resend, revoke the app's right
// to update statuses for a while, take a language out of the step, leave translations missing,
// and the comments/issues on its strings. Every lookup on the request path is a Map hit.
import type { FaultSettings } from './emulator-settings.js'
import { PLURAL_CATEGORIES, type TargetCode } from './phrases.js'
import { createSampleProject, type SampleProject, type SampleString, type SeedOptions } from './sample-project.js'
import { StatusStore, type StatusFilter } from './status-store.js'
import { CommentStore } from './comments.js'

export interface World {
  sample: SampleProject
  statuses: StatusStore
}

/** An organization beyond the first (`startEmulator({ organizations: [...] })` or `addOrganization`). */
export interface OrganizationOptions extends Omit<SeedOptions, 'organizationId' | 'domain'> {
  /** Numeric organization id, as a string (X-Service-Id, stringStatus.organizationId). */
  id: string
  /** Organization domain: `{organization_domain}` of its API address. */
  domain: string
  /** Its app_secret (unique per installation). Default: random. */
  appSecret?: string
  /** Id of the project workflow the step is in. Default 11. */
  workflowId?: number
  /** Id of the workflow template the step was created from. Default 301. */
  templateId?: number
}

export interface SendBackOptions {
  stringIds?: number[]
  languageId?: string
  /**
   * The translator's new text. Default: the correct translation (the defect fixed, the expected
   * output becomes the passing port); a correct translation is saved again unchanged (new id).
   */
  text?: string
}

export class Tenant {
  world: World
  /** PATCH status answers 403 until this time (ms since epoch; Infinity: until restored). */
  revokedUntil = 0
  /** Every API request answers 401 until this time, whatever the token (a refresh does not help). */
  tokensRefusedUntil = 0
  /** Faults for this organization only; null: the emulator-wide ones. */
  faults: FaultSettings | null = null
  /** String ids whose translation the translations endpoint leaves out, per language. */
  readonly untranslated = new Map<string, Set<number>>()
  readonly comments = new CommentStore()
  /** Status answered to every comments request (e.g. 403, 500) instead of serving it; null: serve. */
  refuseComments: number | null = null
  readonly workflowId: number
  readonly templateId: number

  constructor(
    readonly id: string,
    readonly domain: string,
    private readonly secret: () => string,
    private readonly seedDefaults: SeedOptions,
    options: { workflowId?: number; templateId?: number } = {},
  ) {
    this.world = Tenant.build({ ...seedDefaults, organizationId: id, domain })
    this.workflowId = options.workflowId ?? 11
    this.templateId = options.templateId ?? 301
  }

  private static build(options: SeedOptions): World {
    const sample = createSampleProject(options)
    return { sample, statuses: new StatusStore(sample) }
  }

  get appSecret(): string {
    return this.secret()
  }

  get organization(): { id: string; domain: string } {
    return { id: this.id, domain: this.domain }
  }

  get sample(): SampleProject {
    return this.world.sample
  }

  get statuses(): StatusStore {
    return this.world.statuses
  }

  /** Replaces the sample project and every status (and the untranslated set and comments). */
  seed(options: SeedOptions = {}): SampleProject {
    this.world = Tenant.build({ ...this.seedDefaults, ...options, organizationId: this.id, domain: this.domain })
    this.untranslated.clear()
    this.comments.clear()
    return this.world.sample
  }

  isRevoked(now = Date.now()): boolean {
    return this.revokedUntil > now
  }

  /** The app may not update statuses (PATCH answers 403) for `ms` milliseconds, or until `restore()`. */
  revoke(ms?: number): void {
    this.revokedUntil = ms === undefined ? Number.POSITIVE_INFINITY : Date.now() + ms
  }

  restore(): void {
    this.revokedUntil = 0
    this.tokensRefusedUntil = 0
  }

  /** The organization's tokens, fresh ones included, answer 401 for `ms` (or until `restore()`): "401 after a refresh". */
  refuseTokens(ms?: number): void {
    this.tokensRefusedUntil = ms === undefined ? Number.POSITIVE_INFINITY : Date.now() + ms
  }

  /** Takes a language out of the step: status GET/PATCH for it answer 404 and nothing more is sent in it. */
  removeLanguage(languageId: string): void {
    const { step } = this.world.sample
    step.languages = step.languages.filter((l) => l !== languageId)
  }

  /** Puts a language back into the step. */
  addLanguage(languageId: string): void {
    const { step, languages } = this.world.sample
    if (!languages.includes(languageId)) throw new Error(`emulator: ${languageId} is not a target language of the project`)
    if (!step.languages.includes(languageId)) step.languages.push(languageId)
  }

  /** Leaves these strings without a translation in a language (or every target language). */
  setUntranslated(stringIds: number[], languageId?: string): void {
    for (const lang of languageId ? [languageId] : this.world.sample.languages) {
      let set = this.untranslated.get(lang)
      if (!set) this.untranslated.set(lang, (set = new Set()))
      for (const id of stringIds) set.add(id)
    }
  }

  isUntranslated(stringId: number, languageId: string): boolean {
    return this.untranslated.get(languageId)?.has(stringId) ?? false
  }

  /** The manager's Resend: FAILED (and parked TODO) strings back to NEED_PROCESS; returns how many. */
  resend(filter: Pick<StatusFilter, 'languageId' | 'stringIds'> = {}): number {
    const { statuses } = this.world
    let n = 0
    for (const status of ['FAILED', 'TODO'] as const) {
      for (const { str, languageId } of [...statuses.select({ ...filter, status })]) {
        statuses.set(str.id, languageId, 'NEED_PROCESS')
        n++
      }
    }
    return n
  }

  /**
   * A later step or a reviewer sends finished (DONE) strings back; the translator changes the
   * translation and the string reaches this step again with the same source revision
   * (NEED_PROCESS, a new arrival). Returns the (string, language) pairs sent back.
   */
  sendBack(options: SendBackOptions = {}): Array<{ stringId: number; languageId: string }> {
    const { statuses, sample } = this.world
    const moved: Array<{ stringId: number; languageId: string }> = []
    const filter = { status: 'DONE', ...(options.languageId ? { languageId: options.languageId } : {}), ...(options.stringIds ? { stringIds: options.stringIds } : {}) }
    for (const { str, languageId } of [...statuses.select(filter)]) {
      retranslate(sample, str, languageId, options.text)
      statuses.set(str.id, languageId, 'NEED_PROCESS')
      moved.push({ stringId: str.id, languageId })
    }
    return moved
  }
}

function retranslate(sample: SampleProject, str: SampleString, languageId: string, text: string | undefined): void {
  const t = str.translations.get(languageId)!
  if (text !== undefined) {
    t.text = text
    if (t.plurals) t.plurals = t.plurals.map((p) => ({ plural: p.plural, text }))
  } else if (t.defect) {
    const correct = str.template.translations[languageId as TargetCode]
    if (typeof correct === 'string') t.text = correct
    else {
      t.plurals = PLURAL_CATEGORIES[languageId as TargetCode].map((plural) => ({ plural, text: correct[plural as keyof typeof correct]! }))
      t.text = t.plurals.find((p) => p.plural === 'other')!.text
    }
    t.defect = null
    t.expected = sample.passOutput
  }
  // A correct translation the translator saved again keeps its text: a new translation id only.
  t.translationId += 1_000_000
  t.createdAt = new Date().toISOString()
}
