// The findings log: per string and target language, the latest outcome a pipeline reported and
// its findings, so that "why was string 1234 sent back?" has an answer. Kept in the `findings`
// store namespace:
//   e:<stringId>:<hash(domain, project, language)>   one entry: the outcome in one language
// A string's entries are found by their keys' common beginning (the store's `scan`); a search by
// the string's key reads the namespace once, the database passing over the entries that do not
// hold its text (entriesOfKey()). Logs written before kept an index document per key (`k:<hash(key)>`,
// the string ids that carried it): read, changed and written again for every new string, it cost
// more than the entries themselves, for a search an operator makes now and then. It is no longer
// written or read, and sweep() deletes what is left of it. Each outcome
// reads and writes its own entry only: when a string's entries shared one document, each outcome
// read and wrote all of them (a string in 30 languages: 30 entries for each one's outcome). Logs
// written before kept that document (`s:<stringId>`, `{ entries }`); it is read as it is, and
// split into entries the first time one of its strings is written.
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
import type { ScanFilter } from '../store/create-stores.js'

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
  /**
   * The keys that begin with one of `prefixes`, with their values (expired ones left out): the
   * store's range queries (SQLite, PostgreSQL); without, the whole namespace is read once.
   */
  scan?(prefixes: string[], filter?: ScanFilter): Promise<Array<[string, unknown]>>
  /** Strings kept at most (sweep() removes the oldest beyond). */
  maxStrings: number
}

/** A string's document of the earlier layout: every entry of the string in it. */
interface OldStringDoc { entries: FindingsEntry[] }

const sameRef = (a: EntryRef, b: EntryRef) => a.domain === b.domain && a.projectId === b.projectId && a.languageId === b.languageId && a.stringId === b.stringId
/** Scopes' hashes kept at most (a scope is a domain, project and language: a few per organization). */
export const SCOPE_HASHES_KEPT = 10_000
const scopeHashes = new Map<string, string>()
/** The hashed part of an entry's key: its domain, project and language, hashed once per scope (not per outcome). */
function scopeHashOf(ref: EntryRef): string {
  const scope = `${ref.domain}\n${ref.projectId}\n${ref.languageId}`
  let hash = scopeHashes.get(scope)
  if (hash === undefined) {
    if (scopeHashes.size >= SCOPE_HASHES_KEPT) scopeHashes.clear()
    hash = createHash('sha256').update(scope).digest('hex').slice(0, 24)
    scopeHashes.set(scope, hash)
  }
  return hash
}
/** An entry's key: the string id, then its domain, project and language hashed (a key's length is bounded in PostgreSQL). */
export const entryKey = (ref: EntryRef) => `e:${ref.stringId}:${scopeHashOf(ref)}`
const oldKey = (stringId: number) => `s:${stringId}`
const oldEntries = (doc: unknown): FindingsEntry[] => {
  const entries = (doc as OldStringDoc | undefined)?.entries
  return Array.isArray(entries) ? entries : []
}
/**
 * Of an entry under its own key and the same entry in a document of the earlier layout (either may
 * be absent): the one reported later, with the issues and mark the other remembers if it has none
 * (an instance of the earlier version writing the document does not see the entries split off).
 */
function newer(a: FindingsEntry | undefined, b: FindingsEntry | undefined): FindingsEntry | undefined {
  if (!a || !b) return a ?? b
  const [win, other] = Date.parse(b.at) > Date.parse(a.at) ? [b, a] : [a, b]
  if ((win.issues || !other.issues) && (win.unsure || !other.unsure)) return win
  return { ...win, ...(!win.issues && other.issues ? { issues: other.issues } : {}), ...(!win.unsure && other.unsure ? { unsure: other.unsure } : {}) }
}
/** The string id a stored key names (`e:<id>:...` or `s:<id>`), or undefined for another key. */
function stringIdOf(key: string): number | undefined {
  if (!key.startsWith('e:') && !key.startsWith('s:')) return undefined
  const end = key.indexOf(':', 2)
  const id = Number(key.slice(2, end < 0 ? undefined : end))
  return key.length > 2 && Number.isInteger(id) ? id : undefined
}

/** Newest first, by the ISO time an entry was reported (made once: a comparator per call is compiled again after each full GC). */
const newestFirst = (a: { at: string }, b: { at: string }) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)

