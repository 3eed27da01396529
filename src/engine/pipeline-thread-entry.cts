// The file the pipeline pool's threads are started with. Piscina first require()s a thread's
// module; on Node 20, require() of an ES module can race the import() calls the module starts while
// it loads (plugins), and Node then aborts the whole process ("v8::Module::IsGraphAsync must be
// used on an instantiated module", nodejs/node#55782). Seen once in several CI runs. This file is
// CommonJS, so require() loads it as such, and it loads the thread's ES module with import() only.
// Piscina awaits the exported promise and takes its value as the task handler, and only then marks
// the thread ready and may park it in Atomics.wait: the promise settles once the thread's start
// load has, where it must (see `startLoad` in pipeline-thread.ts).
module.exports = import('./pipeline-thread.js').then(async (m: { default: unknown; startLoad: Promise<void> }) => {
  await m.startLoad
  return m.default
})
