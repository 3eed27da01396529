// Vitest global set-up: tests that start `bin/switchyard.js` run dist/, so dist/ must be built
// from the src/ and plugins/ in the worktree now. Builds once per run, before any test, and only
// when a source is newer than the last build (a unit-only run pays a directory walk, not a tsc).
// SWITCHYARD_SKIP_BUILD=1 turns it off (Stryker's sandbox, which never starts the worker process).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'
import { drawSeed, seedFromEnv } from './support/seed.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const STAMP = path.join(ROOT, 'dist', '.built-from-sources')

/** Newest modification time among the files tsc compiles (and its configuration). */
export function newestSourceMtime(root = ROOT): { mtimeMs: number; file: string } {
  let newest = { mtimeMs: 0, file: '' }
  const consider = (file: string) => {
    const m = statSync(file).mtimeMs
    if (m > newest.mtimeMs) newest = { mtimeMs: m, file }
  }
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(full)
      } else if (/\.(c?ts|json)$/.test(entry.name) && !entry.name.endsWith('.test.ts')) consider(full)
    }
  }
  for (const dir of ['src', 'plugins']) if (existsSync(path.join(root, dir))) walk(path.join(root, dir))
  for (const file of ['tsconfig.json', 'package.json']) consider(path.join(root, file))
  return newest
}

export function buildIsStale(root = ROOT): { stale: boolean; why: string } {
  const stamp = path.join(root, 'dist', '.built-from-sources')
  if (!existsSync(stamp)) return { stale: true, why: 'no build of the current sources in dist/' }
  const built = statSync(stamp).mtimeMs
  const newest = newestSourceMtime(root)
  if (newest.mtimeMs > built) return { stale: true, why: `${path.relative(root, newest.file)} changed after the last build` }
  return { stale: false, why: '' }
}

export default function setup(project: TestProject): void {
  // One seed for the whole run, shared with every test file (test/support/seed.ts).
  project.provide('testSeed', seedFromEnv() ?? drawSeed())
  if (process.env.SWITCHYARD_SKIP_BUILD === '1') return
  const { stale, why } = buildIsStale()
  if (!stale) return
  // The stamp gets the time the build started: a source saved during the build counts as newer.
  const started = new Date()
  console.log(`[switchyard tests] building dist/ (${why})`)
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' })
  } catch {
    // tsc still emits on type errors; type checking is `npm run typecheck`'s job, and one type
    // error must not stop the tests of everything else.
    console.warn('[switchyard tests] tsc reported type errors (above); dist/ was emitted anyway')
  }
  mkdirSync(path.dirname(STAMP), { recursive: true })
  writeFileSync(STAMP, `${started.toISOString()}\n`)
  utimesSync(STAMP, started, started)
}
