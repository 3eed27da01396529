// `switchyard try PIPELINE STRINGS.json [--pretty]`: a dry run of one pipeline on local strings.
// No network except what the plugins themselves do; nothing is reported to the service.
// The pipeline runs as the worker runs it: on a pipeline thread (one), under the worker's time
// budget per check of a string (CHECK_TIME_BUDGET_MS): a check that runs away is stopped and its
// string gets the engine's "check timed out", routed by on-error. Without a built thread module
// (dist/), on this thread with a note, and no budget.
// Output (stdout): a JSON array, one entry per string, in input order:
//   { id, output, findings: [{ check, code, severity, message }] }
// where `id` is the caller's id as given (a string or a number; the position from 1 when absent),
// `output` is the PORT the string would be routed to (the status PATCH value), "" when
// parked; `code` is the finding's stable code (`missing-placeholder`, ...), null when its plugin
// gives none. --pretty prints a table, counts per output and the plugins' metrics instead.
import { readFile } from 'node:fs/promises'
import { buildItem, type ItemSource, type TargetText } from '../engine/build-item.js'
import { readOption } from '../config/load-config.js'
import { formatLocatedError, type RunResult } from '../engine/load-pipelines.js'
import type { Pipeline } from '../engine/pipeline.js'
import { PipelineHost } from '../engine/pipeline-host.js'
import { createPipelinePool, type PipelinePool } from '../engine/pipeline-pool.js'
import { languageFromCode } from '../engine/languages.js'
import type { Item, Language, PluginCache, PluginMetrics, PluralForm } from '../engine/types.js'
import { decodeJobs } from '../queue/job-codec.js'
import { decodeBatchBody } from '../webhooks/decode-batch.js'
import { silentLogger } from '../util/logger.js'
import { memoryCacheFor, processIo, type CliIo } from './cli-io.js'

const USAGE = `usage: switchyard try PIPELINE STRINGS.json [--pretty]
STRINGS.json: a JSON array of { id? (a string or a number, echoed as given), source, translation, sourceLanguage, targetLanguage
(BCP 47 language codes such as "en" and "pt-BR"; both required), key?, context?, maxLength?, settings?, fileType?, filePath?, labelIds?,
isPlural?, plurals? ([{ plural, text }]) }, or a webhook batch body ({ "events": [...] }), read as the worker reads one.
Prints, per string, { id, output, findings: [{ check, code, severity, message }] } where output is the port
("" when parked) and code the finding's stable code (null when its plugin gives none).
`

const MAX_INPUT_BYTES = 64 * 1024 * 1024

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)

export interface TryInput {
  item: Item
  settings: unknown
  /** The caller's id, echoed unchanged in the output (the engine's item id is a number). */
  id: string | number
}

const EXAMPLE_CODE = { sourceLanguage: 'en', targetLanguage: 'fr' } as const

/**
 * Is `code` a BCP 47 language tag (`fr`, `pt-BR`, `sr-Latn`; `_` taken for `-`, as the engine reads
 * a record's locale)? Intl.getCanonicalLocales checks the form only, and takes a language subtag of
 * five to eight letters ("french", "english"), which BCP 47 reserves and no language has.
 */
function isLanguageCode(code: string): boolean {
  try {
    const [tag] = Intl.getCanonicalLocales(code.replaceAll('_', '-'))
    return tag !== undefined && /^[a-z]{2,3}$/.test(new Intl.Locale(tag).language)
  } catch {
    return false
  }
}

/**
 * A language of an entry: a code (`fr`, `pt-BR`) or a language record with its `id`. Required, as
 * the input format says: one missing, empty or of another type was taken as en or fr without a
 * word, and the checks that depend on the language (plurals, punctuation, the AI's prompt) then
 * judged a German translation as a French one. A code that is not BCP 47 ("french") was taken as
 * written, and those checks fell back to the default locale's rules without a word. `n` counts entries from 1.
 */
