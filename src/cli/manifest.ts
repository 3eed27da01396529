// `switchyard manifest`: the manifest the worker serves at /manifest.json, from the pipelines.
import { loadConfig } from '../config/load-config.js'
import { PipelineHost, pipelineSourceOf } from '../engine/pipeline-host.js'
import { renderManifest } from '../server/manifest.js'
import { silentLogger } from '../util/logger.js'

const USAGE = `usage: switchyard manifest
Prints the app manifest the worker serves at /manifest.json, rendered from the pipelines (PIPELINES_DIR).
`

export async function runManifest(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) { process.stdout.write(USAGE); return 0 }
  if (args.length) { process.stderr.write(`unknown argument ${args[0]}\n${USAGE}`); return 2 }
  const config = loadConfig(process.env)
  const host = new PipelineHost(pipelineSourceOf(config.pipelinesDir), {
    pluginsDir: config.pluginsDir || undefined,
    log: silentLogger(),
    cacheFor: () => ({ get: async () => undefined, set: async () => {} }),
    env: process.env,
    metrics: { add() {} },
  })
  const loaded = await host.load()
  if (!loaded.ok) {
    for (const e of loaded.errors) console.error(`${e.file}:${e.line}:${e.col} ${e.message}`)
    return 1
  }
  const set = host.current
  console.log(JSON.stringify(renderManifest({ baseUrl: config.baseUrl, clientId: config.clientId, pipelines: set.all(), events: set.events(), scopes: config.oauthScopes }), null, 2))
  await set.close()
  return 0
}
