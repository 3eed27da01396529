// The emulator with several organizations and one worker reaching them all, for tests of how one
// organization's failing API affects the others (test/queue/organizations-apart.test.ts, and with
// QUEUE=bullmq test/scale/bullmq-organizations-apart.test.ts).
import { expect } from 'vitest'
import { startEmulator, type OrganizationOptions } from '../../src/emulator/index.js'
import type { Item } from '../../src/engine/types.js'
import { StaticTokenProvider } from '../../src/platform/token-provider.js'
import { fakePipelines } from './fake-pipelines.js'
import { startTestWorker } from './start-test-worker.js'

export const SECRET = 'apart-secret'
type Config = Parameters<typeof startTestWorker>[0]['config']

/**
 * Organization A (`aStrings` strings, 5 languages) and `others`, and a worker reaching them all;
 * both stopped by the functions put in `stops` (worker first).
 */
export async function startOrganizations(stops: Array<() => Promise<void>>, o: { config?: Config; aStrings: number; others: OrganizationOptions[]; decide?: (item: Item) => string }) {
  const emulator = await startEmulator({ strings: o.aStrings, languages: ['de', 'fr', 'ja', 'ar', 'ru'], appSecret: SECRET, seed: 3, moduleKey: 'test-step', organizations: o.others })
  stops.push(() => emulator.stop())
  const tokens = new Map<string, string>()
  for (const org of emulator.organizations()) tokens.set(org.domain, (await emulator.authorizeDirect({ organization: org.domain })).access_token)
  const worker = await startTestWorker({
    pipelines: fakePipelines('test-step', o.decide ?? (() => 'approved'), { needsTranslation: true }),
    config: { apiUrl: emulator.info().apiUrlTemplate, appSecrets: [SECRET], ...o.config },
    tokens: new StaticTokenProvider(tokens),
    heldBaseDelayMs: 200,
  })
  stops.unshift(() => worker.stop())
  emulator.configure({ webhookUrl: `${worker.url}/webhooks` })
  return { emulator, worker }
}

/** Organizations A (`sizes.a` strings in 5 languages) and B (`sizes.b` strings in one). */
export async function twoOrganizations(stops: Array<() => Promise<void>>, config: Config = {}, sizes = { a: 4, b: 5 }, decide?: (item: Item) => string) {
  const { emulator, worker } = await startOrganizations(stops, { config, aStrings: sizes.a, others: [{ id: '300000', domain: 'globex', appSecret: SECRET, strings: sizes.b, languages: ['de'], seed: 4 }], decide })
  const [a, b] = emulator.organizations()
  return { emulator, worker, a: a!.domain, b: b!.domain }
}

/**
 * `stuck`'s strings sent and, once their first runs failed, `other`'s: those must be DONE within
 * `withinMs` of their sending (starved, they were not after a minute), while `stuck`'s are not.
 */
export async function otherDoneWhileStuck(emulator: Awaited<ReturnType<typeof startEmulator>>, stuck: { domain: string; batch: number }, other: { domain: string; batch: number }, withinMs = 5000): Promise<void> {
  await emulator.sendPending({ organization: stuck.domain, batchSize: stuck.batch })
  await new Promise((r) => setTimeout(r, 1500)) // the first runs have failed
  const started = Date.now()
  await emulator.sendPending({ organization: other.domain, batchSize: other.batch })
  await expect.poll(() => emulator.summary(other.domain).notDone, { timeout: 2 * withinMs, interval: 50 }).toBe(0)
  expect(Date.now() - started).toBeLessThan(withinMs)
  expect(emulator.summary(stuck.domain).notDone).toBe(stuck.batch)
}

/** A's API down and its 300 strings sent, then B's 40: B's must be DONE within `withinMs` of their sending. */
export async function bDoneWhileADown(emulator: Awaited<ReturnType<typeof startEmulator>>, a: string, b: string, withinMs = 5000): Promise<void> {
  emulator.configureFaults({ errorRate: 1 }, a)
  await otherDoneWhileStuck(emulator, { domain: a, batch: 300 }, { domain: b, batch: 40 }, withinMs)
}
