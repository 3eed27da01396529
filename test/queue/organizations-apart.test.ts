// Several organizations share one worker: one whose API keeps failing (500s) or is rate-limited
// with a long Retry-After must not keep the others' strings waiting. The translations fetch runs
// in a work slot; it gets a few attempts there, no long wait in place, and then the group leaves
// the slot and is tried again later, with back-off (at least the Retry-After); never parked while
// nothing of the organization's API answers (then held as unavailable, tried by themselves).
import { afterEach, expect, it } from 'vitest'
import { createRetries } from '../../src/worker.js'
import { bDoneWhileADown, SECRET, startOrganizations as startWith, twoOrganizations as twoWith } from '../support/organizations.js'
import type { Job } from '../../src/protocol/job.js'
import type { Item } from '../../src/engine/types.js'

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})
const startOrganizations = (o: Parameters<typeof startWith>[1]) => startWith(stops, o)
const twoOrganizations = (...args: Parameters<typeof twoWith> extends [unknown, ...infer R] ? R : never) => twoWith(stops, ...args)

for (const fault of ['500', '429 with Retry-After: 8'] as const) {
  it(`an organization whose API answers ${fault} keeps its strings waiting; another's are DONE meanwhile, and the first's once its API answers again`, async () => {
    const { emulator, worker, a, b } = await twoOrganizations()
    emulator.configureFaults(fault === '500' ? { errorRate: 1 } : { rateLimitRate: 1, retryAfterSeconds: 8 }, a)
    // A's 20 strings (5 languages: as many groups as there are work slots) first.
    await emulator.sendPending({ organization: a, batchSize: 20 })
    await new Promise((r) => setTimeout(r, 300))
    const started = Date.now()
    await emulator.sendPending({ organization: b, batchSize: 5 })
    await expect.poll(() => emulator.summary(b).notDone, { timeout: 5000, interval: 50 }).toBe(0)
    const tookMs = Date.now() - started
    // Before, A's fetches slept through their back-off in the work slots (an audit measured 17 s
    // for B with 500s, 210 s with Retry-After 30).
    expect(tookMs).toBeLessThan(5000)
    expect(worker.stats().parked).toBe(0)
    expect(emulator.summary(a).notDone).toBe(20)
    if (fault !== '500') {
      // Nothing of A's is asked again before the Retry-After (8 s) is over.
      const endpoint = 'GET /api/v2/projects/:projectId/languages/:languageId/translations'
      const refused = emulator.requestCount(endpoint, 429)
      expect(refused).toBeGreaterThan(0)
      await new Promise((r) => setTimeout(r, 4000))
      expect(emulator.requestCount(endpoint, 429)).toBe(refused)
    }
    emulator.configureFaults(null, a)
    // Their next try: a back-off of a few seconds, or the 8 s the service asked for (more than a
    // slot waits in place: 5 s).
    await expect.poll(() => emulator.summary(a).notDone, { timeout: 45_000, interval: 200 }).toBe(0)
    expect(worker.stats()).toMatchObject({ held: 0, parked: 0 })
  })
}

it('an organization whose API hangs keeps the work slots for one API_TIMEOUT_MS at most: another\'s strings are DONE within it', async () => {
  const { emulator, worker, a, b } = await twoOrganizations({ apiTimeoutMs: 3000 })
  // Every answer to A a minute late: each read in a slot times out.
  emulator.configureFaults({ latencyMs: [60_000, 60_000] }, a)
  await emulator.sendPending({ organization: a, batchSize: 20 })
  await new Promise((r) => setTimeout(r, 300))
  const started = Date.now()
  await emulator.sendPending({ organization: b, batchSize: 5 })
  await expect.poll(() => emulator.summary(b).notDone, { timeout: 15_000, interval: 50 }).toBe(0)
  const tookMs = Date.now() - started
  // Before, a read that timed out was tried again in its slot, twice: B waited three timeouts
  // (9 s here; 90 s at the default API_TIMEOUT_MS).
  expect(tookMs).toBeLessThan(5000)
  emulator.configureFaults(null, a)
  await expect.poll(() => emulator.summary(a).notDone, { timeout: 45_000, interval: 200 }).toBe(0)
  expect(worker.stats()).toMatchObject({ held: 0, parked: 0 })
})

