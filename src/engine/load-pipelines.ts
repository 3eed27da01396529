// Loading a set of pipeline files: read (size-capped), parse (alias-capped), validate against the
// published schema, compile each, check module keys are unique across files. Every error of every
// file is returned at once; on any error, nothing of the set is kept (plugins created are closed).
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { Ajv, type ErrorObject } from 'ajv'
import { LineCounter, parseDocument } from 'yaml'
import { closeAll, compilePipeline, dispatchTo, type EngineDeps, type EventHandler, type RunTracker } from './compile-pipeline.js'
import { SourceFile, type LocatedError, type YamlPath } from './located-error.js'
import type { Pipeline, PipelineSet } from './pipeline.js'
import { pipelineSchema, type PipelineFile } from './pipeline-schema.js'
import { PluginRegistry } from './plugin-registry.js'
import type { PluginEvent, PluginInstance } from './types.js'
import { isPipelineFileName } from '../config/pipeline-source.js'

export type { EngineDeps } from './compile-pipeline.js'
export type { EditorMode, Pipeline, PipelineSet, PipelineSource } from './pipeline.js'
export type { LocatedError } from './located-error.js'
export { formatLocatedError } from './located-error.js'
export type { RunResult } from './run-pipeline.js'

/** Largest pipeline file read; a pipeline is a page of YAML, not megabytes. */
export const MAX_PIPELINE_BYTES = 1024 * 1024
/** Most aliases a file may expand (yaml's guard against "billion laughs"). */
export const MAX_ALIAS_COUNT = 100
/** How long a replaced set waits for its runs to finish before closing its plugins anyway. */
export const CLOSE_GRACE_MS = 30_000

export type LoadResult = { ok: true; set: PipelineSet; warnings: LocatedError[] } | { ok: false; errors: LocatedError[] }

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true })
const validatePipeline = ajv.compile<PipelineFile>(pipelineSchema)

/** The pipeline files of a directory: *.yaml and *.yml, sorted. */
export async function listPipelineFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir)
  return names.filter(isPipelineFileName).sort().map((n) => path.join(dir, n))
}

/**
 * `x.yaml` beside `x.yml`: one pipeline in two files, most likely (a copy left behind by a rename).
 * Both were loaded: with one module key, the second was refused for it; with two, both became
 * steps. Each such pair is an error naming both, and the second file is not read.
 */
function twinFiles(list: string[]): { errors: LocatedError[]; files: string[] } {
  const byStem = new Map<string, string>()
  const errors: LocatedError[] = []
  const files: string[] = []
  for (const file of list) {
    const stem = path.resolve(file).replace(/\.ya?ml$/i, '')
    const twin = byStem.get(stem)
    if (twin === undefined) byStem.set(stem, file)
    if (twin === undefined || path.resolve(twin) === path.resolve(file)) { files.push(file); continue }
    errors.push({ file, line: 1, col: 1, message: `${path.basename(twin)} is beside it: one pipeline in two files? Keep one of them (x.yaml or x.yml, not both)` })
  }
  return { errors, files }
}

function pathOf(instancePath: string): YamlPath {
  if (!instancePath) return []
  return instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).map((s) => (/^\d+$/.test(s) ? Number(s) : s))
}

function schemaError(src: SourceFile, e: ErrorObject): LocatedError {
  const p = pathOf(e.instancePath)
  const where = p.join('.') || '(top level)'
  // A key that breaks `propertyNames` (an output called "a b"): ajv names the key beside the
  // parent's path; the error belongs at that key, and must say which it is.
  if (e.propertyName !== undefined) return src.errorAtPath([...p, e.propertyName], `${where}: the name ${JSON.stringify(e.propertyName)} ${e.message ?? 'is invalid'}`, 'key')
  switch (e.keyword) {
    case 'additionalProperties': {
      const extra = (e.params as { additionalProperty: string }).additionalProperty
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {}).filter((k) => k !== '$schema')
      return src.errorAtPath([...p, extra], `unknown key "${extra}"${p.length ? ` in ${where}` : ''}${known.length ? `; known keys: ${known.join(', ')}` : ''}`, 'key')
    }
    case 'required':
      return src.errorAtPath(p, `${where}: missing required key "${(e.params as { missingProperty: string }).missingProperty}"`, 'key')
    case 'enum':
      return src.errorAtPath(p, `${where}: ${JSON.stringify(src.find(p).node?.toJSON?.() ?? '')} is not allowed; must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`)
    default:
      return src.errorAtPath(p, `${where}: ${e.message ?? 'is invalid'}`)
  }
}

