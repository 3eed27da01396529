// The Stryker test set plus test/store and test/scale, the tests that use the local Redis and
// PostgreSQL: for measuring the journal files (journal.ts, bullmq-journal.ts) against the tests that
// exercise them there, one run at a time (the tests share the services). Through
// stryker.services.config.mjs; needs Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432
// (database test), or the SWITCHYARD_TEST_*_URL overrides (test/support/services.ts).
import { defineConfig } from 'vitest/config'
import stryker from './vitest.stryker.config.js'

export default defineConfig({
  test: {
    ...stryker.test,
    exclude: (stryker.test?.exclude ?? []).filter((e) => e !== 'test/store/**' && e !== 'test/scale/**'),
  },
})
