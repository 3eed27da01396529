// There is no Docker engine where the tests run, so the Dockerfile's invariants are checked as
// text: the base image matches package.json's engines, the runtime stage runs `serve` as a
// non-root user with a health check, everything it copies exists (and is not excluded by
// .dockerignore), and it leaves out the emulator and the bench (production-image.test.ts runs a
// copy of what it holds). The runtime install itself was tried by hand; see docs/deployment.md.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'
import { describe, expect, it } from 'vitest'
import { OPTIONS } from '../../src/config/options.js'
import { SERVE_ENV, SERVE_NODE_ARGS } from '../../src/cli/bench.js'
import { copyOf, ignored, removedPaths, stages } from './dockerfile.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8')

const dockerfile = read('Dockerfile')
const all = stages(dockerfile)
const runtime = all.at(-1)!
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; dependencies: Record<string, string> }
const dockerignore = read('.dockerignore')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))

describe('Dockerfile', () => {
  it('is multi-stage, every stage on node:<engines major>-slim (Debian)', () => {
    expect(all.length).toBeGreaterThanOrEqual(2)
    const major = /(\d+)/.exec(pkg.engines.node)![1]
    for (const s of all) expect(s.image).toBe(`node:${major}-slim`)
  })

  it('keeps the toolchain out of the runtime stage and installs production dependencies without scripts', () => {
    const runs = runtime.body.filter((i) => i.op === 'RUN').map((i) => i.args).join('\n')
    expect(runs).not.toMatch(/g\+\+|build-essential|python3/)
    const prodDeps = all.find((s) => s.body.some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args)))
    expect(prodDeps, 'a stage runs npm ci --omit=dev').toBeDefined()
    const install = prodDeps!.body.find((i) => i.op === 'RUN' && /npm ci\b/.test(i.args))!.args
    // `prepare` runs tsc, which --omit=dev leaves out.
    expect(install).toMatch(/--ignore-scripts/)
    // ... so sqlite3's native module is built explicitly, in the stage with the toolchain.
    expect(install).toMatch(/npm rebuild sqlite3/)
    expect(prodDeps!.body.some((i) => i.op === 'RUN' && /\bg\+\+/.test(i.args))).toBe(true)
    expect(runtime.body.some((i) => i.op === 'COPY' && copyOf(i).from === prodDeps!.name && copyOf(i).sources.includes('/app/node_modules'))).toBe(true)
  })

  it('runs as a non-root user', () => {
    const users = runtime.body.filter((i) => i.op === 'USER').map((i) => i.args.split(':')[0])
    expect(users.length).toBeGreaterThan(0)
    expect(['root', '0']).not.toContain(users.at(-1))
    // Nothing runs as root after the switch, so the data directory must be handed over before it.
    const userAt = runtime.body.findIndex((i) => i.op === 'USER')
    const chownAt = runtime.body.findIndex((i) => i.op === 'RUN' && /chown\s+\S+\s+\/app\/data/.test(i.args))
    expect(chownAt).toBeGreaterThanOrEqual(0)
    expect(chownAt).toBeLessThan(userAt)
  })

  it('exposes the default PORT, checks /healthz with node fetch and runs `serve`', () => {
    expect(runtime.body.find((i) => i.op === 'EXPOSE')?.args).toBe(String(OPTIONS.port.default))
    const health = runtime.body.find((i) => i.op === 'HEALTHCHECK')
    expect(health?.args).toMatch(/CMD .*node.*fetch\(.*\/healthz/)
    const cmd = runtime.body.filter((i) => i.op === 'CMD').at(-1)!
    const argv = JSON.parse(cmd.args) as string[]
    expect(argv[0]).toBe('node')
    expect(argv.slice(-2)).toEqual(['bin/switchyard.js', 'serve'])
    // The image runs the worker as `npm start` does: same node flags (the heap limit), and the
    // environment npm start sets before them (glibc's trim threshold, issue 16) as the image's ENV.
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
    const assignments = /^(?:[A-Z_]+=\S+ )*/.exec(pkg.scripts.start)![0]
    expect(`node ${argv.slice(1).join(' ')}`).toBe(pkg.scripts.start.slice(assignments.length))
    expect(assignments).toMatch(/MALLOC_TRIM_THRESHOLD_=\d+ /)
    for (const a of assignments.trim().split(' ')) expect(runtime.body.some((i) => i.op === 'ENV' && i.args.split(/\s+/).includes(a))).toBe(true)
    expect(runtime.body.some((i) => i.op === 'ENV' && /DATA_DIR=\/app\/data/.test(i.args))).toBe(true)
  })

  it('npm start, and so the image and the bench, give the main isolate a 16 MB young generation (issue 16)', () => {
    // V8 sizes it from the host's memory (32 MB on 24 GiB): 16 MB less of the burst's peak, for no
    // measured loss of speed (docs/performance.md, "Issue 16, eighth session").
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
    expect(pkg.scripts.start).toContain(' --max-semi-space-size=8 ')
    // The bench measures the worker as npm start runs it: the same node flags and environment.
    const assignments = /^(?:[A-Z_]+=\S+ )*/.exec(pkg.scripts.start)![0]
    expect(pkg.scripts.start.slice(assignments.length)).toBe(`node ${SERVE_NODE_ARGS} bin/switchyard.js serve`)
    expect(assignments.trim()).toBe(Object.entries(SERVE_ENV).map(([k, v]) => `${k}=${v}`).join(' '))
  })

  it('copies only files that exist in the build context and that .dockerignore lets through', () => {
    for (const s of all) {
      for (const ins of s.body.filter((i) => i.op === 'COPY')) {
        const { from, sources } = copyOf(ins)
        if (from) continue
        for (const src of sources) {
          expect(existsSync(path.join(ROOT, src)), `${src} (stage ${s.name ?? s.image})`).toBe(true)
          expect(ignored(dockerignore, src), `${src} is excluded by .dockerignore`).toBe(false)
        }
      }
    }
  })

  it('copies in the runtime files the worker reads at run time', () => {
    const copied = runtime.body.filter((i) => i.op === 'COPY').flatMap((i) => copyOf(i).sources.map((s) => s.replace(/^\/app\//, '')))
    // PACKAGE_ROOT is found by package.json beside manifest.template.json; pipelines/ is the default
    // PIPELINES_DIR; assets/ holds the logos the manifest names.
    for (const needed of ['package.json', 'manifest.template.json', 'pipelines', 'assets', 'bin', 'dist', 'node_modules']) expect(copied).toContain(needed)
  })

  it('builds dist/ from everything tsc compiles, and dist/ holds what bin/switchyard.js imports', () => {
    const build = all.find((s) => s.name && runtime.body.some((i) => i.op === 'COPY' && copyOf(i).from === s.name && copyOf(i).sources.includes('/app/dist')))!
    const copiedIn = build.body.filter((i) => i.op === 'COPY' && !copyOf(i).from).flatMap((i) => copyOf(i).sources)
    const tsconfig = JSON.parse(read('tsconfig.json')) as { include: string[]; compilerOptions: { outDir: string; rootDir: string } }
    expect(tsconfig.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.' })
    for (const glob of tsconfig.include) expect(copiedIn).toContain(glob.split('/')[0])
    expect(copiedIn).toContain('tsconfig.json')
    // bin/switchyard.js imports ../dist/src/cli/main.js: the build makes it from src/cli/main.ts.
    const target = /from '\.\.\/dist\/(.+)\.js'/.exec(read('bin/switchyard.js'))![1]!
    expect(existsSync(path.join(ROOT, `${target}.ts`)), `${target}.ts, which bin/switchyard.js runs once compiled`).toBe(true)
  })

  it('leaves the emulator and the bench, compiled or as sources, out of the runtime stage', () => {
    const build = all.find((s) => s.name && runtime.body.some((i) => i.op === 'COPY' && copyOf(i).from === s.name && copyOf(i).sources.includes('/app/dist')))!
    const compiles = (i: { op: string; args: string }) => i.op === 'RUN' && /npm run build|\btsc\b/.test(i.args)
    const lastBuild = build.body.findLastIndex(compiles)
    expect(lastBuild, 'the build stage compiles dist/').toBeGreaterThanOrEqual(0)
    // Removed after the last compile (in the same RUN, after it), so nothing puts them back.
    const removal = build.body.findIndex((i, at) => {
      const removed = removedPaths({ ...build, body: [i] })
      if (!removed.includes('dist/src/emulator') || !removed.includes('dist/src/bench')) return false
      return at > lastBuild || (at === lastBuild && i.args.search(/\brm\s/) > i.args.search(/npm run build|\btsc\b/))
    })
    expect(removal, 'a RUN after the build removes dist/src/emulator and dist/src/bench').toBeGreaterThanOrEqual(lastBuild)
    // From the build stage the runtime takes dist/ only; from the context, no sources.
    for (const ins of runtime.body.filter((i) => i.op === 'COPY')) {
      const { from, sources } = copyOf(ins)
      if (from === build.name) expect(sources).toEqual(['/app/dist'])
      if (!from) for (const src of sources) expect(src, 'the runtime stage copies no sources').not.toMatch(/^(\.\/)?src(\/|$)/)
    }
  })
})

describe('docker-compose.example.yml', () => {
  const compose = parseYaml(read('docker-compose.example.yml'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; env_file?: string; build?: unknown; image?: string }>
  }
  const workers = Object.entries(compose.services).filter(([, s]) => s.build !== undefined)

  it('runs two worker replicas on one Redis, BullMQ queue and one env file for the shared secrets, sharing the service\'s 20 requests at once', () => {
    expect(workers).toHaveLength(2)
    for (const [, w] of workers) {
      expect(w.environment).toMatchObject({ STORE_URL: 'redis://redis:6379', QUEUE: 'bullmq' })
      expect(Number(w.environment?.API_MAX_IN_FLIGHT) * workers.length).toBeLessThanOrEqual(20)
      expect(w.env_file).toBe('switchyard.env')
    }
    expect(compose.services.redis?.image).toMatch(/^redis:/)
  })

  it('keeps /metrics internal: the proxy does not forward it', () => {
    const caddyfile = (parseYaml(read('docker-compose.example.yml')) as { configs?: Record<string, { content?: string }> }).configs?.caddyfile?.content ?? ''
    expect(caddyfile).toMatch(/respond \/metrics\* 404/)
    expect(caddyfile.indexOf('respond /metrics')).toBeLessThan(caddyfile.indexOf('reverse_proxy'))
  })

  it('keeps the env file with the secrets out of the image', () => {
    expect(ignored(dockerignore, 'switchyard.env')).toBe(true)
    expect(ignored(dockerignore, '.env')).toBe(true)
  })
})
