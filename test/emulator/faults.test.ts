import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startEmulator, STATUS_ENDPOINT, type Emulator } from '../../src/emulator/index.js'

let emu: Emulator
let token: string

beforeAll(async () => {
  emu = await startEmulator({ strings: 10 })
  token = (await emu.authorizeDirect()).access_token
})
afterAll(async () => {
  await emu.stop()
})
beforeEach(() => {
  emu.configure({ faults: { errorRate: 0, rateLimitRate: 0, latencyMs: [0, 0], maxInFlight: 20, nextStatuses: [], retryAfterSeconds: 1, holdAnswers: false } })
  emu.resetCounters()
})

const get = () =>
  fetch(new URL(`/api/v2/projects/42/workflow-steps/7001/languages/de/status`, emu.url), { headers: { authorization: `Bearer ${token}` } })

describe('fault injection', () => {
  it('answers 429 with Retry-After for the configured fraction', async () => {
    emu.configure({ faults: { rateLimitRate: 1, retryAfterSeconds: 7 } })
    const res = await get()
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('7')
    expect(await res.json()).toMatchObject({ error: { code: 429 } })
  })

  it('answers 500 for the configured fraction, roughly', async () => {
    emu.configure({ faults: { errorRate: 0.5 } })
    const statuses = await Promise.all(Array.from({ length: 200 }, async () => (await get()).status))
    const errors = statuses.filter((s) => s === 500).length
    expect(errors).toBeGreaterThan(60)
    expect(errors).toBeLessThan(140)
    expect(statuses.every((s) => s === 200 || s === 500)).toBe(true)
    expect(emu.requestCount(`GET ${STATUS_ENDPOINT}`, 500)).toBe(errors)
  })

  it('answers the scripted statuses first, in order', async () => {
    emu.configure({ faults: { nextStatuses: [503, 429, 500] } })
    const seen = []
    for (let i = 0; i < 4; i++) seen.push((await get()).status)
    expect(seen).toEqual([503, 429, 500, 200])
  })

  it('adds latency and counts the most requests in flight per organization; over 20 is 429', async () => {
    emu.configure({ faults: { latencyMs: [80, 80] } })
    const started = Date.now()
    const statuses = await Promise.all(Array.from({ length: 25 }, async () => (await get()).status))
    expect(Date.now() - started).toBeGreaterThanOrEqual(75)
    expect(emu.maxInFlight()['200000']).toBe(25)
    expect(statuses.filter((s) => s === 429)).toHaveLength(5)
    emu.resetCounters()
    await Promise.all(Array.from({ length: 5 }, get))
    expect(emu.maxInFlight()['200000']).toBe(5)
  })

  it('lets the in-flight limit be lifted', async () => {
    emu.configure({ faults: { latencyMs: [30, 30], maxInFlight: 0 } })
    const statuses = await Promise.all(Array.from({ length: 30 }, async () => (await get()).status))
    expect(statuses.every((s) => s === 200)).toBe(true)
  })

  it('holds the answers of updates it carried out until told to let them go (late answers)', async () => {
    emu.configure({ faults: { holdAnswers: true } })
    const [waiting] = emu.statuses({ status: 'NEED_PROCESS' })
    const patch = fetch(new URL('/api/v2/projects/42/workflow-steps/7001/languages/de/status', emu.url), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ op: 'replace', path: `/${waiting!.stringId}/output`, value: emu.sample.passOutput }]),
    })
    let answered = false
    void patch.then(() => (answered = true), () => undefined)
    // Carried out at once: the string is routed while its answer waits; reads are not held.
    await expect.poll(() => emu.status(waiting!.stringId, 'de')?.status).toBe('DONE')
    expect((await get()).status).toBe(200)
    await new Promise((r) => setTimeout(r, 100))
    expect(answered).toBe(false)
    emu.configure({ faults: { holdAnswers: false } })
    expect((await patch).status).toBe(200)
  })

  it('rejects bad fault settings without changing anything', () => {
    expect(() => emu.configure({ faults: { errorRate: 2 } })).toThrow(/errorRate/)
    expect(() => emu.configure({ batchSize: 5, faults: { latencyMs: [5, 1] } })).toThrow(/latencyMs/)
    expect(emu.settings.batchSize).toBe(100)
  })
})
