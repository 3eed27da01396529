import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'plugins/**/*.test.ts'],
    // End-to-end tests start real servers and child processes; forks isolate them.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: more workers only make the end-to-end tests fight over the CPU.
    maxWorkers: 2,
    setupFiles: ['test/setup.ts'],
    // Tests that start bin/switchyard.js run dist/: build it once, before any test, when stale.
    globalSetup: ['test/global-setup.ts'],
  },
})
