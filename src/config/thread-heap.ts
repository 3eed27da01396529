// The young generation of the worker's threads (ingest and pipeline pools) is set per thread, with
// `resourceLimits.maxYoungGenerationSizeMb`. V8 lets the process-wide `--max-semi-space-size`
// flag win over that limit: `npm start` and the image pass `--max-semi-space-size=8` for the main
// thread, and every thread then had a 16 MB new space instead of the 8 MB its pool asked for
// (about 8 MB more per thread, and the garbage that goes with it: the burst of issue 16 peaked
// 40-50 MB higher). The main isolate's heap is configured once, at start-up, so clearing the flag
// afterwards leaves the main thread's size as given and lets each thread's own limit apply. A
// thread started without resourceLimits (by a plugin, say) then gets V8's default size, as it
// would without the flag.
import v8 from 'node:v8'

let cleared = false

/** Call before a pool starts a thread: threads then take their young generation from resourceLimits. */
export function letThreadsSizeTheirYoungGeneration(): void {
  if (cleared) return
  cleared = true
  // 0 means "not set": V8 then sizes a new isolate's semi-spaces from its resource constraints.
  v8.setFlagsFromString('--max-semi-space-size=0')
}
