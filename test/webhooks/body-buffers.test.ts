// Webhook bodies read into buffers used again (body-buffers.ts): the bytes are the body's, whatever
// the buffer held before; a body outside the pool's range, or without a Content-Length, is read as
// raw-body reads it; a body cut short is refused as raw-body refuses it and its buffer goes back;
// the pool keeps no more than its bound and lets everything go when idle. Through the ingest
// threads, a pooled body's memory is moved to the thread and back with the answer.
import http from 'node:http'
import net from 'node:net'
import { Readable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { BodyBuffers, readBody } from '../../src/webhooks/body-buffers.js'
import { createDecodePool, decodeThreadFile, type DecodePool } from '../../src/webhooks/decode-pool.js'
import { signBody } from '../../src/protocol/webhook-signature.js'
import { recalculationEvent } from '../support/events.js'

const KB = 1024
const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closing.length) await closing.pop()!()
})

describe('BodyBuffers', () => {
  it('gives out exactly the size asked for, in memory of the next power of two, only within its range', () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, maxBytes: 1024 * KB, idleMs: 0 })
    expect(pool.take(64 * KB - 1)).toBeUndefined()
    expect(pool.take(1024 * KB + 1)).toBeUndefined()
    expect(pool.take(Number.NaN)).toBeUndefined()
    const b = pool.take(300 * KB)!
    expect(b.length).toBe(300 * KB)
    expect(b.byteOffset).toBe(0)
    expect(b.buffer.byteLength).toBe(512 * KB)
    expect(pool.owns(b.buffer)).toBe(true)
    expect(pool.owns(new ArrayBuffer(512 * KB))).toBe(false)
    expect(pool.take(64 * KB)!.buffer.byteLength).toBe(64 * KB)
    expect(pool.take(1024 * KB)!.buffer.byteLength).toBe(1024 * KB)
  })

  it('gives a buffer back out for a body of its size class, once, and ignores memory of other sizes or detached', () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, maxBytes: 1024 * KB, idleMs: 0 })
    const first = pool.take(300 * KB)!
    pool.give(first.buffer as ArrayBuffer)
    pool.give(first.buffer as ArrayBuffer)
    for (const size of [500 * KB, 32 * KB, 2048 * KB]) pool.give(new ArrayBuffer(size))
    expect(pool.held).toBe(512 * KB)
    const again = pool.take(400 * KB)!
    expect(again.buffer).toBe(first.buffer)
    expect(again.length).toBe(400 * KB)
    expect(pool.reused).toBe(1)
    expect(pool.held).toBe(0)
    // Twice given, once kept: the next body of that class gets new memory.
    expect(pool.take(300 * KB)!.buffer).not.toBe(first.buffer)
    // Of another class: new memory.
    expect(pool.take(100 * KB)!.buffer.byteLength).toBe(128 * KB)
    const moved = pool.take(100 * KB)!
    const back = structuredClone(moved.buffer, { transfer: [moved.buffer as ArrayBuffer] })
    pool.give(moved.buffer as ArrayBuffer)
    expect(pool.held).toBe(0)
    // Moved back from a thread: another object over that memory, taken back by its size.
    pool.give(back as ArrayBuffer)
    expect(pool.held).toBe(128 * KB)
    expect(pool.owns(pool.take(100 * KB)!.buffer)).toBe(true)
  })

  it('keeps no more than keepBytes, larger buffers making room for smaller ones', () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, keepBytes: 1024 * KB, idleMs: 0 })
    const taken = Array.from({ length: 3 }, () => pool.take(500 * KB)!)
    for (const b of taken) pool.give(b.buffer as ArrayBuffer)
    expect(pool.held).toBe(1024 * KB)
    // A usual body's buffer after a few large ones: one large one goes.
    pool.give(pool.take(100 * KB)!.buffer as ArrayBuffer)
    expect(pool.held).toBe(512 * KB + 128 * KB)
    expect(pool.take(100 * KB)!.buffer.byteLength).toBe(128 * KB)
    expect(pool.reused).toBe(1)
    // A larger one than all those kept, over the keep: not kept (smaller ones stay).
    pool.give(pool.take(1000 * KB)!.buffer as ArrayBuffer)
    expect(pool.held).toBe(512 * KB)
  })

  it('lets its buffers go after idleMs without a body, and keeps them while bodies come', async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, idleMs: 1000 })
    const b = pool.take(100 * KB)!
    pool.give(b.buffer as ArrayBuffer)
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 300))
      const again = pool.take(100 * KB)!
      expect(again.buffer).toBe(b.buffer)
      pool.give(again.buffer as ArrayBuffer)
    }
    expect(pool.held).toBe(128 * KB)
    await new Promise((r) => setTimeout(r, 2000))
    expect(pool.held).toBe(0)
    expect(pool.take(100 * KB)!.buffer).not.toBe(b.buffer)
  })

  it('lets a buffer given back after the others went (a slow body) go in its turn, and takes none back once cleared', async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, idleMs: 200 })
    const slow = pool.take(100 * KB)!
    await new Promise((r) => setTimeout(r, 400))
    pool.give(slow.buffer as ArrayBuffer)
    expect(pool.held).toBe(128 * KB)
    await new Promise((r) => setTimeout(r, 800))
    expect(pool.held).toBe(0)
    const late = pool.take(100 * KB)!
    pool.clear()
    pool.give(late.buffer as ArrayBuffer)
    expect(pool.held).toBe(0)
  })
})

