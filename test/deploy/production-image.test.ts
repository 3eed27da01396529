// The production image leaves out the emulator and the bench (src/emulator, src/bench), which
// `switchyard demo|bench|emulate` need in development checkouts. Two checks that this is safe:
// - the import graph: no production module reaches src/emulator or src/bench by a static import
//   (only the CLI's lazy `import()` of those three commands does), read with the TypeScript parser;
// - a copy of what the Dockerfile's runtime stage holds, built from the Dockerfile's COPY lines and
//   the build stage's `rm -rf` (no Docker engine here): `serve` starts and answers /healthz,
//   `validate`, `try`, `config`, `manifest` work, and `demo`, `bench`, `emulate` fail saying they
//   are for development checkouts.
import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isLeftOutOfImage } from '../../src/cli/main.js'
import { OPTIONS } from '../../src/config/options.js'
import { copyOf, removedPaths, stages } from './dockerfile.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const LEFT_OUT = /^src\/(emulator|bench)\//
/** The modules that may import the emulator and the bench statically: themselves and their commands. */
const DEVELOPMENT_MODULES = /^src\/(emulator|bench)\/|^src\/cli\/(demo|bench)\.ts$/

interface Edge {
  from: string
  to: string
  dynamic: boolean
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
}

/** Relative imports of one file (static, re-exports and `import('literal')`), resolved to .ts paths. */
function importsOf(file: string): Edge[] {
  const sf = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const edges: Edge[] = []
  const add = (specifier: string, dynamic: boolean) => {
    if (!specifier.startsWith('.')) return
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, '.ts')
    edges.push({ from: file, to, dynamic })
  }
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      // `import type` is erased: it loads nothing at run time.
      const typeOnly = ts.isImportDeclaration(node) ? node.importClause?.isTypeOnly === true : node.isTypeOnly
      if (!typeOnly) add(node.moduleSpecifier.text, false)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      add(node.arguments[0].text, true)
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return edges
}

const files = [...sourceFiles('src'), ...sourceFiles('plugins')]
const edges = files.flatMap(importsOf)

/** Every module a file loads through static imports, itself included. */
function staticallyReached(entry: string): Set<string> {
  const seen = new Set<string>([entry])
  const todo = [entry]
  while (todo.length) {
    const file = todo.pop()!
    for (const e of edges) if (e.from === file && !e.dynamic && !seen.has(e.to)) seen.add(e.to), todo.push(e.to)
  }
  return seen
}

describe('the import graph of production code', () => {
  it('is read: the demo command imports the emulator, the CLI loads it lazily', () => {
    // Without these the checks below would pass on a parser that saw nothing.
    expect(edges).toContainEqual({ from: 'src/cli/demo.ts', to: 'src/emulator/index.ts', dynamic: false })
    expect(edges).toContainEqual({ from: 'src/cli/main.ts', to: 'src/cli/demo.ts', dynamic: true })
    for (const e of edges) expect(existsSync(path.join(ROOT, e.to)), `${e.from} imports ${e.to}`).toBe(true)
  })

  it('has no static import of src/emulator or src/bench outside them and their commands', () => {
    const offending = edges.filter((e) => LEFT_OUT.test(e.to) && !e.dynamic && !DEVELOPMENT_MODULES.test(e.from)).map((e) => `${e.from} -> ${e.to}`)
    expect(offending).toEqual([])
    // Lazy imports of them only in the CLI's command table, which turns their absence into a message.
    const lazy = edges.filter((e) => e.dynamic && (LEFT_OUT.test(e.to) || DEVELOPMENT_MODULES.test(e.to)) && !DEVELOPMENT_MODULES.test(e.from))
    expect(new Set(lazy.map((e) => e.from))).toEqual(new Set(['src/cli/main.ts']))
  })

  it('never reaches them from the CLI, the production commands, the package entry or a plugin', () => {
    const entries = ['src/cli/main.ts', ...['serve', 'validate', 'try', 'config', 'manifest'].map((c) => `src/cli/${c}.ts`), 'src/index.ts', 'src/worker.ts', ...files.filter((f) => f.startsWith('plugins/'))]
    for (const entry of entries) {
      const reached = [...staticallyReached(entry)].filter((f) => DEVELOPMENT_MODULES.test(f))
      expect(reached, `${entry} loads development-only modules`).toEqual([])
    }
  })
})

describe('isLeftOutOfImage', () => {
  const notFound = (message: string, url?: string) => Object.assign(new Error(message), { code: 'ERR_MODULE_NOT_FOUND', ...(url ? { url } : {}) })

  it('is true for a missing module under src/emulator or src/bench, by url or by message', () => {
    expect(isLeftOutOfImage(notFound("Cannot find module '/app/dist/src/emulator/index.js' imported from /app/dist/src/cli/demo.js", 'file:///app/dist/src/emulator/index.js'))).toBe(true)
    expect(isLeftOutOfImage(notFound("Cannot find module '/app/dist/src/bench/burst.js' imported from /app/dist/src/cli/bench.js"))).toBe(true)
  })

  it('is false for anything else, a package missing *from* the emulator included', () => {
    expect(isLeftOutOfImage(notFound("Cannot find package 'koa' imported from /app/dist/src/emulator/start-emulator.js"))).toBe(false)
    expect(isLeftOutOfImage(notFound("Cannot find module '/app/dist/src/engine/x.js' imported from /app/dist/src/emulator/a.js", 'file:///app/dist/src/engine/x.js'))).toBe(false)
    expect(isLeftOutOfImage(Object.assign(new Error("Cannot find module '/app/dist/src/emulator/index.js'"), { code: 'ERR_OTHER' }))).toBe(false)
    expect(isLeftOutOfImage(undefined)).toBe(false)
  })
})

