import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { createLogger, silentLogger } from '../../src/util/logger.js'
import { SettingsService, type StepRef } from '../../src/settings/settings-service.js'
import { createStores } from '../../src/store/create-stores.js'

const job = (over: Partial<StepRef> = {}): StepRef => ({ organizationId: '200', projectId: 7, stepId: 41, moduleKey: 'qa-gate', ...over })
const template = (over: Partial<StepRef> = {}): StepRef => ({ organizationId: '200', templateId: 5, stepId: 41, moduleKey: 'qa-gate', ...over })

/** A Keyv whose reads are counted, to see what the cache saves. */
function countingStore() {
  const store = new Keyv()
  let reads = 0
  const get = store.get.bind(store)
  ;(store as unknown as { get: typeof get }).get = ((...args: Parameters<typeof get>) => {
    reads++
    return get(...args)
  }) as typeof get
  return { store, reads: () => reads }
}

describe('SettingsService', () => {
  it('returns undefined for a step with nothing saved', async () => {
    const s = new SettingsService(new Keyv(), silentLogger())
    expect(await s.get(job())).toBeUndefined()
  })

  it('does not guess a template for a job that names none: a project without its own settings gets none', async () => {
    // A project created from template 5, its step 41 never saved in the project: the job (the
    // webhook event) carries no template id, and the same step id in a template is no evidence
    // that this step came from it.
    const s = new SettingsService(new Keyv(), silentLogger())
    await s.put(template(), { tone: 'template' })
    expect(await s.get(job())).toBeUndefined()
    expect(await s.get(template())).toEqual({ tone: 'template' })
  })

  it('falls back to the template settings when the ref carries the template id; the project\'s own win', async () => {
    const s = new SettingsService(new Keyv(), silentLogger())
    await s.put(template(), { tone: 'template' })
    expect(await s.get(job({ templateId: 5 }))).toEqual({ tone: 'template' })
    expect(await s.get(job({ templateId: 6 }))).toBeUndefined()
    await s.put(job(), { tone: 'project' })
    expect(await s.get(job({ templateId: 5 }))).toEqual({ tone: 'project' })
    // Another project built from the same template still gets the template's.
    expect(await s.get(job({ projectId: 8, templateId: 5 }))).toEqual({ tone: 'template' })
    await s.delete(job())
    expect(await s.get(job({ templateId: 5 }))).toEqual({ tone: 'template' })
  })

  it('keeps two templates apart, and deleting one leaves the other', async () => {
    const s = new SettingsService(new Keyv(), silentLogger())
    await s.put(template({ templateId: 5, stepId: 1 }), { a: 5 })
    await s.put(template({ templateId: 6, stepId: 2 }), { a: 6 })
    expect(await s.get(template({ templateId: 5, stepId: 1 }))).toEqual({ a: 5 })
    expect(await s.get(template({ templateId: 6, stepId: 2 }))).toEqual({ a: 6 })
    await s.put(template({ templateId: 6, stepId: 1 }), { a: 61 })
    await s.delete(template({ templateId: 5, stepId: 1 }))
    expect(await s.get(template({ templateId: 5, stepId: 1 }))).toBeUndefined()
    expect(await s.get(template({ templateId: 6, stepId: 1 }))).toEqual({ a: 61 })
  })

  it('isolates organizations and modules', async () => {
    const s = new SettingsService(new Keyv(), silentLogger())
    await s.put(job(), { x: 1 })
    expect(await s.get(job({ organizationId: '201' }))).toBeUndefined()
    expect(await s.get(job({ moduleKey: 'other' }))).toBeUndefined()
    // Key parts are encoded: a colon in an id cannot forge another key.
    await s.put(job({ organizationId: 'a:b' }), { x: 2 })
    expect(await s.get(job({ organizationId: 'a' }))).toBeUndefined()
  })

  it('caches reads (also of steps without settings) and invalidates on put and delete', async () => {
    const { store, reads } = countingStore()
    const s = new SettingsService(store, silentLogger())
    await s.get(job())
    const afterFirst = reads()
    await s.get(job())
    await s.get(job())
    expect(reads()).toBe(afterFirst)
    await s.put(job(), { v: 1 })
    expect(await s.get(job())).toEqual({ v: 1 })
    await s.put(template(), { v: 't' })
    await s.delete(job())
    expect(await s.get(job())).toBeUndefined()
    expect(await s.get(job({ templateId: 5 }))).toEqual({ v: 't' })
    // A template save changes what every project's lookup of that step falls back to.
    expect(await s.get(job({ projectId: 9, templateId: 5 }))).toEqual({ v: 't' })
    await s.put(template(), { v: 't2' })
    expect(await s.get(job({ projectId: 9, templateId: 5 }))).toEqual({ v: 't2' })
  })

  it('hands out copies: a caller mutating its settings does not change the cache', async () => {
    const s = new SettingsService(new Keyv(), silentLogger())
    await s.put(job(), { list: ['a'] })
    const first = await s.get(job())
    ;(first?.list as string[]).push('b')
    expect(await s.get(job())).toEqual({ list: ['a'] })
  })

  it('bounds the cache, dropping the least recently used entry', async () => {
    const { store, reads } = countingStore()
    const s = new SettingsService(store, silentLogger(), { maxEntries: 2 })
    await s.get(job({ stepId: 1 }))
    await s.get(job({ stepId: 2 }))
    await s.get(job({ stepId: 1 })) // step 1 is now the most recent
    await s.get(job({ stepId: 3 })) // evicts step 2
    const before = reads()
    await s.get(job({ stepId: 1 }))
    expect(reads()).toBe(before)
    await s.get(job({ stepId: 2 }))
    expect(reads()).toBeGreaterThan(before)
  })

  it('does not cache a read that raced with a write', async () => {
    const store = new Keyv()
    const s = new SettingsService(store, silentLogger())
    const get = store.get.bind(store)
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    ;(store as unknown as { get: unknown }).get = async (...args: Parameters<typeof get>) => {
      const value = await get(...args)
      await gate
      return value
    }
    const slow = s.get(job())
    ;(store as unknown as { get: unknown }).get = get
    await s.put(job(), { fresh: true })
    release()
    expect(await slow).toBeUndefined()
    expect(await s.get(job())).toEqual({ fresh: true })
  })

  it('expires cached reads after the TTL, so another process sharing the store is seen', async () => {
    const store = new Keyv()
    const mine = new SettingsService(store, silentLogger(), { ttlMs: 20 })
    const theirs = new SettingsService(store, silentLogger())
    expect(await mine.get(job())).toBeUndefined()
    await theirs.put(job(), { other: 'process' })
    await new Promise((r) => setTimeout(r, 30))
    expect(await mine.get(job())).toEqual({ other: 'process' })
  })

  it('works on the real settings namespace (SQLite)', async () => {
    const stores = await createStores('sqlite://:memory:')
    try {
      const s = new SettingsService(stores.settings, silentLogger())
      await s.put(template({ templateId: 3, stepId: 9 }), { tone: 'formal' })
      expect(await new SettingsService(stores.settings, silentLogger()).get(template({ templateId: 3, stepId: 9 }))).toEqual({ tone: 'formal' })
      expect(await new SettingsService(stores.settings, silentLogger()).get(job({ stepId: 9, templateId: 3 }))).toEqual({ tone: 'formal' })
    } finally {
      await stores.close()
    }
  })

  describe('jobLookup (what a job runs with)', () => {
    /** A logger that keeps its warnings. */
    function recordingLogger() {
      const lines: Array<Record<string, unknown>> = []
      const log = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } })
      return { log, warnings: () => lines.filter((l) => l.level === 40) }
    }

    it('warns once per step per process when a job falls back to the defaults, not once per string', async () => {
      const { log, warnings } = recordingLogger()
      const s = new SettingsService(new Keyv(), log)
      const lookup = s.jobLookup()
      await s.put(template(), { tone: 'template' })
      for (let i = 0; i < 50; i++) expect(await lookup.get(job())).toBeUndefined()
      expect(warnings()).toHaveLength(1)
      expect(warnings()[0]).toMatchObject({ module: 'qa-gate', organizationId: '200', projectId: 7, stepId: 41 })
      expect(String(warnings()[0]!.msg)).toMatch(/no saved settings.*defaults/)
      // Another step (or project) warns once too; a step with settings never does.
      await lookup.get(job({ stepId: 42 }))
      await lookup.get(job({ stepId: 42 }))
      await s.put(job({ stepId: 43 }), { tone: 'formal' })
      expect(await lookup.get(job({ stepId: 43 }))).toEqual({ tone: 'formal' })
      expect(warnings()).toHaveLength(2)
      expect(await s.jobLookup().get(job())).toBeUndefined()
      expect(warnings()).toHaveLength(2)
    })
  })
})