/** Schema errors after which the value still has the shape of the schema: a string that breaks its
 * pattern or enum, a number out of range, a list too short. */
const CONSTRAINTS = new Set(['pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'uniqueItems', 'minProperties', 'propertyNames'])

/**
 * So that a file's compile errors are shown with its schema errors (every error at once), a file
 * whose only schema errors are unknown keys and broken constraints is still compiled: its unknown
 * keys are dropped, and what remains has the shape `PipelineFile` says (the file is refused either
 * way). A file with a value of the wrong type, or without a required key, is not compiled.
 */
function withoutUnknownKeys(data: object, problems: ErrorObject[]): PipelineFile | undefined {
  const unknownKeys: Array<{ at: YamlPath; key: string }> = []
  for (const e of problems) {
    if (e.keyword === 'additionalProperties') unknownKeys.push({ at: pathOf(e.instancePath), key: (e.params as { additionalProperty: string }).additionalProperty })
    else if (!(CONSTRAINTS.has(e.keyword) || (e.keyword === 'enum' && typeof e.data === 'string'))) return undefined
  }
  for (const { at, key } of unknownKeys) {
    const parent = at.reduce<unknown>((node, step) => (node as Record<string | number, unknown>)[step], data)
    delete (parent as Record<string, unknown>)[key]
  }
  return data as PipelineFile
}

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** The line (from 1) of the first byte that is not UTF-8: lines are cut at "\n", a byte no UTF-8 sequence holds. */
function firstBadLine(bytes: Uint8Array): number {
  let line = 1
  for (let start = 0; start < bytes.length; line++) {
    const end = bytes.indexOf(0x0a, start)
    const stop = end < 0 ? bytes.length : end
    try {
      UTF8.decode(bytes.subarray(start, stop))
    } catch {
      return line
    }
    start = stop + 1
  }
  return line
}

/** A flow mapping (`{ ... }`) with a value that starts with an unquoted `${`. */
const UNQUOTED_SETTING_IN_FLOW = /\{.*:\s*\$\{/

/** Read, parse and validate one file; undefined (with its errors added) when it cannot be compiled. */
async function readPipeline(file: string, errors: LocatedError[], warnings: LocatedError[]): Promise<{ src: SourceFile; data: PipelineFile } | undefined> {
  const fail = (message: string): undefined => { errors.push({ file, line: 1, col: 1, message }); return undefined }
  let bytes: Buffer
  let text: string
  try {
    const { size } = await stat(file)
    if (size > MAX_PIPELINE_BYTES) return fail(`file is ${size} bytes; a pipeline may have at most ${MAX_PIPELINE_BYTES}`)
    bytes = await readFile(file)
  } catch (e) {
    return fail(`cannot read: ${(e as Error).message}`)
  }
  // Strict: a file in another encoding (Latin-1...) would load with its names, messages and
  // patterns silently changed (each bad byte a U+FFFD). A BOM is taken (and dropped).
  try {
    text = UTF8.decode(bytes)
  } catch {
    errors.push({ file, line: firstBadLine(bytes), col: 1, message: 'not UTF-8: save the file as UTF-8 (a pipeline file is read as UTF-8 only)' })
    return undefined
  }
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true })
  const src = new SourceFile(file, text, lineCounter, doc)
  if (doc.errors.length) {
    const hinted = new Set<number>()
    for (const e of doc.errors) {
      const located = src.errorAt(e.pos[0], e.message.split('\n')[0]!)
      // `with: { ratio: ${settings.x} }`: YAML reads the `{` of `${` as a mapping; say how to write it.
      if (!hinted.has(located.line) && UNQUOTED_SETTING_IN_FLOW.test(located.excerpt ?? '')) {
        hinted.add(located.line)
        located.message += ` (inside { }, quote a setting: '\${settings.name}')`
      }
      errors.push(located)
    }
    return undefined
  }
  for (const w of doc.warnings) warnings.push(src.errorAt(w.pos[0], w.message.split('\n')[0]!))
  let data: unknown
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (e) {
    errors.push(src.errorAt(0, `refused: ${(e as Error).message} (at most ${MAX_ALIAS_COUNT} aliases)`))
    return undefined
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    errors.push(src.errorAt(0, 'a pipeline file must be a mapping (key: ..., name: ..., checks: ...)'))
    return undefined
  }
  if (validatePipeline(data)) return { src, data }
  const problems = validatePipeline.errors ?? []
  // `propertyNames` adds "property name must be valid" after the error that says why: one is enough.
  for (const e of problems) if (e.keyword !== 'propertyNames') errors.push(schemaError(src, e))
  const shaped = withoutUnknownKeys(data, problems)
  return shaped && { src, data: shaped }
}

class LoadedSet implements PipelineSet {
  private active = 0
  private idle: Array<() => void> = []
  private closing: Promise<void> | undefined
  readonly tracker: RunTracker = {
    enter: () => { this.active++ },
    leave: () => {
      if (--this.active === 0) for (const resolve of this.idle.splice(0)) resolve()
    },
  }
  private readonly pipelines: Pipeline[] = []
  private readonly handlers: EventHandler[] = []
  private readonly instances: Array<() => Array<Promise<PluginInstance> | PluginInstance>> = []

  constructor(private readonly deps: EngineDeps) {}

  add(compiled: { pipeline: Pipeline; events: EventHandler[]; instances(): Array<Promise<PluginInstance> | PluginInstance> }) {
    this.pipelines.push(compiled.pipeline)
    this.handlers.push(...compiled.events)
    this.instances.push(compiled.instances)
  }
  get(key: string) { return this.pipelines.find((p) => p.key === key) }
  all() { return [...this.pipelines] }
  events() { return [...new Set(this.handlers.map((h) => h.on))].sort() }

  async dispatchEvent(e: PluginEvent): Promise<void> {
    this.tracker.enter()
    try {
      await Promise.all(this.handlers.filter((h) => h.on === e.event).map((h) => dispatchTo(h, e)))
    } finally {
      this.tracker.leave()
    }
  }

  close(graceMs = CLOSE_GRACE_MS): Promise<void> {
    this.closing ??= (async () => {
      if (this.active > 0) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([
          new Promise<void>((resolve) => this.idle.push(resolve)),
          new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs) }),
        ])
        clearTimeout(timer)
      }
      await closeAll(this.instances.flatMap((instances) => instances()), this.deps.log)
    })()
    return this.closing
  }
}