export interface RecordOptions {
  /**
   * 'replace-only': a clean pass (isCleanPass) replaces the string's entry in its language and
   * makes none; its place in the answer is undefined when there was none. Default 'record'.
   */
  cleanPasses?: 'record' | 'replace-only'
}

/** Records handed in together (one string, or a run's strings): one promise for all of them. */
interface Pending { entries: Array<Omit<FindingsEntry, 'issues'>>; replaceOnly: boolean; resolve(saved: Array<FindingsEntry | undefined>): void; reject(error: unknown): void }

const MAX_BATCH = 500
/** Reads of single entries answered by one read of the store (two keys each). */
const MAX_READS = 256

interface PendingRead {
  ref: EntryRef
  resolve(entry: FindingsEntry | undefined): void
  reject(error: unknown): void
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

/**
 * A change to one entry: `make` gets the current entry (or undefined) and the change's `ref`, and
 * returns the new one (undefined: no change).
 */
interface EntryChange<R extends EntryRef = EntryRef> { ref: R; make: (current: FindingsEntry | undefined, ref: R) => FindingsEntry | undefined }

// The functions a batch's writes call per string are made once (not a callback, or a `make`, made
// for each string or each batch): see statusOp in platform/reporter.ts.

/** An outcome replaces the entry; what the issue sender knows (or knows it does not know) outlives it. */
const keepIssues = (current: FindingsEntry | undefined, r: Omit<FindingsEntry, 'issues'>): FindingsEntry => ({ ...r, ...(current?.issues ? { issues: current.issues } : {}), ...(current?.unsure ? { unsure: current.unsure } : {}) })
const outcomeChange = (r: Omit<FindingsEntry, 'issues'>): EntryChange<Omit<FindingsEntry, 'issues'>> => ({ ref: r, make: keepIssues })
/** A clean pass replaces the entry there is, and makes none (see isCleanPass). */
const replaceOnly = (current: FindingsEntry | undefined, r: Omit<FindingsEntry, 'issues'>): FindingsEntry | undefined => (current ? keepIssues(current, r) : undefined)
const cleanPassChange = (r: Omit<FindingsEntry, 'issues'>): EntryChange<Omit<FindingsEntry, 'issues'>> => ({ ref: r, make: replaceOnly })

/**
 * An outcome with nothing to explain: no finding, an output (not parked), not sent back. Written
 * with `cleanPasses: 'replace-only'` it replaces the string's entry in that language when there
 * is one (the entry must not go on saying why it was sent back) and makes none where there is none.
 */
export const isCleanPass = (r: Pick<FindingsEntry, 'findings' | 'output' | 'sentBack'>): boolean => r.findings.length === 0 && r.output !== null && !r.sentBack

/**
 * The longest part of a key that every JSON writer stores as it is (printable ASCII but `"` and
 * `\`): what a search by key asks the database to find in an entry's text before it is parsed.
 * '' (every entry read) for a key with none.
 */
export function textOfKeyAsStored(key: string): string {
  let best = ''
  for (const run of key.split(/[^\x20\x21\x23-\x5b\x5d-\x7e]+/)) if (run.length > best.length) best = run
  return best
}

export class FindingsLog {
  /** Every write of this process, one after the other. */
  private chain: Promise<unknown> = Promise.resolve()
  private writes = 0
  private pending: Pending[] = []
  /** Records in `pending`. */
  private pendingRecords = 0
  /** Reads of single entries waiting for the next turn of the event loop (get()). */
  private reads: PendingRead[] = []
  private timer?: NodeJS.Timeout

  constructor(private readonly store: Keyv, private readonly options: FindingsLogOptions) {}

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
    return this.serial(async () => {
      let current: FindingsEntry | undefined
      const [next] = await this.change([{ ref, make: (e) => ((current = e), fn(e)) }])
      return next ?? current
    })
  }

  /**
   * The latest outcome of a string in a language; the issues remembered for it are kept. Resolves
   * with the entry as written, once it is (with the others that arrived meanwhile).
   */
  record(entry: Omit<FindingsEntry, 'issues'>): Promise<FindingsEntry> {
    return this.recordMany([entry]).then((saved) => saved[0]!)
  }

