// vitest runs without globals; PluginTester registers its cases through these.
import fc from 'fast-check'
import { beforeEach, describe, it } from 'vitest'
import { PluginTester } from '../src/engine/plugin-tester.js'
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