describe('a copy of the runtime image (from the Dockerfile)', () => {
  let image: string
  // The image's defaults, not this shell's configuration (nor vite's BASE_URL=/).
  const configVars = new Set<string>(Object.values(OPTIONS).map((o) => o.env))
  const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !configVars.has(k)))
  const run = (args: string[]) => spawnSync(process.execPath, ['bin/switchyard.js', ...args], { cwd: image, encoding: 'utf8', timeout: 30_000, env: cleanEnv })

  beforeAll(() => {
    image = mkdtempSync(path.join(os.tmpdir(), 'switchyard-image-'))
    const all = stages(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))
    const runtime = all.at(-1)!
    for (const ins of runtime.body.filter((i) => i.op === 'COPY')) {
      const { from, sources, dest } = copyOf(ins)
      for (const src of sources) {
        const rel = src.replace(/^\/app\//, '')
        const target = path.join(image, dest.endsWith('/') ? path.join(dest, path.basename(rel)) : dest)
        mkdirSync(path.dirname(target), { recursive: true })
        if (rel === 'node_modules') symlinkSync(path.join(ROOT, 'node_modules'), target, 'dir')
        else if (!from) cpSync(path.join(ROOT, rel), target, { recursive: true })
        else {
          // What the build stage left in /app: dist/ as built (the vitest set-up keeps it current), less what it removed.
          const removed = removedPaths(all.find((s) => s.name === from)!).map((p) => path.join(ROOT, p))
          cpSync(path.join(ROOT, rel), target, { recursive: true, filter: (f) => !removed.some((r) => f === r || f.startsWith(`${r}${path.sep}`)) })
        }
      }
    }
  })
  afterAll(() => {
    if (image) rmSync(image, { recursive: true, force: true })
  })

  it('holds the CLI but not the emulator, the bench or any source', () => {
    expect(existsSync(path.join(image, 'dist/src/cli/main.js'))).toBe(true)
    expect(existsSync(path.join(image, 'dist/src/worker.js'))).toBe(true)
    for (const gone of ['dist/src/emulator', 'dist/src/bench', 'src']) expect(existsSync(path.join(image, gone)), gone).toBe(false)
  })

  it('runs serve: starts and answers /healthz', async () => {
    const data = mkdtempSync(path.join(os.tmpdir(), 'switchyard-image-data-'))
    const child = spawn(process.execPath, ['bin/switchyard.js', 'serve'], {
      cwd: image,
      env: { ...cleanEnv, PORT: '0', HOST: '127.0.0.1', STORE_URL: 'memory://', DATA_DIR: data, LOG_LEVEL: 'info', LOG_FORMAT: 'json', APP_SECRET: 's' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let log = ''
    child.stdout.on('data', (c: Buffer) => { log += c.toString() })
    child.stderr.on('data', (c: Buffer) => { log += c.toString() })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const deadline = Date.now() + 30_000
      while (!/worker listening/.test(log)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve did not start; it logged:\n${log.slice(-3000)}`)
        await new Promise((r) => setTimeout(r, 100))
      }
      const url = /"url":"(http:[^"]+)"/.exec(log)![1]!
      expect((await fetch(`${url}/healthz`)).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
      await exited
      rmSync(data, { recursive: true, force: true })
    }
  })

  it('runs serve --help, validate, try, config and manifest', () => {
    const help = run(['serve', '--help'])
    expect(help.status, help.stderr).toBe(0)
    expect(help.stdout).toMatch(/switchyard serve/)
    const validate = run(['validate'])
    expect(validate.status, validate.stderr).toBe(0)
    expect(validate.stdout).toMatch(/valid: .*qa-gate/)
    const tried = run(['try', 'pipelines/qa-gate.yaml', path.join(ROOT, 'test/fixtures/strings/try.json')])
    expect(tried.status, tried.stderr).toBe(0)
    expect(JSON.parse(tried.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ output: expect.any(String) })]))
    const config = run(['config'])
    expect(config.status, config.stderr).toBe(0)
    expect(config.stdout).toMatch(/`PORT`/)
    const manifest = run(['manifest'])
    expect(manifest.status, manifest.stderr).toBe(0)
    expect(JSON.parse(manifest.stdout)).toMatchObject({ identifier: expect.any(String) })
  })

  it.each(['demo', 'bench', 'emulate'])('refuses %s with a message: development checkouts only', (command) => {
    const r = run([command])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(new RegExp(`^switchyard ${command}: this command is for development checkouts\\.`))
    expect(r.stderr).toMatch(/leaves out the emulator and the bench/)
    // A message, not a stack trace.
    expect(r.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|\n\s+at /)
  })
})
