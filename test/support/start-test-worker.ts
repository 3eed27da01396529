import { loadConfig, type Config } from '../../src/config/load-config.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { createStores, type Stores } from '../../src/store/create-stores.js'
import { silentLogger } from '../../src/util/logger.js'
import { startWorker, type PipelineSource, type Worker, type WorkerDeps } from '../../src/worker.js'

export const SECRET = 'test-app-secret'

export async function startTestWorker(o: { pipelines: PipelineSource; config?: Partial<Config>; fetch?: typeof fetch; stores?: Stores; tokens?: WorkerDeps['tokens']; heldRecheckMs?: number; heldBaseDelayMs?: number; heldSweepMs?: number; findings?: WorkerDeps['findings']; routers?: WorkerDeps['routers']; issuesCatchUpAfterMs?: number; firstFindingsSweepMs?: number; findingsSweepMs?: number; replayRetryMs?: number }): Promise<Worker & { stores: Stores; config: Config }> {
  const config = loadConfig({}, { port: 0, host: '127.0.0.1', appSecrets: [SECRET], apiUrl: 'http://127.0.0.1:9', storeUrl: 'memory://', reportLingerMs: 20, reconcileIntervalMs: 0, ...o.config })
  const stores = o.stores ?? (await createStores(config.storeUrl))
  const worker = await startWorker({ config, log: silentLogger(), stores, pipelines: o.pipelines, tokens: o.tokens ?? new StaticTokenProvider(new Map([['*', 'token']])), fetch: o.fetch, heldRecheckMs: o.heldRecheckMs, heldBaseDelayMs: o.heldBaseDelayMs, heldSweepMs: o.heldSweepMs, findings: o.findings, routers: o.routers, issuesCatchUpAfterMs: o.issuesCatchUpAfterMs, firstFindingsSweepMs: o.firstFindingsSweepMs, findingsSweepMs: o.findingsSweepMs, replayRetryMs: o.replayRetryMs })
  return Object.assign(worker, { stores, config })
}
