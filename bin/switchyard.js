#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm run build`, run by `npm ci` through `prepare`).
import { main } from '../dist/src/cli/main.js'

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code },
  (err) => { console.error(err instanceof Error ? err.message : err); process.exitCode = 1 },
)
