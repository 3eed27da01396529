// The directories of the configuration, checked on disk for `config --check`. loadConfig reads
// the environment only: a PIPELINES_DIR or PLUGINS_DIR that is not there stopped `serve` at its
// start, and a DATA_DIR it cannot write failed it at start (the SQLite store, the token key file)
// or only later (the first webhook body large enough to go to DATA_DIR/incoming), while
// `config --check` called the configuration valid. `serve` runs the checks of what it writes
// (writableProblems) at its start: a few stat calls, no listing.
import { accessSync, constants, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import type { Config } from './options.js'
import { isPipelineFileName, pipelineSourceOf } from './pipeline-source.js'

type Found = 'directory' | 'file' | 'missing' | { error: string }

function find(target: string): Found {
  try {
    return statSync(target).isDirectory() ? 'directory' : 'file'
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // ENOTDIR: a file where a directory of the path should be; nothing is there either way.
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : { error: (error as Error).message }
  }
}

function can(target: string, mode: number): boolean {
  try {
    accessSync(target, mode)
    return true
  } catch {
    return false
  }
}

const READ_DIR = constants.R_OK | constants.X_OK
const WRITE_DIR = constants.W_OK | constants.X_OK

/** A directory the worker lists (PIPELINES_DIR, PLUGINS_DIR): there, a directory, readable. */
function readableDirectory(variable: string, dir: string, what: string): string[] {
  const found = find(dir)
  if (found === 'missing') return [`${variable}: "${dir}" does not exist (${what})`]
  if (found === 'file') return [`${variable}: "${dir}" is a file, not a directory (${what})`]
  if (typeof found === 'object') return [`${variable}: "${dir}" cannot be read: ${found.error}`]
  return can(dir, READ_DIR) ? [] : [`${variable}: "${dir}" cannot be read (permission denied)`]
}

/**
 * A PIPELINES_DIR without a pipeline file (an empty volume, the wrong directory) let the worker
 * start and serve no step: its manifest declared none.
 */
function withoutPipelines(dir: string): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch (error) {
    return [`PIPELINES_DIR: "${dir}" cannot be read: ${(error as Error).message}`]
  }
  return names.some(isPipelineFileName) ? [] : [`PIPELINES_DIR: "${dir}" holds no pipeline files (*.yaml, *.yml): the worker would serve no step`]
}

function pipelinesDirProblems(setting: string): string[] {
  const source = pipelineSourceOf(setting)
  if (!Array.isArray(source)) {
    const problems = readableDirectory('PIPELINES_DIR', source.dir, 'a directory of pipeline files, or a comma-separated list of them')
    return problems.length ? problems : withoutPipelines(source.dir)
  }
  if (source.length === 0) return [`PIPELINES_DIR: "${setting}" names no pipeline file: the worker would serve no step`]
  return source.flatMap((file) => {
    const found = find(file)
    if (found === 'missing') return [`PIPELINES_DIR: the pipeline file "${file}" does not exist`]
    if (found === 'directory') return [`PIPELINES_DIR: "${file}" is a directory; in a list, name pipeline files only (or set PIPELINES_DIR to the directory alone)`]
    if (typeof found === 'object') return [`PIPELINES_DIR: "${file}" cannot be read: ${found.error}`]
    return can(file, constants.R_OK) ? [] : [`PIPELINES_DIR: "${file}" cannot be read (permission denied)`]
  })
}

/**
 * A directory the worker writes to (DATA_DIR, the SQLite store's) need not exist: the worker
 * creates it (and its parents) when it first writes there. It must be a directory the worker can
 * write, or be creatable: its nearest existing ancestor a directory it can write. `label` names
 * the variable and the directory; `why` says what is written there.
 */
function writableDirectory(label: string, dir: string, why: string): string[] {
  const found = find(dir)
  if (found === 'directory') return can(dir, WRITE_DIR) ? [] : [`${label} is not writable (${why})`]
  if (found === 'file') return [`${label} is a file, not a directory`]
  if (typeof found === 'object') return [`${label} cannot be used: ${found.error}`]
  let ancestor = path.dirname(path.resolve(dir))
  let at = find(ancestor)
  while (at === 'missing' && path.dirname(ancestor) !== ancestor) at = find((ancestor = path.dirname(ancestor)))
  if (at === 'file') return [`${label} does not exist and cannot be created: "${ancestor}" is a file, not a directory`]
  if (at !== 'directory' || !can(ancestor, WRITE_DIR)) return [`${label} does not exist and cannot be created: "${ancestor}" is not writable`]
  return []
}

/** The file of a `sqlite://` STORE_URL, if it names one on disk. */
function sqliteFile(storeUrl: string): string | undefined {
  if (!storeUrl.startsWith('sqlite://')) return undefined
  const file = storeUrl.slice('sqlite://'.length)
  return file && file !== ':memory:' ? file : undefined
}

/**
 * The SQLite store's directory, when STORE_URL puts it outside DATA_DIR (the default puts it in
 * DATA_DIR, checked already): the store, its WAL and its lock files are written there. A store
 * file that is there must be writable too.
 */
function sqliteProblems(storeUrl: string, dataDir: string): string[] {
  const file = sqliteFile(storeUrl)
  if (file === undefined) return []
  const dir = path.dirname(path.resolve(file))
  const problems = dir === path.resolve(dataDir) ? [] : writableDirectory(`STORE_URL: the SQLite store's directory "${dir}"`, dir, 'the store and its write-ahead log are written there')
  if (problems.length === 0 && find(file) === 'directory') return [`STORE_URL: the SQLite store "${file}" is a directory, not a file`]
  if (problems.length === 0 && find(file) === 'file' && !can(file, constants.R_OK | constants.W_OK)) return [`STORE_URL: the SQLite store "${file}" is not writable`]
  return problems
}

/**
 * What stands in the way of the worker's writes on disk: DATA_DIR, and the SQLite store's
 * directory. `serve` checks these at its start: such a worker started, and failed at the first
 * write (the store's, or the first webhook body large enough for DATA_DIR/incoming).
 */
export function writableProblems(config: Pick<Config, 'dataDir' | 'storeUrl'>): string[] {
  return [
    ...writableDirectory(`DATA_DIR: "${config.dataDir}"`, config.dataDir, 'the store, the token key and large webhook bodies are written there'),
    ...sqliteProblems(config.storeUrl, config.dataDir),
  ]
}

/** What stands in the way on disk of the directories the configuration names, each naming its variable. */
export function pathProblems(config: Pick<Config, 'pipelinesDir' | 'pluginsDir' | 'dataDir' | 'storeUrl'>): string[] {
  return [
    ...pipelinesDirProblems(config.pipelinesDir),
    // Optional: unset, the worker loads no plugins of the operator's own.
    ...(config.pluginsDir ? readableDirectory('PLUGINS_DIR', config.pluginsDir, "the directory of the operator's own plugins; unset it if there are none") : []),
    ...writableProblems(config),
  ]
}