function language(raw: Obj, field: keyof typeof EXAMPLE_CODE, n: number): Language {
  const v = raw[field]
  if (isObj(v) && typeof v.id === 'string' && v.id) return v as unknown as Language
  const expected = `a language code such as "${EXAMPLE_CODE[field]}" (or a language record with its "id")`
  if (typeof v === 'string' && isLanguageCode(v.trim())) return languageFromCode(v.trim())
  if (typeof v === 'string' && v.trim()) throw new Error(`entry ${n}: "${field}" ${JSON.stringify(v.slice(0, 60))} is not a BCP 47 language code such as "${EXAMPLE_CODE[field]}" or "pt-BR"`)
  if (v === undefined) throw new Error(`entry ${n}: "${field}" is missing: give ${expected}`)
  throw new Error(`entry ${n}: "${field}" must be ${expected}, not ${JSON.stringify(v).slice(0, 60)}`)
}

/**
 * The string events of a webhook batch body as items, through the worker's own decoder: the same
 * validation, and the same fields (a string's key is its `key`, else its `identifier`). Throws with
 * every event the worker would refuse or park.
 */
function itemsFromBatch(body: unknown, context: { log: Item['log']; signal: AbortSignal }): TryInput[] {
  const decoded = decodeBatchBody(body)
  if (!decoded.ok) throw new Error(decoded.message)
  if (decoded.invalid.length) {
    throw new Error(`the worker would not run ${decoded.invalid.length === 1 ? 'this event' : 'these events'} (it parks one that names its string with ""):\n${decoded.invalid.map((e) => `  ${e.reason}`).join('\n')}`)
  }
  const jobs = decodeJobs(decoded.jobs, { organizationId: decoded.organizationId, domain: '', batchId: '' })
  return jobs.map((job) => ({ item: buildItem(job, { settings: {}, ...context }), settings: undefined, id: job.stringId }))
}

/** Strings of a `try` input file as items; throws with a message naming the bad entry. */
export function itemsFromInput(input: unknown, signal: AbortSignal, withTranslation = true): TryInput[] {
  const log = silentLogger()
  if (isObj(input) && 'events' in input) return itemsFromBatch(input, { log, signal })
  if (!Array.isArray(input)) throw new Error('STRINGS.json must be a JSON array of strings or a webhook batch body ({ "events": [...] })')
  return input.map((raw, i) => {
    // Entries are named by position from 1, as an id left out is (and as a person counts them).
    const n = i + 1
    if (!isObj(raw) || typeof raw.source !== 'string') throw new Error(`entry ${n}: must be an object with a "source" text`)
    if (raw.translation !== undefined && typeof raw.translation !== 'string') throw new Error(`entry ${n}: "translation" must be a string`)
    if (raw.id !== undefined && typeof raw.id !== 'string' && typeof raw.id !== 'number') throw new Error(`entry ${n}: "id" must be a string or a number`)
    const plurals = Array.isArray(raw.plurals) ? (raw.plurals as PluralForm[]) : undefined
    const string: ItemSource = {
      // Plugins see a number: the caller's when it is a safe integer, else the position.
      stringId: Number.isSafeInteger(raw.id) ? (raw.id as number) : n,
      projectId: 0, stepId: 0, organizationId: '',
      string: {
        key: typeof raw.key === 'string' ? raw.key : `string.${n}`,
        context: typeof raw.context === 'string' ? raw.context : '',
        maxLength: Number(raw.maxLength) || 0,
        text: raw.source,
        isPlural: typeof raw.isPlural === 'boolean' ? raw.isPlural : false,
        fileType: typeof raw.fileType === 'string' ? raw.fileType : '',
        filePath: typeof raw.filePath === 'string' ? raw.filePath : '',
        labelIds: Array.isArray(raw.labelIds) ? raw.labelIds.filter((n): n is number => typeof n === 'number') : [],
      },
      sourceLanguage: language(raw, 'sourceLanguage', n),
      targetLanguage: language(raw, 'targetLanguage', n),
    }
    // The worker fetches translations only for a pipeline some check of which needs them.
    const translation: TargetText | undefined = !withTranslation ? undefined : typeof raw.translation === 'string' || plurals ? { ...(typeof raw.translation === 'string' ? { text: raw.translation } : {}), ...(plurals ? { plurals } : {}) } : undefined
    return { item: buildItem(string, { translation, settings: {}, log, signal }), settings: raw.settings, id: raw.id ?? n }
  })
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length)
}

