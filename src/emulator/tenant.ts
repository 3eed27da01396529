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
  /**
   * The translator puts back the defect the translation had before it was fixed (a translation
   * that never had one is saved again unchanged): the expected output becomes the failing port again.
   */
  breakAgain?: boolean
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
      retranslate(sample, str, languageId, options.text, options.breakAgain)
      statuses.set(str.id, languageId, 'NEED_PROCESS')
      moved.push({ stringId: str.id, languageId })
    }
    return moved
  }

  /**
   * A translator edits translations of strings that are not at work at the step (FAILED, or
   * parked as TODO): the status stays as it is; a manager's Resend brings them back, and that
   * arrival is work on the translation as it is now. Same choices as `sendBack` (fix, `text`,
   * `breakAgain`). Returns the pairs edited.
   */
  editTranslations(options: SendBackOptions = {}): Array<{ stringId: number; languageId: string }> {
    const { statuses, sample } = this.world
    const edited: Array<{ stringId: number; languageId: string }> = []
    for (const status of ['FAILED', 'TODO'] as const) {
      const filter = { status, ...(options.languageId ? { languageId: options.languageId } : {}), ...(options.stringIds ? { stringIds: options.stringIds } : {}) }
      for (const { str, languageId } of [...statuses.select(filter)]) {
        retranslate(sample, str, languageId, options.text, options.breakAgain)
        edited.push({ stringId: str.id, languageId })
      }
    }
    return edited
  }

  /**
   * A translator edits the source of strings (a new source revision) and saves the translation
   * with the same change: the string comes to the step again (NEED_PROCESS, a new arrival unless it
   * was already waiting), with the new revision. `append` is added to the source text and to every
   * translation of the step's languages (plain texts: a change that keeps a correct translation
   * correct, and makes the old source disagree with the new translation when it carries a number).
   * The edit stays in the source: translations saved later (a send-back's fix, a defect put back)
   * carry it too. Returns the (string, language) pairs that are waiting now.
   */
  editSource(options: { stringIds: number[]; append: string }): Array<{ stringId: number; languageId: string }> {
    const { statuses, sample } = this.world
    const moved: Array<{ stringId: number; languageId: string }> = []
    for (const id of options.stringIds) {
      const str = sample.byId.get(id)
      if (!str) throw new Error(`unknown string ${id}`)
      str.revision += 1
      str.text += options.append
      if (str.sourcePlurals) str.sourcePlurals = str.sourcePlurals.map((p) => ({ plural: p.plural, text: p.text + options.append }))
      str.appended = (str.appended ?? '') + options.append
      for (const [languageId, t] of str.translations) {
        t.text += options.append
        if (t.plurals) t.plurals = t.plurals.map((p) => ({ plural: p.plural, text: p.text + options.append }))
        // The defective version a later send-back may put back was of the source before the edit.
        if (t.broken) t.broken = { ...t.broken, text: t.broken.text + options.append, ...(t.broken.plurals ? { plurals: t.broken.plurals.map((p) => ({ plural: p.plural, text: p.text + options.append })) } : {}) }
        t.translationId += 1_000_000
        t.createdAt = new Date().toISOString()
        if (!statuses.get(id, languageId)) continue
        statuses.set(id, languageId, 'NEED_PROCESS')
        moved.push({ stringId: id, languageId })
      }
    }
    return moved
  }
}

function retranslate(sample: SampleProject, str: SampleString, languageId: string, text: string | undefined, breakAgain = false): void {
  const t = str.translations.get(languageId)!
  if (breakAgain) {
    if (t.broken && !t.defect) {
      t.text = t.broken.text
      if (t.broken.plurals) t.plurals = t.broken.plurals
      t.defect = t.broken.defect
      t.expected = t.broken.expected
    }
  } else if (text !== undefined) {
    t.text = text
    if (t.plurals) t.plurals = t.plurals.map((p) => ({ plural: p.plural, text }))
  } else if (t.defect) {
    t.broken = { text: t.text, ...(t.plurals ? { plurals: t.plurals } : {}), defect: t.defect, expected: t.expected }
    // The correct translation of the source as it is now: with what its edits appended.
    const correct = str.template.translations[languageId as TargetCode]
    const appended = str.appended ?? ''
    if (typeof correct === 'string') t.text = correct + appended
    else {
      t.plurals = PLURAL_CATEGORIES[languageId as TargetCode].map((plural) => ({ plural, text: correct[plural as keyof typeof correct]! + appended }))
      t.text = t.plurals.find((p) => p.plural === 'other')!.text
    }
    t.defect = null
    t.expected = sample.passOutput
  }
  // A correct translation the translator saved again keeps its text: a new translation id only.
  t.translationId += 1_000_000
  t.createdAt = new Date().toISOString()
}
