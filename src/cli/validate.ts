// `switchyard validate [FILES...]`: check pipeline files; every error at once, each as
// `file:line:col message` with the offending line. Exit 1 on any error, 0 otherwise.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { PACKAGE_ROOT } from '../config/load-config.js'
import { formatLocatedError, listPipelineFiles, loadPipelines, type LocatedError } from '../engine/load-pipelines.js'
import { pipelineSourceOf } from '../engine/pipeline-host.js'
import { silentLogger } from '../util/logger.js'
import { memoryCacheFor, processIo, type CliIo } from './cli-io.js'

const USAGE = `usage: switchyard validate [FILES...]
Checks pipeline files (default: every *.yaml and *.yml of PIPELINES_DIR, else the shipped pipelines/).
A directory among FILES stands for every *.yaml and *.yml file in it (x.yaml and x.yml together are an error).
Plugins come from the built-ins, PLUGINS_DIR and npm packages the pipelines name.
`

function relative(e: LocatedError): LocatedError {
  const rel = path.relative(process.cwd(), e.file)
  return { ...e, file: rel && !rel.startsWith('..') ? rel : e.file }
}

/** The files named: a directory stands for its pipeline files, as PIPELINES_DIR does
 * (`validate pipelines/`); a file named twice (`pipelines/ pipelines/qa-gate.yaml`) is checked once,
 * not refused as two files with the same key. An exit code when a directory cannot be used. */
async function namedFiles(args: string[], io: CliIo): Promise<string[] | number> {
  const files: string[] = []
  const seen = new Set<string>()
  const add = (f: string) => {
    if (seen.has(path.resolve(f))) return
    seen.add(path.resolve(f))
    files.push(f)
  }
  for (const arg of args) {
    const isDir = await stat(arg).then((s) => s.isDirectory(), () => false)
    if (!isDir) { add(arg); continue }
    let inDir: string[]
    try {
      inDir = await listPipelineFiles(arg)
    } catch (e) {
      io.stderr.write(`cannot list ${arg}: ${(e as Error).message}\n`)
      return 1
    }
    if (!inDir.length) { io.stderr.write(`no pipeline files (*.yaml, *.yml) in ${arg}\n`); return 1 }
    inDir.forEach(add)
  }
  return files
}

/** PIPELINES_DIR as serve reads it: a directory, or a comma-separated list of files. */
async function pipelinesDirFiles(io: CliIo): Promise<string[] | number> {
  const source = pipelineSourceOf(io.env.PIPELINES_DIR || path.join(PACKAGE_ROOT, 'pipelines'))
  if (Array.isArray(source)) return source
  let files: string[]
  try {
    files = await listPipelineFiles(source.dir)
  } catch (e) {
    io.stderr.write(`cannot list ${source.dir}: ${(e as Error).message}\n`)
    return 1
  }
  if (!files.length) { io.stderr.write(`no pipeline files (*.yaml, *.yml) in ${source.dir}\n`); return 1 }
  return files
}

export async function runValidate(args: string[], io: CliIo = processIo()): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) { io.stdout.write(USAGE); return 0 }
  const unknown = args.filter((a) => a.startsWith('-'))
  if (unknown.length) { io.stderr.write(`unknown option ${unknown[0]}\n${USAGE}`); return 2 }
  const files = args.length ? await namedFiles(args, io) : await pipelinesDirFiles(io)
  if (typeof files === 'number') return files
  const result = await loadPipelines(files, {
    pluginsDir: io.env.PLUGINS_DIR || undefined,
    log: silentLogger(),
    cacheFor: memoryCacheFor(),
    env: io.env,
    metrics: { add() {} },
  })
  if (!result.ok) {
    for (const e of result.errors) io.stdout.write(`${formatLocatedError(relative(e))}\n`)
    const inFiles = new Set(result.errors.map((e) => e.file)).size
    io.stdout.write(`\n${result.errors.length} error${result.errors.length === 1 ? '' : 's'} in ${inFiles} file${inFiles === 1 ? '' : 's'}\n`)
    return 1
  }
  for (const w of result.warnings) io.stdout.write(`${formatLocatedError({ ...relative(w), message: `warning: ${w.message}` })}\n`)
  const keys = result.set.all().map((p) => p.key)
  io.stdout.write(`${keys.length} pipeline${keys.length === 1 ? '' : 's'} valid: ${keys.join(', ')}\n`)
  await result.set.close(0)
  return 0
}
