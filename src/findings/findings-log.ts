// The findings log: per string and target language, the latest outcome a pipeline reported and
// its findings, so that "why was string 1234 sent back?" has an answer. Kept in the `findings`
// store namespace:
//   s:<stringId>   the string's entries, one per organization, project and language (newest first)
//   k:<hash(key)>  the string ids that carried this key, for search by key
// Every write sets a time to live of FINDINGS_RETENTION_DAYS; sweep() removes what expired and, past
// FINDINGS_MAX strings, the oldest. Entries also remember the issues the worker raised (issue-sender).
// Read-modify-writes of one string are serialized in this process; between instances the last
// writer wins (the log is an explanation, not the record of what was reported).
import { createHash } from 'node:crypto'
import type Keyv from 'keyv'
import type { FindingRecord } from './finding-records.js'

export interface RaisedIssue {
  id: number
  /** Hash of the findings the issue names. */
  hash: string
  status: 'unresolved' | 'resolved'
  at: string
}

export interface EntryRef {
  domain: string
  projectId: number
  languageId: string
  stringId: number
}

export interface FindingsEntry extends EntryRef {
  /** When the outcome was reported (ISO). */
  at: string
  organizationId: string
  stepId: number
  key: string
  pipeline: string
  /** The reported output port ('' when parked). */
  outcome: string
  /** The pipeline's output name, null when parked. */
  output: string | null
  /** The string was sent back (an output of the pipeline's `issues`). */
  sentBack: boolean
  findings: FindingRecord[]
  /** Hash of the findings an issue names, when the string was sent back. */
  hash?: string
  /** Issues this worker raised on the string in this language; absent when it never looked. */
  issues?: RaisedIssue[]
}

export interface FindingsLogOptions {
  retentionMs: number
  /** Strings kept at most (sweep() removes the oldest beyond). */
  maxStrings: number
  /** Entries (organization x project x language) kept per string id. */
  perString?: number
  /** String ids kept per key. */
  perKey?: number
}

interface StringDoc { entries: FindingsEntry[] }
interface KeyDoc { key: string; ids: number[] }

const sameRef = (a: EntryRef, b: EntryRef) => a.domain === b.domain && a.projectId === b.projectId && a.languageId === b.languageId && a.stringId === b.stringId
const keyDocKey = (key: string) => `k:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`

export class FindingsLog {
  private readonly chains = new Map<string, Promise<unknown>>()
  private readonly indexed = new Set<string>()
  private readonly perString: number
  private readonly perKey: number

  constructor(private readonly store: Keyv, private readonly options: FindingsLogOptions) {
    this.perString = options.perString ?? 100
    this.perKey = options.perKey ?? 50
  }

  /** Run `fn` after every earlier write of the same store key in this process. */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.chains.get(key) ?? Promise.resolve()
    const run = before.then(fn, fn)
    const tail = run.catch(() => undefined)
    this.chains.set(key, tail)
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key)
    })
    return run
  }

  /** Change one entry; `fn` gets the current entry (or undefined) and returns the new one (undefined: no change). */
  update(ref: EntryRef, fn: (entry: FindingsEntry | undefined) => FindingsEntry | undefined): Promise<FindingsEntry | undefined> {
    const docKey = `s:${ref.stringId}`
    return this.serial(docKey, async () => {
      const doc = ((await this.store.get(docKey)) as StringDoc | undefined) ?? { entries: [] }
      const current = doc.entries.find((e) => sameRef(e, ref))
      const next = fn(current)
      if (!next) return current
      const entries = [next, ...doc.entries.filter((e) => !sameRef(e, ref))].slice(0, this.perString)
      await this.store.set(docKey, { entries } satisfies StringDoc, this.options.retentionMs)
      return next
    })
  }

  /** The latest outcome of a string in a language; the issues remembered for it are kept. */
  async record(entry: Omit<FindingsEntry, 'issues'>): Promise<FindingsEntry | undefined> {
    const saved = await this.update(entry, (current) => ({ ...entry, ...(current?.issues ? { issues: current.issues } : {}) }))
    if (entry.key) await this.index(entry.key, entry.stringId)
    return saved
  }

  private async index(key: string, stringId: number): Promise<void> {
    const memo = `${stringId}|${key}`
    if (this.indexed.has(memo)) return
    const docKey = keyDocKey(key)
    await this.serial(docKey, async () => {
      const doc = ((await this.store.get(docKey)) as KeyDoc | undefined) ?? { key, ids: [] }
      if (!doc.ids.includes(stringId)) await this.store.set(docKey, { key, ids: [stringId, ...doc.ids].slice(0, this.perKey) } satisfies KeyDoc, this.options.retentionMs)
    })
    // Remembered for a while so that a string reported again costs no index write.
    if (this.indexed.size >= 10_000) this.indexed.clear()
    this.indexed.add(memo)
  }

  async get(ref: EntryRef): Promise<FindingsEntry | undefined> {
    const doc = (await this.store.get(`s:${ref.stringId}`)) as StringDoc | undefined
    return doc?.entries.find((e) => sameRef(e, ref))
  }

  /** Entries of a string id, of a key, or both (newest first). */
  async search(q: { stringId?: number; key?: string; languageId?: string; limit?: number }): Promise<FindingsEntry[]> {
    const ids = new Set<number>()
    if (q.stringId !== undefined) ids.add(q.stringId)
    if (q.key) {
      const doc = (await this.store.get(keyDocKey(q.key))) as KeyDoc | undefined
      for (const id of doc?.key === q.key ? doc.ids : []) if (q.stringId === undefined || id === q.stringId) ids.add(id)
      if (q.stringId !== undefined && !doc?.ids.includes(q.stringId)) ids.delete(q.stringId)
    }
    const out: FindingsEntry[] = []
    for (const id of ids) {
      const doc = (await this.store.get(`s:${id}`)) as StringDoc | undefined
      for (const e of doc?.entries ?? []) {
        if (q.key && e.key !== q.key) continue
        if (q.languageId && e.languageId !== q.languageId) continue
        out.push(e)
      }
    }
    out.sort((a, b) => b.at.localeCompare(a.at))
    return out.slice(0, q.limit ?? 200)
  }

  /**
   * Remove what outlived the retention (the store's iteration drops expired keys) and, beyond
   * `maxStrings`, the strings reported longest ago. Stores that can't be iterated rely on the
   * time to live alone.
   */
  async sweep(): Promise<{ strings: number; removed: number }> {
    const iterator = this.store.iterator?.(undefined)
    if (!iterator) return { strings: 0, removed: 0 }
    const strings: Array<{ key: string; at: string }> = []
    for await (const [rawKey, value] of iterator as AsyncIterable<[string, unknown]>) {
      const key = String(rawKey).replace(/^[^:]*findings:/, '')
      if (!key.startsWith('s:')) continue
      const at = (value as StringDoc | undefined)?.entries?.[0]?.at ?? ''
      strings.push({ key, at })
    }
    let removed = 0
    if (strings.length > this.options.maxStrings) {
      strings.sort((a, b) => a.at.localeCompare(b.at))
      for (const s of strings.slice(0, strings.length - this.options.maxStrings)) {
        await this.serial(s.key, () => this.store.delete(s.key))
        removed++
      }
    }
    return { strings: strings.length - removed, removed }
  }

  /** Wait for every write under way. */
  async flush(): Promise<void> {
    while (this.chains.size) await Promise.allSettled([...this.chains.values()])
  }
}
