// stryker.config.mjs with test/store and test/scale in the test set (vitest.stryker-services.config.ts),
// its own sandbox and report. Pick the tests with --testFiles, e.g.
// `npx stryker run stryker.services.config.mjs --mutate src/queue/bullmq-journal.ts
//  --testFiles test/scale/bullmq-fairness.test.ts --ignoreStatic --concurrency 1`.
import base from './stryker.config.mjs'

export default {
  ...base,
  vitest: { ...base.vitest, configFile: 'vitest.stryker-services.config.ts' },
  tempDirName: '.stryker-tmp-services',
  jsonReporter: { fileName: 'reports/mutation/mutation-services.json' },
}
