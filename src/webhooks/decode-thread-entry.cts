// The file the ingest threads are started with: CommonJS, loading the ES module with import()
// only. See ../engine/pipeline-thread-entry.cts for why a thread is never started with require()
// of an ES module on Node 20.
module.exports = import('./decode-thread.js').then((m: { default: unknown }) => m.default)