/** A server that reads each request's body with readBody and answers what it read. */
async function server(limit: number, pool: BodyBuffers) {
  const results: Array<{ body?: Buffer; error?: { status?: number; type?: string; message: string } }> = []
  let settled: () => void = () => undefined
  const srv = http.createServer((req, res) => {
    readBody(req, limit, pool).then(
      (body) => {
        results.push({ body: Buffer.from(body) })
        pool.owns(body.buffer) && pool.give(body.buffer as ArrayBuffer)
        res.end('ok')
        settled()
      },
      (error: { status?: number; type?: string; message: string }) => {
        results.push({ error: { status: error.status, type: error.type, message: error.message } })
        res.statusCode = error.status ?? 500
        res.end()
        settled()
      },
    )
  })
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  closing.push(() => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()) }))
  const port = (srv.address() as net.AddressInfo).port
  const next = () => new Promise<void>((r) => { settled = r })
  return { port, results, next }
}

/** A request declaring `declared` bytes that sends `sent` (if any) and goes; what the server read. */
async function cutShort(pool: BodyBuffers, declared: number, sent?: Buffer) {
  const { port, results, next } = await server(10 * 1024 * KB, pool)
  const done = next()
  const socket = net.connect(port, '127.0.0.1')
  await new Promise((r) => socket.once('connect', r))
  socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`)
  if (sent) socket.write(sent)
  await new Promise((r) => setTimeout(r, 50))
  socket.destroy()
  await done
  return results
}

const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251))

describe('readBody', () => {
  it('reads bodies into the pool, each exactly its own bytes though the memory held a longer one before', async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, idleMs: 0 })
    const { port, results } = await server(10 * 1024 * KB, pool)
    const long = bytes(400 * KB, 1)
    const short = bytes(300 * KB, 7)
    for (const body of [long, short]) {
      const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body })
      expect(res.status).toBe(200)
    }
    expect(results.map((r) => r.body?.equals([long, short][results.indexOf(r)]!))).toEqual([true, true])
    expect(pool.reused).toBe(1)
  })

  it('reads a body without a Content-Length (chunked), or one outside the range, as raw-body does, outside the pool', async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, maxBytes: 256 * KB, idleMs: 0 })
    const { port, results } = await server(10 * 1024 * KB, pool)
    const body = bytes(200 * KB, 3)
    const chunked = Readable.from([body.subarray(0, 100 * KB), body.subarray(100 * KB)])
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: chunked, duplex: 'half' } as RequestInit)
    expect(res.status).toBe(200)
    const large = bytes(300 * KB, 5)
    expect((await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: large })).status).toBe(200)
    expect(results[0]!.body!.equals(body)).toBe(true)
    expect(results[1]!.body!.equals(large)).toBe(true)
    expect(pool.held).toBe(0)
  })

  it('hands a body declared over the limit to raw-body, which refuses it with 413', async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, idleMs: 0 })
    const { port, results } = await server(100 * KB, pool)
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: bytes(200 * KB, 1) })
    expect(res.status).toBe(413)
    expect(results[0]!.error).toMatchObject({ status: 413, type: 'entity.too.large' })
  })

  it('refuses a body cut short (the client gone) as aborted, and its buffer goes back to the pool', async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, idleMs: 0 })
    const results = await cutShort(pool, 200 * KB, bytes(100 * KB, 2))
    expect(results[0]!.error).toMatchObject({ status: 400, type: 'request.aborted' })
    expect(pool.held).toBe(256 * KB)
  })

  it('takes no memory of the pool for a client that sends its headers and nothing more', async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, idleMs: 0 })
    const results = await cutShort(pool, 3000 * KB)
    expect(results[0]!.error).toMatchObject({ status: 400, type: 'request.aborted' })
    // Nothing was taken, so nothing came back.
    expect(pool.held).toBe(0)
  })

  it('refuses a stream that ends before or runs past its Content-Length, as raw-body does', { timeout: 5000 }, async () => {
    const pool = new BodyBuffers({ minBytes: 64 * KB, idleMs: 0 })
    const stream = (n: number, declared: number) => Object.assign(Readable.from([bytes(n, 1)]), { headers: { 'content-length': String(declared) } }) as unknown as http.IncomingMessage
    await expect(readBody(stream(100 * KB, 120 * KB), 10 * 1024 * KB, pool)).rejects.toMatchObject({ status: 400, type: 'request.size.invalid', received: 100 * KB })
    await expect(readBody(stream(130 * KB, 120 * KB), 10 * 1024 * KB, pool)).rejects.toMatchObject({ status: 400, type: 'request.size.invalid' })
    // Past its length, it is refused at once, without waiting for an end that may never come.
    let pushed = 0
    const endless = Object.assign(new Readable({ read() { if (pushed++ < 3) this.push(bytes(64 * KB, 2)) } }), { headers: { 'content-length': String(120 * KB) } }) as unknown as http.IncomingMessage
    await expect(readBody(endless, 10 * 1024 * KB, pool)).rejects.toMatchObject({ status: 400, type: 'request.size.invalid', received: 128 * KB })
    expect(pool.held).toBe(128 * KB)
    const whole = await readBody(stream(120 * KB, 120 * KB), 10 * 1024 * KB, pool)
    expect(whole.equals(bytes(120 * KB, 1))).toBe(true)
    // The second stream's one chunk was past its length before any memory was taken.
    expect(pool.reused).toBe(2)
  })
})

describe.skipIf(decodeThreadFile() === undefined)('pooled bodies through the ingest threads', () => {
  const SECRET = 'pool-secret'
  const batch = (n: number, from: number) => JSON.stringify({ events: Array.from({ length: n }, (_, i) => recalculationEvent({ stringId: from + i, text: `Text ${from + i}` })) })

  it('moves a pooled body to its thread and back, and the next body in that memory decodes as its own', async () => {
    const decoder: DecodePool = createDecodePool({ threads: 1, secrets: [SECRET] })
    closing.push(() => decoder.close())
    const buffers = decoder.buffers!
    const decodeIn = async (text: string) => {
      const raw = buffers.take(Buffer.byteLength(text))!
      raw.write(text)
      const memory = raw.buffer
      const result = await decoder.decode(raw, signBody(text, SECRET))
      return { result, memory }
    }
    const first = batch(300, 1)
    const a = await decodeIn(first)
    expect(a.result).toMatchObject({ ok: true, count: 300 })
    // Moved to the thread (detached here) and given back: the pool holds it again.
    expect(a.memory.byteLength).toBe(0)
    expect(buffers.held).toBeGreaterThanOrEqual(Buffer.byteLength(first))
    // Shorter than the first, in the same memory (of the same power of two).
    const second = batch(295, 1000)
    expect(Buffer.byteLength(second)).toBeLessThan(Buffer.byteLength(first))
    expect(Math.ceil(Math.log2(Buffer.byteLength(second)))).toBe(Math.ceil(Math.log2(Buffer.byteLength(first))))
    const b = await decodeIn(second)
    expect(buffers.reused).toBe(1)
    expect(b.result).toMatchObject({ ok: true, count: 295 })
    expect(b.result.ok && JSON.parse(b.result.jobs)).toEqual(JSON.parse((await createDecodePool({ threads: 0, secrets: [SECRET] }).decode(Buffer.from(second), signBody(second, SECRET)) as { jobs: string }).jobs))
    // A refused body gives its memory back too.
    const c = await (async () => {
      const raw = buffers.take(Buffer.byteLength(first))!
      raw.write(first)
      return decoder.decode(raw, 'sha256=' + '0'.repeat(64))
    })()
    expect(c).toMatchObject({ ok: false, code: 'bad_signature' })
    expect(buffers.reused).toBe(2)
    expect(buffers.held).toBeGreaterThan(0)
  })
})
