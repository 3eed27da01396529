// Locks across instances: two Locks on separate connections, and two separate processes, never
// run fn at the same time for one key; a holder that crashes frees its lock (Redis: TTL;
// PostgreSQL: session end). Local locks (SQLite, memory) within one process.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLock, LockTimeoutError, type Locks } from '../../src/store/locks.js'
import { describeWithService } from '../support/services.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const WORKER = fileURLToPath(new URL('./fixtures/lock-worker.mjs', import.meta.url))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Interval = [number, number]

/** Sorted by start, each interval ends before the next starts. */
function expectNoOverlap(intervals: Interval[]) {
  const sorted = [...intervals].sort((x, y) => x[0] - y[0])
  for (let i = 1; i < sorted.length; i++) expect(sorted[i]![0], `interval ${i} starts before ${i - 1} ends`).toBeGreaterThanOrEqual(sorted[i - 1]![1])
}

/** n callers of lock(key) at once, each holding it for workMs; returns when each held it. */
async function contend(locks: Locks[], key: string, n: number, workMs: number): Promise<Interval[]> {
  const intervals: Interval[] = []
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      locks[i % locks.length]!.lock(key, async () => {
        const start = Date.now()
        await sleep(workMs)
        intervals.push([start, Date.now()])
      }),
    ),
  )
  return intervals
}

// The child processes run dist/: build it when src/store/locks.ts is newer (npm test builds first).
function ensureBuilt() {
  const built = `${ROOT}dist/src/store/locks.js`
  if (existsSync(built) && statSync(built).mtimeMs >= statSync(`${ROOT}src/store/locks.ts`).mtimeMs) return
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' })
}

function worker(args: string[]): { child: ChildProcess; output: Promise<string>; line: Promise<string> } {
  const child = spawn(process.execPath, [WORKER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  let firstLine: (s: string) => void
  const line = new Promise<string>((r) => (firstLine = r))
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString()
    if (out.includes('\n')) firstLine(out.slice(0, out.indexOf('\n')))
  })
  const output = new Promise<string>((resolve, reject) =>
    child.on('exit', (code, signal) => (code === 0 ? resolve(out) : reject(new Error(`lock worker exited with ${code ?? signal}`)))),
  )
  output.catch(() => undefined)
  return { child, output, line }
}