/** Counts plugin metrics into `into`. */
function counter(into: Map<string, number>): PluginMetrics {
  return { add(name, value = 1) { into.set(name, (into.get(name) ?? 0) + value) } }
}

const NO_THREAD_NOTE = 'note: the pipeline thread module is missing (run the build); the checks run on the main thread, without CHECK_TIME_BUDGET_MS: a check that never ends holds try up\n'

/**
 * One pipeline thread that runs the pipeline as the worker's do, under the worker's time budget
 * per check of a string (a check that runs away is stopped and its string gets "check timed
 * out"): no spare threads, no long-text lane, at this process's priority. Undefined when the
 * thread module is not built.
 */
function tryPool(host: PipelineHost, io: CliIo, budgetMs: number, cacheFor: (namespace: string) => PluginCache, metrics: PluginMetrics): PipelinePool | undefined {
  return createPipelinePool({
    host, threads: 1, spareThreads: 0, longTextChars: 0, threadNice: 0, budgetMs,
    env: { ...io.env }, logLevel: 'silent', log: silentLogger(), cacheFor, metrics,
  })
}

/** The --pretty report: a table, counts per output and the plugins' metrics. */
function prettyReport(pipeline: Pipeline, inputs: TryInput[], results: RunResult[], metrics: Map<string, number>): string {
  const names = new Map(pipeline.outputs.map((o) => [o.name, o]))
  const lines: string[] = [`${pipeline.name} (${pipeline.key}): ${results.length} string${results.length === 1 ? '' : 's'}`, '']
  const idWidth = Math.max(2, ...inputs.map((inp) => String(inp.id).length))
  lines.push(`${pad('id', idWidth)}  ${pad('output', 24)}  findings`)
  for (const [i, r] of results.entries()) {
    const where = r.output ? `${r.port} (${r.output})` : r.retry ? '"" (retry)' : '"" (parked)'
    const text = inputs[i]!.item.source.replace(/\s+/g, ' ')
    lines.push(`${pad(String(inputs[i]!.id), idWidth)}  ${pad(where, 24)}  ${r.findings.length || '-'}  ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`)
    for (const f of r.findings) lines.push(`${' '.repeat(idWidth + 28)}${f.severity}  ${f.check}${f.code ? ` [${f.code}]` : ''}: ${f.message}`)
  }
  const counts = new Map<string, number>()
  for (const r of results) {
    const label = r.output ? `${names.get(r.output)?.title ?? r.output} -> ${r.port}` : r.retry ? 'to retry ("")' : 'parked ("")'
    counts.set(label, (counts.get(label) ?? 0) + 1)
  }
  lines.push('', 'outputs:')
  for (const [label, n] of counts) lines.push(`  ${pad(label, 30)} ${n}`)
  if (metrics.size) {
    lines.push('', 'plugin metrics:')
    for (const [name, v] of [...metrics].sort()) lines.push(`  ${pad(name, 30)} ${v}`)
  }
  return `${lines.join('\n')}\n`
}

