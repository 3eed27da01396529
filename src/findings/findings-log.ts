// The findings log: per string and target language, the latest outcome a pipeline reported and
// its findings, so that "why was string 1234 sent back?" has an answer. Kept in the `findings`
// store namespace:
//   s:<stringId>   the string's entries, one per organization, project and language (newest first)
//   k:<hash(key)>  the string ids that carried this key, for search by key
// Every write sets a time to live of FINDINGS_RETENTION_DAYS; sweep() removes what expired and, past
// FINDINGS_MAX strings, the oldest. Entries also remember the issues the worker raised (issue-sender).
// Outcomes are coalesced: records arriving within `lingerMs` (or 500 of them) are written together,
// in one statement where the store can (SQLite: one commit instead of two per string, which cost
// ~4 ms each and competed with the journal for the write lock). Writes of this process
// run one at a time; between instances the last writer wins (the log is an explanation, not the
// record of what was reported).
import { createHash } from 'node:crypto'
import type Keyv from 'keyv'
import type { FindingRecord } from '../protocol/findings.js'

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
  /** The outcome resolves the worker's issues on the string (a pipeline with `issues`, not sent back, not parked). */
  resolves?: boolean
  findings: FindingRecord[]
  /** Hash of the findings an issue names, when the string was sent back. */
  hash?: string
  /** Issues this worker raised on the string in this language; absent when it never looked. */
  issues?: RaisedIssue[]
  /**
   * Written before every POST raising an issue on the string (`<ISO time>#<random tag>`; stamped
   * anew if the POST's answer is lost): the service may hold an issue of this worker's that
   * `issues` does not list. Whoever reads the entry next (a retry, a later raise, the string's
   * pass) looks its issues up at the service before it trusts `issues`. Cleared when the new issue
   * is remembered, when the POST was surely refused, or by a look-up once the POST can no longer
   * land (issue-sender.ts, `lateLandingMs`).
   */
  unsure?: string
}

