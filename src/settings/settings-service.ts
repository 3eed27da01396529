// Stored settings of each step placed in a workflow or a workflow template, per organization.
//
// Keys (Keyv namespace `settings`), every part URI-encoded:
//   project:{module}:{org}:{projectId}:{stepId}   settings saved from a project's workflow
//   template:{module}:{org}:{templateId}:{stepId} settings saved from a workflow template
// The public SDK keys template settings under an undefined project, so two templates collide.
//
// A project created from a template: its step's own settings if the project saved some; the
// template's only when the lookup names the template (a webhook event names none, so a job never
// does today); else none, and the pipeline's defaults apply. The template is not guessed from
// the step id: the same id in a template is no evidence the project's step came from it, and a
// wrong guess would run a step silently with another workflow's settings. A job that falls back
// to the defaults is logged once per step per process (jobLookup).
//
// (Earlier versions also wrote by-step:{module}:{org}:{stepId} -> templateId for that guess; such
// entries are ignored.)
//
// Reads are cached in a bounded in-process map (settings are read for every string). Writes on
// this process invalidate it at once; the TTL bounds how stale another worker process sharing the
// store can be.
import type Keyv from 'keyv'
import type { Logger } from '../util/logger.js'

export interface StepRef {
  organizationId: string
  projectId?: number
  templateId?: number
  stepId: number
  moduleKey: string
}

/** What is stored per step: the settings as the user saved them (validated, defaults not baked in). */
interface StoredSettings {
  settings: Record<string, unknown>
  savedAt: string
}

export interface SettingsServiceOptions {
  /** Entries kept in the read cache (default 5000). */
  maxEntries?: number
  /** How long a cached read is trusted (default 30 s); bounds staleness across processes. */
  ttlMs?: number
}

interface CacheEntry {
  value: Record<string, unknown> | undefined
  expires: number
}

const enc = encodeURIComponent

export class SettingsService {
  private readonly cache = new Map<string, CacheEntry>()
  private readonly maxEntries: number
  private readonly ttlMs: number
  // Bumped by every write: a read that started before a write must not cache what it read.
  private generation = 0
  // Steps already warned about running on the defaults (bounded: the oldest are forgotten).
  private readonly warnedDefaults = new Set<string>()

  constructor(
    private readonly store: Keyv,
    private readonly log: Logger,
    options: SettingsServiceOptions = {},
  ) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 5000)
    this.ttlMs = Math.max(0, options.ttlMs ?? 30_000)
  }

  /**
   * The step's stored settings: for a template ref, the template's; for a project ref, the
   * project's, else (when the ref also names its template) the template's, else undefined (the
   * engine then uses the pipeline's defaults).
   */
  async get(ref: StepRef): Promise<Record<string, unknown> | undefined> {
    const cacheKey = lookupKey(ref)
    const hit = this.cache.get(cacheKey)
    if (hit && hit.expires > Date.now()) {
      // Refresh recency: Map keeps insertion order, so the first key is the least recently used.
      this.cache.delete(cacheKey)
      this.cache.set(cacheKey, hit)
      return clone(hit.value)
    }
    const generation = this.generation
    const value = await this.read(ref)
    if (generation === this.generation) this.remember(cacheKey, value)
    return clone(value)
  }

  async put(ref: StepRef, settings: Record<string, unknown>): Promise<void> {
    const record: StoredSettings = { settings: structuredClone(settings), savedAt: new Date().toISOString() }
    this.generation++
    if (ref.projectId !== undefined) {
      await this.store.set(projectKey(ref, ref.projectId), record)
    } else if (ref.templateId !== undefined) {
      await this.store.set(templateKey(ref, ref.templateId), record)
    } else {
      throw new Error('a step ref to save settings for needs a projectId or a templateId')
    }
    this.invalidate(ref)
    this.log.debug({ module: ref.moduleKey, organizationId: ref.organizationId, projectId: ref.projectId, templateId: ref.templateId, stepId: ref.stepId }, 'step settings saved')
  }

  async delete(ref: StepRef): Promise<void> {
    this.generation++
    if (ref.projectId !== undefined) {
      await this.store.delete(projectKey(ref, ref.projectId))
    } else if (ref.templateId !== undefined) {
      await this.store.delete(templateKey(ref, ref.templateId))
    } else {
      throw new Error('a step ref to delete settings of needs a projectId or a templateId')
    }
    this.invalidate(ref)
    this.log.debug({ module: ref.moduleKey, organizationId: ref.organizationId, projectId: ref.projectId, templateId: ref.templateId, stepId: ref.stepId }, 'step settings deleted')
  }

  private async read(ref: StepRef): Promise<Record<string, unknown> | undefined> {
    if (ref.projectId !== undefined) {
      const own = (await this.store.get(projectKey(ref, ref.projectId))) as StoredSettings | undefined
      if (own) return own.settings
    }
    if (ref.templateId === undefined) return undefined
    const saved = (await this.store.get(templateKey(ref, ref.templateId))) as StoredSettings | undefined
    return saved?.settings
  }

  /**
   * The lookup jobs use: get(), and a warning, once per step per process, when a step has no
   * saved settings and its strings run with the pipeline's defaults (a project created from a
   * template whose settings were saved only in the template ends up here).
   */
  jobLookup(): { get(ref: StepRef): Promise<Record<string, unknown> | undefined> } {
    return {
      get: async (ref) => {
        const stored = await this.get(ref)
        if (stored === undefined) this.warnDefaults(ref)
        return stored
      },
    }
  }

  private warnDefaults(ref: StepRef): void {
    const key = lookupKey(ref)
    if (this.warnedDefaults.has(key)) return
    this.warnedDefaults.add(key)
    if (this.warnedDefaults.size > this.maxEntries) this.warnedDefaults.delete(this.warnedDefaults.values().next().value as string)
    this.log.warn(
      { module: ref.moduleKey, organizationId: ref.organizationId, projectId: ref.projectId, templateId: ref.templateId, stepId: ref.stepId },
      "step has no saved settings: its strings run with the pipeline's defaults (settings saved only in a workflow template do not reach a project created from it; save them in the project's workflow). Logged once per step.",
    )
  }

  private remember(key: string, value: Record<string, unknown> | undefined): void {
    if (this.ttlMs === 0) return
    this.cache.delete(key)
    this.cache.set(key, { value, expires: Date.now() + this.ttlMs })
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value
      if (oldest === undefined) break
      this.cache.delete(oldest)
    }
  }

  // A project save changes one lookup; a template save can change the fallback of every project
  // lookup of that step, so drop every cached lookup of (module, organization, step).
  private invalidate(ref: StepRef): void {
    const prefix = `${enc(ref.moduleKey)}:${enc(ref.organizationId)}:`
    const suffix = `:${ref.stepId}`
    for (const key of this.cache.keys()) {
      if (key.startsWith(prefix) && key.endsWith(suffix)) this.cache.delete(key)
    }
  }
}

function lookupKey(ref: StepRef): string {
  return `${enc(ref.moduleKey)}:${enc(ref.organizationId)}:${ref.projectId ?? '-'}:${ref.templateId ?? '-'}:${ref.stepId}`
}
function projectKey(ref: StepRef, projectId: number): string {
  return `project:${enc(ref.moduleKey)}:${enc(ref.organizationId)}:${projectId}:${ref.stepId}`
}
function templateKey(ref: StepRef, templateId: number): string {
  return `template:${enc(ref.moduleKey)}:${enc(ref.organizationId)}:${templateId}:${ref.stepId}`
}

// Callers get their own copy: a pipeline that mutates its settings must not change the cache.
function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value)
}