export async function runTry(args: string[], io: CliIo = processIo()): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) { io.stdout.write(USAGE); return 0 }
  const pretty = args.includes('--pretty')
  const rest = args.filter((a) => a !== '--pretty')
  const bad = rest.find((a) => a.startsWith('-'))
  if (bad || rest.length !== 2) { io.stderr.write(`${bad ? `unknown option ${bad}\n` : ''}${USAGE}`); return 2 }
  const [pipelineFile, stringsFile] = rest as [string, string]
  // The worker's budget, read and checked as the worker reads it.
  const budget = readOption('checkTimeBudgetMs', io.env)
  if (!budget.ok) { io.stderr.write(`${budget.error}\n`); return 2 }

  // What the plugins count on this thread (the pipelines' load here; the runs too without a
  // pipeline thread), and on the thread (its own load and the runs), sent back with the results.
  const hereMetrics = new Map<string, number>()
  const threadMetrics = new Map<string, number>()
  const cacheFor = memoryCacheFor()
  const host = new PipelineHost([pipelineFile], {
    pluginsDir: io.env.PLUGINS_DIR || undefined,
    log: silentLogger(),
    cacheFor,
    env: io.env,
    metrics: counter(hereMetrics),
  })
  const loaded = await host.load()
  if (!loaded.ok) {
    for (const e of loaded.errors) io.stderr.write(`${formatLocatedError(e)}\n`)
    return 1
  }
  let pool: PipelinePool | undefined
  try {
    let inputs: TryInput[]
    try {
      const text = await readFile(stringsFile, 'utf8')
      if (text.length > MAX_INPUT_BYTES) throw new Error(`larger than ${MAX_INPUT_BYTES} bytes`)
      inputs = itemsFromInput(JSON.parse(text), new AbortController().signal, host.current.all()[0]!.needsTranslation)
    } catch (e) {
      io.stderr.write(`${stringsFile}: ${(e as Error).message}\n`)
      return 2
    }
    pool = tryPool(host, io, budget.value, cacheFor, counter(threadMetrics))
    if (!pool) io.stderr.write(NO_THREAD_NOTE)
    const pipeline = (pool ?? host).current.all()[0]!
    if (pipeline.needsTranslation && inputs.some((i) => i.item.translation === undefined)) {
      io.stderr.write('note: some strings have no translation; checks that need one are skipped for them\n')
    }

    // One run per distinct settings: every item of a run shares its step's settings.
    const groups = new Map<string, number[]>()
    inputs.forEach((inp, i) => {
      const k = JSON.stringify(inp.settings ?? {})
      const g = groups.get(k)
      if (g) g.push(i)
      else groups.set(k, [i])
    })
    const results: RunResult[] = new Array(inputs.length)
    for (const [k, indexes] of groups) {
      // Resolved as the worker resolves a step's saved settings for a run (`run`): the pipeline's
      // defaults fill what is not given, a required setting without a default and a default its
      // own field refuses (a warning at load) have no value, a setting the schema no longer takes
      // is left out.
      const resolved = pipeline.resolveSettings(k === '{}' ? undefined : JSON.parse(k), { run: true })
      let settings: Record<string, unknown>
      if (resolved.ok) settings = resolved.settings
      else if (k === '{}') {
        // Nothing given, and the defaults fail the schema as a whole (a rule across settings): the
        // worker then runs the step without any of them, and so does this.
        io.stderr.write(`note: the pipeline's settings defaults are invalid (${resolved.errors.join('; ')}); strings without settings run without any of them, as the worker runs them\n`)
        settings = {}
      } else {
        io.stderr.write(`settings of string ${inputs[indexes[0]!]!.item.id}: ${resolved.errors.join('; ')}\n`)
        return 2
      }
      const items = indexes.map((i) => ({ ...inputs[i]!.item, settings }))
      const out = await pipeline.run(items)
      out.forEach((r, j) => { results[indexes[j]!] = r })
    }

    if (!pretty) {
      const json = results.map((r, i) => ({ id: inputs[i]!.id, output: r.port, findings: r.findings.map((f) => ({ check: f.check, code: f.code ?? null, severity: f.severity, message: f.message })) }))
      io.stdout.write(`${JSON.stringify(json, null, 2)}\n`)
      return 0
    }
    // With a thread, the counts are the thread's: its own load and the runs, as this thread's
    // were without one (here the plugins only loaded: taking both would count a load twice).
    io.stdout.write(prettyReport(pipeline, inputs, results, pool ? threadMetrics : hereMetrics))
    return 0
  } finally {
    // No thread left running, whatever happened (a check stopped, an error): try ends at once.
    await pool?.close()
    await host.current.close(0)
  }
}
