// vitest runs without globals; PluginTester registers its cases through these.
import fc from 'fast-check'
import { afterEach, beforeEach, describe, it } from 'vitest'
import { PluginTester } from '../src/engine/plugin-tester.js'
import { takeContractViolations } from './support/contract-fake.js'
import { TEST_SEED } from './support/seed.js'

PluginTester.describe = describe
PluginTester.it = it

// Every property test draws from this run's seed, so a failure replays with TEST_SEED.
fc.configureGlobal({ seed: TEST_SEED | 0 })

beforeEach(({ task, onTestFailed }) => {
  onTestFailed(() => {
    console.error(`[switchyard tests] "${task.name}" failed with TEST_SEED=${TEST_SEED}; replay: TEST_SEED=${TEST_SEED} npx vitest run ${task.file?.name ?? ''}`)
  })
})

// A request that broke the service's contract fails the test that made it, even when the worker
// took the refusal in its stride (test/support/contract-fake.ts).
afterEach(() => {
  const violations = takeContractViolations()
  if (violations.length) throw new Error(`requests that break the service's contract:\n  ${violations.slice(0, 10).join('\n  ')}${violations.length > 10 ? `\n  ...and ${violations.length - 10} more` : ''}`)
})
