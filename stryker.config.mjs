// Mutation testing of the core (npm run mutate; flags pass through, e.g.
// `npm run mutate -- --mutate src/queue/dedupe.ts`). See docs/testing.md for scores and times.
// Scores there are of each file against its own tests: `--mutate <file> --testFiles <its tests>
// --ignoreStatic` (with --testFiles, Stryker 9.6 reports every static mutant as surviving).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: {
    configFile: 'vitest.stryker.config.ts',
    // Each mutated file runs only the test files that import it (vitest related)...
    related: true,
  },
  // ...and each mutant only the tests that reached its code in the dry run.
  coverageAnalysis: 'perTest',
  mutate: [
    'src/webhooks/**/*.ts',
    'src/queue/**/*.ts',
    'src/platform/**/*.ts',
    'src/engine/**/*.ts',
    'plugins/**/*.ts',
    '!**/*.test.ts',
    '!**/*.d.ts',
  ],
  // Two shared cores: more test runners only queue for the CPU.
  concurrency: 2,
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  // '.stryker-tmp*': the sandboxes of another run beside this one (a second temp dir name).
  ignorePatterns: ['dist', 'data', 'reports', 'bench/results.json', 'bench/profiles', '.tmp', '.stryker-tmp*'],
  cleanTempDir: 'always',
}