export async function loadPipelines(files: string[] | { dir: string }, deps: EngineDeps): Promise<LoadResult> {
  const errors: LocatedError[] = []
  const warnings: LocatedError[] = []
  let list: string[]
  if (Array.isArray(files)) list = files
  else {
    try {
      list = await listPipelineFiles(files.dir)
    } catch (e) {
      return { ok: false, errors: [{ file: files.dir, line: 1, col: 1, message: `cannot list pipelines: ${(e as Error).message}` }] }
    }
  }
  const twins = twinFiles(list)
  errors.push(...twins.errors)
  list = twins.files
  const { registry, problems } = await PluginRegistry.create(deps.pluginsDir)
  for (const p of problems) errors.push({ file: p.file, line: 1, col: 1, message: p.message })

  const set = new LoadedSet(deps)
  const keys = new Map<string, string>()
  for (const file of list) {
    const read = await readPipeline(file, errors, warnings)
    if (!read) continue
    const compiled = await compilePipeline(read.src, read.data, registry, deps, set.tracker, errors, warnings)
    const key = read.data.key
    const first = keys.get(key)
    if (first) errors.push(read.src.errorAtPath(['key'], `module key "${key}" is already used by ${first}; module keys must be unique`))
    else keys.set(key, file)
    if (compiled) set.add(compiled)
  }
  if (errors.length) {
    await set.close(0)
    return { ok: false, errors }
  }
  return { ok: true, set, warnings }
}