export interface FindingsLogOptions {
  retentionMs: number
  /** How long records wait to be written together (ms; default 100). */
  lingerMs?: number
  /** Write many keys at once (the store's), with the time to live given. */
  setMany?(entries: Array<{ key: string; value: unknown }>, ttlMs: number): Promise<void>
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

/** Records handed in together (one string, or a run's strings): one promise for all of them. */
interface Pending { entries: Array<Omit<FindingsEntry, 'issues'>>; resolve(saved: FindingsEntry[]): void; reject(error: unknown): void }

const MAX_BATCH = 500

/**
 * When a string was last reported (ms): the newest of its entries (an update of one entry's issues
 * moves it to the front without changing its time); a document without a time counts as the oldest.
 */
function reportedAt(entries: FindingsEntry[] | undefined): number {
  let newest = -Infinity
  for (const e of entries ?? []) {
    const t = Date.parse(e.at)
    if (t > newest) newest = t
  }
  return newest
}

/** How many values of a sorted array are below `x`. */
function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! < x) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class FindingsLog {
  /** Every write of this process, one after the other. */
  private chain: Promise<unknown> = Promise.resolve()
  private writes = 0
  private pending: Pending[] = []
  /** Records in `pending`. */
  private pendingRecords = 0
  private timer?: NodeJS.Timeout
  private readonly indexed = new Set<string>()
  private readonly perString: number
  private readonly perKey: number

  constructor(private readonly store: Keyv, private readonly options: FindingsLogOptions) {
    this.perString = options.perString ?? 100
    this.perKey = options.perKey ?? 50
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    this.writes++
    const run = this.chain.then(fn, fn)
    this.chain = run.catch(() => undefined).finally(() => this.writes--)
    return run
  }

  private async getMany<T>(keys: string[]): Promise<Array<T | undefined>> {
    if (!keys.length) return []
    return (await this.store.get(keys)) as Array<T | undefined>
  }

  /** Change one entry; `fn` gets the current entry (or undefined) and returns the new one (undefined: no change). */
  update(ref: EntryRef, fn: (entry: FindingsEntry | undefined) => FindingsEntry | undefined): Promise<FindingsEntry | undefined> {
    const docKey = `s:${ref.stringId}`
    return this.serial(async () => {
      const doc = ((await this.store.get(docKey)) as StringDoc | undefined) ?? { entries: [] }
      const current = doc.entries.find((e) => sameRef(e, ref))
      const next = fn(current)
      if (!next) return current
      const entries = [next, ...doc.entries.filter((e) => !sameRef(e, ref))].slice(0, this.perString)
      await this.store.set(docKey, { entries } satisfies StringDoc, this.options.retentionMs)
      return next
    })
  }

  /**
   * The latest outcome of a string in a language; the issues remembered for it are kept. Resolves
   * with the entry as written, once it is (with the others that arrived meanwhile).
   */
  record(entry: Omit<FindingsEntry, 'issues'>): Promise<FindingsEntry> {
    return this.recordMany([entry]).then((saved) => saved[0]!)
  }

  /** `record` for several strings at once (a run's): one promise, resolved with each entry as written. */
  recordMany(entries: Array<Omit<FindingsEntry, 'issues'>>): Promise<FindingsEntry[]> {
    if (!entries.length) return Promise.resolve([])
    return new Promise<FindingsEntry[]>((resolve, reject) => {
      this.pending.push({ entries, resolve, reject })
      this.pendingRecords += entries.length
      if (this.pendingRecords >= MAX_BATCH) this.writePending()
      else this.timer ??= setTimeout(() => this.writePending(), this.options.lingerMs ?? 100)
    })
  }

  private writePending(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    const groups = this.pending.splice(0)
    this.pendingRecords = 0
    if (!groups.length) return
    void this.serial(() => this.writeBatch(groups.flatMap((g) => g.entries))).then(
      (saved) => {
        let at = 0
        for (const g of groups) {
          g.resolve(saved.slice(at, at + g.entries.length))
          at += g.entries.length
        }
      },
      (error) => { for (const g of groups) g.reject(error) },
    )
  }

  private async writeBatch(records: Array<Omit<FindingsEntry, 'issues'>>): Promise<FindingsEntry[]> {
    const docKeys = [...new Set(records.map((r) => `s:${r.stringId}`))]
    const indexFor = new Map<string, Set<number>>()
    for (const r of records) {
      if (!r.key || this.indexed.has(`${r.stringId}|${r.key}`)) continue
      const ids = indexFor.get(r.key) ?? new Set<number>()
      ids.add(r.stringId)
      indexFor.set(r.key, ids)
    }
    const keys = [...indexFor.keys()]
    const [docs, keyDocs] = await Promise.all([this.getMany<StringDoc>(docKeys), this.getMany<KeyDoc>(keys.map(keyDocKey))])
    const byKey = new Map(docKeys.map((k, i) => [k, docs[i] ?? { entries: [] }]))
    const saved = records.map((r) => {
      const doc = byKey.get(`s:${r.stringId}`)!
      const current = doc.entries.find((e) => sameRef(e, r))
      // What the issue sender knows (or knows it does not know) outlives the outcome it replaces.
      const next: FindingsEntry = { ...r, ...(current?.issues ? { issues: current.issues } : {}), ...(current?.unsure ? { unsure: current.unsure } : {}) }
      doc.entries = [next, ...doc.entries.filter((e) => !sameRef(e, r))].slice(0, this.perString)
      return next
    })
    const writes: Array<{ key: string; value: unknown }> = [...byKey].map(([key, value]) => ({ key, value }))
    keys.forEach((key, i) => {
      const doc = keyDocs[i] ?? { key, ids: [] }
      const fresh = [...indexFor.get(key)!].filter((id) => !doc.ids.includes(id))
      if (fresh.length) writes.push({ key: keyDocKey(key), value: { key, ids: [...fresh, ...doc.ids].slice(0, this.perKey) } satisfies KeyDoc })
    })
    if (this.options.setMany) await this.options.setMany(writes, this.options.retentionMs)
    else for (const w of writes) await this.store.set(w.key, w.value, this.options.retentionMs)
    // Remembered for a while so that a string reported again costs no index write.
    if (this.indexed.size >= 10_000) this.indexed.clear()
    for (const [key, ids] of indexFor) for (const id of ids) this.indexed.add(`${id}|${key}`)
    return saved
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
   * time to live alone. With `owed`, also answers the entries it picks (the issue sender's
   * catch-up), at most `maxOwed` of them, and none of a string the sweep removed; what `owed`
   * throws counts as not picked.
   */
  async sweep(owed?: (entry: FindingsEntry) => boolean, maxOwed = 10_000): Promise<{ strings: number; removed: number; owed: FindingsEntry[] }> {
    if (!this.store.iterator) return { strings: 0, removed: 0, owed: [] }
    // Eight bytes per string (when each was last reported) rather than its key and time as
    // objects: the log can hold hundreds of thousands of strings between two sweeps.
    let times = new Float64Array(1024)
    let strings = 0
    const picked: Array<{ key: string; entry: FindingsEntry }> = []
    for await (const [key, entries] of this.stringDocs()) {
      if (strings === times.length) {
        const grown = new Float64Array(strings * 2)
        grown.set(times)
        times = grown
      }
      times[strings++] = reportedAt(entries)
      if (!owed || !entries) continue
      for (const entry of entries) {
        if (picked.length >= maxOwed) break
        try {
          if (owed(entry)) picked.push({ key, entry })
        } catch {
          // One entry the filter cannot read is not a reason to stop sweeping.
        }
      }
    }
    const excess = strings - this.options.maxStrings
    if (excess <= 0) return { strings, removed: 0, owed: picked.map((p) => p.entry) }
    // The `excess` reported longest ago: those before the cut, and as many at it as make up the count.
    const sorted = times.slice(0, strings).sort()
    const cut = sorted[excess - 1]!
    let atCut = excess - lowerBound(sorted, cut)
    // A Set: some stores' iteration (Redis SCAN) may name a key twice.
    const old = new Set<string>()
    for await (const [key, entries] of this.stringDocs()) {
      if (old.size >= excess) break
      if (old.has(key)) continue
      const t = reportedAt(entries)
      if (t < cut || (t === cut && atCut-- > 0)) old.add(key)
    }
    await this.serial(async () => {
      for (const key of old) await this.store.delete(key)
    })
    return { strings: strings - old.size, removed: old.size, owed: picked.filter((p) => !old.has(p.key)).map((p) => p.entry) }
  }

  /** Every string's document in the store, as its key (`s:<id>`) and entries. */
  private async *stringDocs(): AsyncGenerator<[string, FindingsEntry[] | undefined]> {
    for await (const [rawKey, value] of this.store.iterator!(undefined) as AsyncIterable<[string, unknown]>) {
      const key = String(rawKey).replace(/^[^:]*findings:/, '')
      if (!key.startsWith('s:')) continue
      const entries = (value as StringDoc | undefined)?.entries
      yield [key, Array.isArray(entries) ? entries : undefined]
    }
  }

  /** Write what waits now, and wait for every write under way. */
  async flush(): Promise<void> {
    this.writePending()
    while (this.writes > 0) await this.chain
  }
}
