// The directories of the configuration, checked on disk for `config --check`. loadConfig reads
// the environment only: a PIPELINES_DIR or PLUGINS_DIR that is not there stopped `serve` at its
// start, and a DATA_DIR it cannot write failed it at start (the SQLite store, the token key file)
// or only later (the first webhook body large enough to go to DATA_DIR/incoming), while
// `config --check` called the configuration valid.
import { accessSync, constants, statSync } from 'node:fs'
import path from 'node:path'
import type { Config } from './options.js'
import { pipelineSourceOf } from './pipeline-source.js'

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

function pipelinesDirProblems(setting: string): string[] {
  const source = pipelineSourceOf(setting)
  if (!Array.isArray(source)) return readableDirectory('PIPELINES_DIR', source.dir, 'a directory of pipeline files, or a comma-separated list of them')
  return source.flatMap((file) => {
    const found = find(file)
    if (found === 'missing') return [`PIPELINES_DIR: the pipeline file "${file}" does not exist`]
    if (found === 'directory') return [`PIPELINES_DIR: "${file}" is a directory; in a list, name pipeline files only (or set PIPELINES_DIR to the directory alone)`]
    if (typeof found === 'object') return [`PIPELINES_DIR: "${file}" cannot be read: ${found.error}`]
    return can(file, constants.R_OK) ? [] : [`PIPELINES_DIR: "${file}" cannot be read (permission denied)`]
  })
}

/**
 * DATA_DIR need not exist: the worker creates it (and its parents) when it first writes there.
 * It must be a directory the worker can write, or be creatable: its nearest existing ancestor a
 * directory it can write.
 */
function dataDirProblems(dir: string): string[] {
  const found = find(dir)
  if (found === 'directory') return can(dir, WRITE_DIR) ? [] : [`DATA_DIR: "${dir}" is not writable (the store, the token key and large webhook bodies are written there)`]
  if (found === 'file') return [`DATA_DIR: "${dir}" is a file, not a directory`]
  if (typeof found === 'object') return [`DATA_DIR: "${dir}" cannot be used: ${found.error}`]
  let ancestor = path.dirname(path.resolve(dir))
  let at = find(ancestor)
  while (at === 'missing' && path.dirname(ancestor) !== ancestor) at = find((ancestor = path.dirname(ancestor)))
  if (at === 'file') return [`DATA_DIR: "${dir}" does not exist and cannot be created: "${ancestor}" is a file, not a directory`]
  if (at !== 'directory' || !can(ancestor, WRITE_DIR)) return [`DATA_DIR: "${dir}" does not exist and cannot be created: "${ancestor}" is not writable`]
  return []
}

/** What stands in the way on disk of the directories the configuration names, each naming its variable. */
export function pathProblems(config: Pick<Config, 'pipelinesDir' | 'pluginsDir' | 'dataDir'>): string[] {
  return [
    ...pipelinesDirProblems(config.pipelinesDir),
    // Optional: unset, the worker loads no plugins of the operator's own.
    ...(config.pluginsDir ? readableDirectory('PLUGINS_DIR', config.pluginsDir, "the directory of the operator's own plugins; unset it if there are none") : []),
    ...dataDirProblems(config.dataDir),
  ]
}
