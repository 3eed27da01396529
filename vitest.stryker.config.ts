// The test set Stryker runs (npm run mutate): the unit and in-process tests of the core. Tests
// that start the worker as a process, share Redis/PostgreSQL, or measure the machine are left out:
// they are slow, and Stryker's runner uses threads and a sandbox without dist/.
import { defineConfig } from 'vitest/config'
import base from './vitest.config.js'

// One fixed seed: a mutant must meet the same fast-check cases in every run.
process.env.TEST_SEED ??= '20'

export default defineConfig({
  test: {
    ...base.test,
    globalSetup: [],
    exclude: [
      '**/node_modules/**',
      'test/durability/**',
      'test/scale/**',
      'test/store/**',
      'test/e2e/**',
      'test/package/**',
      'test/deploy/**',
      'test/docs/**',
      'test/bench/**',
      'test/cli/serve-reload.test.ts',
    ],
  },
})
