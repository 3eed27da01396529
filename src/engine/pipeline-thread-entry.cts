// The file the pipeline pool's threads are started with. Piscina first require()s a thread's
// module; on Node 20, require() of an ES module can race the import() calls the module starts while
// it loads (plugins), and Node then aborts the whole process ("v8::Module::IsGraphAsync must be
// used on an instantiated module", nodejs/node#55782). Seen once in several CI runs. This file is
// CommonJS, so require() loads it as such, and it loads the thread's ES module with import() only.
// Piscina awaits the exported promise and takes its value as the task handler; the thread is ready
// (and may be parked in Atomics.wait) only after that, so the promise settles once the thread's
// first load of the pipelines has (see `firstLoad`), or after FIRST_LOAD_WAIT_MS: a load that takes
// longer goes on when a run wakes the thread, where the pool's watchdog bounds it (LOAD_LIMIT_MS).
const FIRST_LOAD_WAIT_MS = 30_000
module.exports = import('./pipeline-thread.js').then(async (m: { default: unknown; firstLoad: Promise<void> }) => {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([m.firstLoad, new Promise<void>((resolve) => { timer = setTimeout(resolve, FIRST_LOAD_WAIT_MS) })])
  clearTimeout(timer)
  return m.default
})