describe('local locks (sqlite://, memory://)', () => {
  it('runs callers of one key one after another, in order, and different keys side by side', async () => {
    const locks = await createLock('sqlite://./data/x.sqlite')
    expect(locks.kind).toBe('local')
    const order: number[] = []
    const same = contend([locks], 'k', 6, 5)
    const calls = [1, 2, 3].map((i) => locks.lock('ordered', async () => void order.push(i)))
    expectNoOverlap(await same)
    await Promise.all(calls)
    expect(order).toEqual([1, 2, 3])
    // Two keys: both held at once.
    let inside = 0
    let most = 0
    const hold = () => async () => {
      most = Math.max(most, ++inside)
      await sleep(20)
      inside--
    }
    await Promise.all([locks.lock('a', hold()), locks.lock('b', hold())])
    expect(most).toBe(2)
  })

  it('passes results and errors through, and an error releases the lock', async () => {
    const locks = await createLock('memory://')
    expect(await locks.lock('k', async () => 42)).toBe(42)
    await expect(locks.lock('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await locks.lock('k', async () => 'free again')).toBe('free again')
  })
})

function lockSuite(url: string, kind: 'redis' | 'postgres') {
  const prefix = `t${Date.now().toString(36)}${randomBytes(4).toString('hex')}`
  const opened: Locks[] = []
  const open = async (o: { ttlMs?: number; waitMs?: number } = {}) => {
    const l = await createLock(url, { prefix, ...o })
    opened.push(l)
    return l
  }
  beforeAll(() => ensureBuilt())
  afterAll(async () => {
    for (const l of opened) await l.close()
  })

  it(`is a ${kind} lock`, async () => {
    expect((await open()).kind).toBe(kind)
  })

  it('two instances on separate connections never hold one key at once', async () => {
    const a = await open()
    const b = await open()
    const intervals = await contend([a, b], 'shared', 12, 10)
    expect(intervals).toHaveLength(12)
    expectNoOverlap(intervals)
  })

  it('different keys are held at once', async () => {
    const a = await open()
    const b = await open()
    let inside = 0
    let most = 0
    const hold = async () => {
      most = Math.max(most, ++inside)
      await sleep(100)
      inside--
    }
    await Promise.all([a.lock('key-1', hold), b.lock('key-2', hold)])
    expect(most).toBe(2)
  })

  it('passes results and errors through; an error releases the lock at once', async () => {
    const a = await open()
    const b = await open({ waitMs: 1_000 })
    expect(await a.lock('err', async () => ({ ok: 1 }))).toEqual({ ok: 1 })
    await expect(a.lock('err', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    const started = Date.now()
    expect(await b.lock('err', async () => 'next')).toBe('next')
    expect(Date.now() - started).toBeLessThan(500)
  })

  it('gives up with LockTimeoutError after waitMs while another holds the key', async () => {
    const a = await open()
    const b = await open({ waitMs: 200 })
    let release!: () => void
    const held = a.lock('busy', () => new Promise<void>((r) => (release = r)))
    await sleep(50)
    const started = Date.now()
    await expect(b.lock('busy', async () => 'never')).rejects.toBeInstanceOf(LockTimeoutError)
    expect(Date.now() - started).toBeGreaterThanOrEqual(190)
    release()
    await held
    expect(await b.lock('busy', async () => 'now')).toBe('now')
  })

  if (kind === 'redis') {
    it('renews the TTL while a long fn runs', async () => {
      const a = await open({ ttlMs: 200 })
      const b = await open({ waitMs: 100 })
      let lost = false
      await a.lock('long', async () => {
        // Three TTLs later, the lock is still ours.
        await sleep(600)
        await expect(b.lock('long', async () => (lost = true))).rejects.toBeInstanceOf(LockTimeoutError)
      })
      expect(lost).toBe(false)
    })
  }

  it('two processes contending for one key never overlap', async () => {
    const w1 = worker(['contend', url, prefix, 'procs', '6', '15'])
    const w2 = worker(['contend', url, prefix, 'procs', '6', '15'])
    const all = [...(JSON.parse(await w1.output) as Interval[]), ...(JSON.parse(await w2.output) as Interval[])]
    expect(all).toHaveLength(12)
    expectNoOverlap(all)
  })

  it(kind === 'redis' ? 'a crashed holder frees the lock when its TTL runs out' : 'a crashed holder frees the lock when its session ends', async () => {
    const ttlMs = 800
    const holder = worker(['hold', url, prefix, 'crash', String(ttlMs)])
    try {
      expect(await holder.line).toBe('held')
      const waiter = await open({ waitMs: 200 })
      await expect(waiter.lock('crash', async () => 'too early')).rejects.toBeInstanceOf(LockTimeoutError)
      holder.child.kill('SIGKILL')
      const killed = Date.now()
      const after = await open({ waitMs: 10_000 })
      expect(await after.lock('crash', async () => 'mine')).toBe('mine')
      const waited = Date.now() - killed
      // Redis: at most one TTL (renewed every TTL/3 until the kill). PostgreSQL: the server sees the
      // socket close and ends the session at once.
      expect(waited).toBeLessThan(kind === 'redis' ? ttlMs + 1_000 : 1_500)
    } finally {
      holder.child.kill('SIGKILL')
    }
  })
}

await describeWithService('redis', 'locks on redis://', (url) => lockSuite(url, 'redis'))
await describeWithService('postgres', 'locks on postgres://', (url) => lockSuite(url, 'postgres'))

describe('unreachable lock back ends', () => {
  it.each(['redis://127.0.0.1:1', 'postgres://postgres@127.0.0.1:1/test'])('%s: lock() fails within waitMs, close() returns', async (url) => {
    const locks = await createLock(url, { waitMs: 300 })
    const started = Date.now()
    await expect(locks.lock('k', async () => 'never')).rejects.toThrow()
    expect(Date.now() - started).toBeLessThan(2_000)
    await locks.close()
  })
})