  /**
   * `record` for several strings at once (a run's): one promise, resolved with each entry as
   * written (undefined for a clean pass that made none, with `cleanPasses: 'replace-only'`).
   */
  recordMany(entries: Array<Omit<FindingsEntry, 'issues'>>): Promise<FindingsEntry[]>
  recordMany(entries: Array<Omit<FindingsEntry, 'issues'>>, options: RecordOptions): Promise<Array<FindingsEntry | undefined>>
  recordMany(entries: Array<Omit<FindingsEntry, 'issues'>>, options: RecordOptions = {}): Promise<Array<FindingsEntry | undefined>> {
    if (!entries.length) return Promise.resolve([])
    const replaceOnly = options.cleanPasses === 'replace-only'
    return new Promise<Array<FindingsEntry | undefined>>((resolve, reject) => {
      this.pending.push({ entries, replaceOnly, resolve, reject })
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
    void this.serial(() => this.writeBatch(groups)).then(
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

  private writeBatch(groups: Pending[]): Promise<Array<FindingsEntry | undefined>> {
    const changes: Array<EntryChange<Omit<FindingsEntry, 'issues'>>> = []
    for (const g of groups) for (const r of g.entries) changes.push(g.replaceOnly && isCleanPass(r) ? cleanPassChange(r) : outcomeChange(r))
    return this.change(changes)
  }

  /**
   * Apply changes to entries (in order: a later change of the same entry sees the earlier one's
   * result) and write them in one write where the store can. A string still in a document of the
   * earlier layout is split into entries. Run inside serial().
   */
  private async change<R extends EntryRef>(changes: Array<EntryChange<R>>): Promise<Array<FindingsEntry | undefined>> {
    const eKeys: string[] = []
    const stringIds = new Set<number>()
    for (const c of changes) {
      eKeys.push(entryKey(c.ref))
      stringIds.add(c.ref.stringId)
    }
    const unique = [...new Set(eKeys)]
    const ids = [...stringIds]
    // Each entry, and its string's document of the earlier layout (absent once split: a key that is
    // not there costs the store little).
    const stored = await this.getMany<unknown>([...unique, ...ids.map(oldKey)])
    /** What each key holds in the store, and the entry as it stands (both layouts merged). */
    const own = new Map<string, FindingsEntry | undefined>()
    for (let i = 0; i < unique.length; i++) own.set(unique[i]!, stored[i] as FindingsEntry | undefined)
    const current = new Map(own)
    /** Per string of the earlier layout: its entries by key. */
    const olds = new Map<number, Map<string, FindingsEntry>>()
    for (let i = 0; i < ids.length; i++) {
      const entries = oldEntries(stored[unique.length + i])
      if (!stored[unique.length + i]) continue
      const byKey = new Map<string, FindingsEntry>()
      // Newest first in the document: the first of a ref is its latest.
      for (const e of entries) if (!byKey.has(entryKey(e))) byKey.set(entryKey(e), e)
      olds.set(ids[i]!, byKey)
    }
    if (olds.size) {
      // Entries of those strings already under keys of their own (an instance of this version
      // wrote them while one of an earlier version still wrote the document): the newer counts.
      const others = [...olds.values()].flatMap((m) => [...m.keys()]).filter((k) => !own.has(k))
      const found = await this.getMany<FindingsEntry>(others)
      others.forEach((k, i) => own.set(k, found[i]))
      for (const byKey of olds.values()) for (const [k, e] of byKey) current.set(k, newer(own.get(k), e))
    }
    const out: Array<FindingsEntry | undefined> = []
    const written = new Map<string, FindingsEntry>()
    const split = new Set<number>()
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!
      const k = eKeys[i]!
      const next = c.make(written.get(k) ?? current.get(k), c.ref)
      out.push(next)
      if (!next) continue
      written.set(k, next)
      if (olds.has(c.ref.stringId)) split.add(c.ref.stringId)
    }
    const writes: Array<{ key: string; value: unknown }> = []
    for (const [key, value] of written) writes.push({ key, value })
    // A document of the earlier layout that a change wrote into: each of its other entries goes to
    // a key of its own (merged with what that key held), and the document goes.
    for (const id of split) {
      for (const k of olds.get(id)!.keys()) {
        const merged = current.get(k)
        if (!written.has(k) && merged && merged !== own.get(k)) writes.push({ key: k, value: merged })
      }
    }
    if (!writes.length) return out
    const { retentionMs } = this.options
    if (this.options.setMany) await this.options.setMany(writes, retentionMs)
    else for (const w of writes) await this.store.set(w.key, w.value, retentionMs)
    for (const id of split) await this.store.delete(oldKey(id))
    return out
  }

  /**
   * The entry of a string in a language (either layout). Reads asked for in one turn of the event
   * loop (the issue sender's tasks read one each) go to the store as one read, up to
   * MAX_READS a read; each still sees every write that ended before it was asked for.
   */
  get(ref: EntryRef): Promise<FindingsEntry | undefined> {
    return new Promise((resolve, reject) => {
      if (this.reads.push({ ref, resolve, reject }) === 1) setImmediate(() => this.readPending())
    })
  }

  private readPending(): void {
    const reads = this.reads.splice(0)
    for (let i = 0; i < reads.length; i += MAX_READS) void this.readMany(reads.slice(i, i + MAX_READS))
  }

  private async readMany(reads: PendingRead[]): Promise<void> {
    const keys: string[] = []
    const at = new Map<string, number>()
    const indexOf = (key: string) => {
      let i = at.get(key)
      if (i === undefined) at.set(key, (i = keys.push(key) - 1))
      return i
    }
    const wanted = reads.map(({ ref }) => [indexOf(entryKey(ref)), indexOf(oldKey(ref.stringId))] as const)
    let values: unknown[]
    try {
      values = await this.getMany<unknown>(keys)
    } catch (error) {
      for (const r of reads) r.reject(error)
      return
    }
    reads.forEach(({ ref, resolve }, i) => {
      const [entry, doc] = wanted[i]!
      resolve(newer(values[entry] as FindingsEntry | undefined, oldEntries(values[doc]).find((e) => sameRef(e, ref))))
    })
  }

  /** The entries of strings (either layout), by string id: one range query per id, or one read of the namespace. */
  private async entriesOf(ids: number[]): Promise<Map<number, FindingsEntry[]>> {
    const byId = new Map<number, FindingsEntry[]>(ids.map((id) => [id, []]))
    if (!ids.length) return byId
    const prefixes = ids.map((id) => `e:${id}:`)
    const found = this.options.scan ? await this.options.scan(prefixes) : await this.scanAll(prefixes)
    for (const [key, value] of found) {
      const id = stringIdOf(key)
      if (id !== undefined && value && typeof value === 'object') byId.get(id)?.push(value as FindingsEntry)
    }
    const docs = await this.getMany<unknown>(ids.map(oldKey))
    ids.forEach((id, i) => {
      const entries = byId.get(id)!
      for (const e of oldEntries(docs[i])) {
        const at = entries.findIndex((n) => sameRef(n, e))
        if (at < 0) entries.push(e)
        else entries[at] = newer(entries[at], e)!
      }
    })
    return byId
  }

  /** `scan` by reading the whole namespace once, for stores without a range query. */
  private async scanAll(prefixes: string[], keep?: ScanFilter['keep']): Promise<Array<[string, unknown]>> {
    const out: Array<[string, unknown]> = []
    if (!this.store.iterator) return out
    for await (const [key, , value] of this.keys()) if (prefixes.some((p) => key.startsWith(p)) && (!keep || keep(key, value))) out.push([key, value])
    return out
  }

  /**
   * The newest `limit` entries of a key (in a language, if given), either layout, as get() has
   * them: one pass over the namespace, where the store can with the entries that do not hold the
   * key's text (textOfKeyAsStored) left in the database, a page at a time. Memory holds at most
   * twice `bound` entries (and the documents of the earlier layout that name the key); `cut` says
   * whether entries of the key were left out for it.
   */
  private async entriesOfKey(key: string, languageId: string | undefined, bound: number): Promise<{ entries: FindingsEntry[]; cut: boolean }> {
    const wanted = (e: unknown) => (e as FindingsEntry | undefined)?.key === key && (!languageId || (e as FindingsEntry).languageId === languageId)
    // By stored key: an iteration that names a row twice (Redis's SCAN may) keeps it once.
    let newest = new Map<string, FindingsEntry>()
    let cut = false
    const trim = () => {
      if (newest.size <= bound) return
      cut = true
      newest = new Map([...newest].sort((a, b) => newestFirst(a[1], b[1])).slice(0, bound))
    }
    const docs = new Map<number, unknown>()
    const keep = (k: string, value: unknown) => {
      if (k.startsWith('e:')) {
        if (wanted(value)) newest.set(k, value as FindingsEntry)
        if (newest.size >= 2 * bound) trim()
      } else if (oldEntries(value).some(wanted)) docs.set(stringIdOf(k)!, value)
      // Kept here, not in the scan's answer.
      return false
    }
    const prefixes = ['e:', 's:']
    // A scan that honours the filter answers nothing (keep() took what it wanted); one that does
    // not, every row: those go through keep() here.
    const found = this.options.scan ? await this.options.scan(prefixes, { contains: textOfKeyAsStored(key), keep }) : await this.scanAll(prefixes, keep)
    for (const [k, value] of found) keep(k, value)
    trim()
    // As get() has them: the newer of a string's own entry and the same one in its document of the
    // earlier layout, whichever key either carries (search() looks at the key again).
    const own = new Map([...newest.values()].map((e) => [entryKey(e), e]))
    const ids = [...new Set([...newest.values()].map((e) => e.stringId))].filter((id) => !docs.has(id))
    const more = await this.getMany<unknown>(ids.map(oldKey))
    ids.forEach((id, i) => { if (more[i]) docs.set(id, more[i]) })
    const inDocs = [...docs.values()].flatMap(oldEntries).filter((e) => own.has(entryKey(e)) || wanted(e))
    const missing = [...new Set(inDocs.map(entryKey))].filter((k) => !own.has(k))
    const fetched = await this.getMany<FindingsEntry>(missing)
    missing.forEach((k, i) => { if (fetched[i]) own.set(k, fetched[i]!) })
    for (const e of inDocs) own.set(entryKey(e), newer(own.get(entryKey(e)), e)!)
    return { entries: [...own.values()], cut }
  }

  /** Entries of a string id, of a key, or both (newest first). */
  async search(q: { stringId?: number; key?: string; languageId?: string; limit?: number }): Promise<FindingsEntry[]> {
    const limit = q.limit ?? 200
    const matching = (entries: FindingsEntry[]) => entries.filter((e) => (!q.key || e.key === q.key) && (!q.languageId || e.languageId === q.languageId)).sort(newestFirst).slice(0, limit)
    if (q.stringId !== undefined) return matching((await this.entriesOf([q.stringId])).get(q.stringId)!)
    if (!q.key) return []
    // An entry kept within the bound may be one a newer entry in its string's document of the
    // earlier layout replaces (another key there): then fewer than `limit` are left although the
    // bound left others out, and the pass is made again with a larger bound, at last none.
    for (const bound of [limit, limit * 8, Number.POSITIVE_INFINITY]) {
      const { entries, cut } = await this.entriesOfKey(q.key, q.languageId, bound)
      const out = matching(entries)
      if (out.length >= limit || !cut) return out
    }
    return []
  }

  /**
   * Remove what outlived the retention (the store's iteration drops expired keys) and, beyond
   * `maxStrings`, the strings reported longest ago (a string's time is its newest entry's). Stores
   * that can't be iterated rely on the time to live alone. With `owed`, also answers the entries it
   * picks (the issue sender's catch-up), at most `maxOwed` of them, and none of a string the sweep
   * removed; what `owed` throws counts as not picked.
   */
  async sweep(owed?: (entry: FindingsEntry) => boolean, maxOwed = 10_000): Promise<{ strings: number; removed: number; owed: FindingsEntry[] }> {
    if (!this.store.iterator) return { strings: 0, removed: 0, owed: [] }
    // Per string, when it was last reported: a slot of a Float64Array (8 bytes) found through a
    // map of string ids. The log can hold hundreds of thousands of strings between two sweeps.
    const slot = new Map<number, number>()
    let times = new Float64Array(1024)
    let picked: FindingsEntry[] = []
    /** Strings with a document of the earlier layout: an entry may be there and under its own key. */
    const inDocs = new Set<number>()
    const seen = (id: number, t: number) => {
      let i = slot.get(id)
      if (i === undefined) {
        i = slot.size
        slot.set(id, i)
        if (i === times.length) {
          const grown = new Float64Array(i * 2)
          grown.set(times)
          times = grown
        }
        times[i] = -Infinity
      }
      if (t > times[i]!) times[i] = t
    }
    const pick = (entry: FindingsEntry) => {
      if (!owed || picked.length >= maxOwed) return
      try {
        if (owed(entry)) picked.push(entry)
      } catch {
        // One entry the filter cannot read is not a reason to stop sweeping.
      }
    }
    // Index documents per key that versions before this one wrote (`k:`): nothing reads them now;
    // deleted as the pass meets them, 500 at a time (every store's iteration pages by key, so
    // rows deleted behind it change nothing ahead), rather than kept until their time to live. A
    // failed delete is left for the next sweep: it must not stop this one.
    const indexDocs: string[] = []
    const dropIndexDocs = () => {
      const keys = indexDocs.splice(0)
      return keys.length ? this.serial(() => this.store.delete(keys)).catch(() => undefined) : undefined
    }
    for await (const [key, id, value] of this.keys(indexDocs)) {
      if (indexDocs.length >= MAX_BATCH) await dropIndexDocs()
      if (id < 0) continue
      if (key.startsWith('e:')) {
        const entry = value as FindingsEntry | undefined
        seen(id, entry ? Date.parse(entry.at) : -Infinity)
        if (entry) pick(entry)
      } else {
        // A document of the old layout: its entries in it. One without a time counts as the oldest.
        seen(id, -Infinity)
        inDocs.add(id)
        for (const entry of oldEntries(value)) {
          seen(id, Date.parse(entry.at))
          pick(entry)
        }
      }
    }
    await dropIndexDocs()
    if (inDocs.size) {
      // An entry in both layouts is answered once, as get() has it (the filter's own judgement is
      // made again by whoever takes the entry up).
      const once = new Set<string>()
      const resolved: FindingsEntry[] = []
      for (const e of picked) {
        if (!inDocs.has(e.stringId)) resolved.push(e)
        else if (!once.has(entryKey(e))) {
          once.add(entryKey(e))
          const now = await this.get(e)
          if (now) resolved.push(now)
        }
      }
      picked = resolved
    }
    const strings = slot.size
    const old = new Set<number>()
    const excess = strings - this.options.maxStrings
    if (excess > 0) {
      // The `excess` reported longest ago: those before the cut, and as many at it as make up the count.
      const sorted = times.slice(0, strings).sort()
      const cut = sorted[excess - 1]!
      let atCut = excess - lowerBound(sorted, cut)
      for (const [id, i] of slot) {
        if (old.size >= excess) break
        const t = times[i]!
        if (t < cut || (t === cut && atCut-- > 0)) old.add(id)
      }
    }
    // The removed strings' entries, found by a second pass (their keys are not kept), deleted 500
    // at a time as the pass goes (a key some stores' iteration names twice is deleted twice). An
    // entry reported since the first pass stays, and so does its string.
    const spared = new Set<number>()
    if (old.size) {
      let doomed: string[] = []
      const drop = async () => {
        const keys = doomed
        doomed = []
        if (keys.length) await this.serial(() => this.store.delete(keys))
      }
      for await (const [key, id, value] of this.keys()) {
        if (!old.has(id)) continue
        const entries = key.startsWith('e:') ? [value as FindingsEntry | undefined] : oldEntries(value)
        if (entries.some((e) => e && Date.parse(e.at) > times[slot.get(id)!]!)) {
          spared.add(id)
          continue
        }
        doomed.push(key)
        if (doomed.length >= MAX_BATCH) await drop()
      }
      await drop()
    }
    const removed = old.size - spared.size
    return { strings: strings - removed, removed, owed: picked.filter((e) => !old.has(e.stringId)) }
  }

  /**
   * Every entry in the store (either layout), as its key (`e:...`, or `s:<id>` for a document of
   * the earlier layout), string id and value; the keys of index documents of earlier versions
   * (`k:...`) go to `indexDocs` when given, and each time it holds MAX_BATCH of them, a turn with
   * the id -1 (and no entry) lets the caller delete them.
   */
  private async *keys(indexDocs?: string[]): AsyncGenerator<[string, number, unknown]> {
    for await (const [rawKey, value] of this.store.iterator!(undefined) as AsyncIterable<[string, unknown]>) {
      const key = String(rawKey).replace(/^[^:]*findings:/, '')
      const id = stringIdOf(key)
      if (id !== undefined) yield [key, id, value]
      else if (indexDocs && key.startsWith('k:') && indexDocs.push(key) >= MAX_BATCH) yield ['', -1, undefined]
    }
  }

  /** Write what waits now, and wait for every write under way. */
  async flush(): Promise<void> {
    this.writePending()
    while (this.writes > 0) await this.chain
  }
}
