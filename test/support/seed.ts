// One seed per test run for every random choice a test makes (fast-check runs, the crash test's
// kill moments...). It comes from TEST_SEED when set, else it is drawn once by the global set-up
// and shared with every test file; a failing test prints it (test/setup.ts), and
// `TEST_SEED=<seed> npx vitest run <file>` replays the same choices.
import { seededRandom as emulatorRandom } from '../../src/emulator/sample-project.js'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    testSeed: number
  }
}

/** The seed from the environment, if one was given; throws on a value that is not an integer. */
export function seedFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.TEST_SEED
  if (raw === undefined || raw === '') return undefined
  const n = Number(raw)
  if (!Number.isSafeInteger(n)) throw new Error(`TEST_SEED must be an integer, got ${JSON.stringify(raw)}`)
  return n >>> 0
}

export function drawSeed(): number {
  return (Math.random() * 2 ** 32) >>> 0
}

function providedSeed(): number | undefined {
  try {
    return inject('testSeed')
  } catch {
    return undefined
  }
}

/** This run's seed (an unsigned 32-bit integer). */
export const TEST_SEED: number = seedFromEnv() ?? providedSeed() ?? drawSeed()

function hash(label: string): number {
  let h = 2166136261
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619)
  return h >>> 0
}

/**
 * A deterministic stand-in for Math.random (mulberry32), seeded by this run's seed and a label,
 * so two uses in one run do not draw the same numbers.
 */
export function seededRandom(label: string, seed = TEST_SEED): () => number {
  return emulatorRandom((seed ^ hash(label)) >>> 0)
}