it('strings waiting out a back-off leave the window to another organization: a failing one with more than a window of strings keeps no one out', async () => {
  // A's 300 strings against a window of 100: before, A's strings waiting out their back-off kept
  // their room, the window stayed full of them, and B's 40 waited on disk for minutes (until A's
  // attempts were spent and A was held).
  const { emulator, worker, a, b } = await twoOrganizations({ queueLimit: 100 }, { a: 60, b: 40 })
  await bDoneWhileADown(emulator, a, b)
  // Meanwhile A took no more from the disk than the window held: its strings wait there.
  expect(worker.stats().backlog).toBeGreaterThanOrEqual(200)
  emulator.configureFaults(null, a)
  await expect.poll(() => emulator.summary(a).notDone, { timeout: 60_000, interval: 200 }).toBe(0)
  expect(worker.stats()).toMatchObject({ held: 0, parked: 0 })
}, 90_000)

it('strings waiting out a back-off stay within a window\'s worth, however many organizations fail at once: memory holds at most twice QUEUE_LIMIT', async () => {
  const others = Array.from({ length: 7 }, (_, i) => ({ id: String(300_001 + i), domain: `org${i}`, appSecret: SECRET, strings: 60, languages: ['de', 'fr', 'ja', 'ar', 'ru'], seed: 10 + i }))
  const { emulator, worker } = await startOrganizations({ config: { queueLimit: 100 }, aStrings: 60, others })
  // Every organization's API down (as when the worker's own network fails): 8 x 300 strings.
  for (const org of emulator.organizations()) emulator.configureFaults({ errorRate: 1 }, org.domain)
  for (const org of emulator.organizations()) await emulator.sendPending({ organization: org.domain, batchSize: 300 })
  let most = 0
  let mostRetrying = 0
  for (const until = Date.now() + 8000; Date.now() < until; ) {
    const { depth, retrying } = worker.stats()
    most = Math.max(most, depth + retrying)
    mostRetrying = Math.max(mostRetrying, retrying)
    await new Promise((r) => setTimeout(r, 20))
  }
  expect(mostRetrying).toBeGreaterThan(50) // the back-offs were under way
  expect(most).toBeLessThanOrEqual(200)
  for (const org of emulator.organizations()) emulator.configureFaults(null, org.domain)
  await expect.poll(() => emulator.organizations().reduce((n, o) => n + emulator.summary(o.domain).notDone, 0), { timeout: 60_000, interval: 200 }).toBe(0)
}, 90_000)

it('a string its pipeline sends back for a retry keeps its room and holds up nothing of its organization', async () => {
  // One string of 500 the pipeline always answers "retry" (not its API failing): the rest of its
  // organization, more than the window, goes on being read from disk and is DONE meanwhile.
  let stuck: number | undefined
  const decide = (item: Item) => {
    if (item.targetLanguage.id === 'de') stuck ??= item.id
    return item.id === stuck && item.targetLanguage.id === 'de' ? 'retry' : 'approved'
  }
  const { emulator, a } = await twoOrganizations({ queueLimit: 100 }, { a: 100, b: 1 }, decide)
  await emulator.sendPending({ organization: a, batchSize: 500 })
  await expect.poll(() => emulator.progress(a).done, { timeout: 15_000, interval: 100 }).toBe(499)
  expect(stuck).toBeDefined()
}, 30_000)

it('strings waiting out a back-off go when their organization\'s API answers again, but not before a Retry-After they were given, and a pipeline\'s retry waits its whole back-off', () => {
  const pushed: number[][] = []
  const timers = new Set<NodeJS.Timeout>()
  const retries = createRetries({ timers, closing: () => false, push: (jobs) => void pushed.push(jobs.map((j) => j.stringId)) })
  const jobs = (...ids: number[]) => ids.map((stringId) => ({ stringId, domain: 'acme' }) as Job)
  retries.add(jobs(1, 2), 60_000)
  retries.add(jobs(3), 60_000, 30_000)
  retries.add(jobs(4), 60_000, 0)
  retries.add(jobs(5), 60_000, 0, false, false) // its pipeline asked for a retry: not the API's
  retries.release('other')
  expect(pushed).toEqual([])
  retries.release('acme')
  expect(pushed).toEqual([[1, 2], [4]])
  expect(timers.size).toBe(2)
  for (const t of timers) clearTimeout(t)
})
