// Webhook bodies too large to hold in memory before they are verified. The service's batches have
// no documented size (platform notes: "a batch may carry many thousands of strings"), and a batch
// refused for its size costs the service a retry, then its strings are FAILED. So a body over
// BODY_MEMORY_LIMIT (or of unknown length, once past it) is written to a file in DATA_DIR as it
// arrives, its HMAC under each of the delivery's secrets computed on the way; only a signature
// that matches lets it be read back, in slices of a few events (event-slices.ts), each decoded as
// a batch of its own by the ingest pool. Memory per large body: a slice and the chunks being read,
// plus the jobs its strings become; an unverified one costs disk up to BODY_LIMIT, deleted as soon
// as it is answered.
import { createHmac, randomUUID, timingSafeEqual, type Hmac } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import path from 'node:path'
import createHttpError from 'http-errors'
import { signBody } from '../protocol/webhook-signature.js'
import type { DecodeResult } from './decode-batch.js'
import type { DecodePool } from './decode-pool.js'
import { EventSlicer, NotSliceable, type Slice } from './event-slices.js'
import { matchDigests } from './verify-signature.js'

/** Slices of about this many bytes (some 700 events of the service's size): one decode each. */
export const SLICE_BYTES = 2 * 1024 * 1024
const READ_CHUNK = 1024 * 1024
/** Spooled files start with this; files left by a process that stopped mid-body are removed. */
const PREFIX = 'body-'

export interface SpooledBody {
  file: string
  size: number
  /** The body's HMAC under each secret it may be signed with, in their order. */
  digests: Buffer[]
  /** Delete the file (idempotent). */
  remove(): Promise<void>
}

export interface ReadLargeOptions {
  /** Largest body (BODY_LIMIT): 413 past it. */
  limit: number
  /** Bodies past this many bytes go to a file (BODY_MEMORY_LIMIT). */
  memoryLimit: number
  /** Where the files go. */
  dir: string
  /** The secrets the delivery may be signed with. */
  secrets: readonly string[]
}

type Read = { memory: Buffer } | { spooled: SpooledBody }

/**
 * The body could not be written to or read back from its file (a full disk, permissions): the
 * batch can't be stored, so it is answered 503 and the operator is told (never a 400: the
 * service would spend its retries on a batch that is fine).
 */
export class SpoolError extends Error {
  readonly status = 503
  readonly type = 'spool.failed'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

async function onDisk<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    throw new SpoolError(`could not ${what}: ${(error as Error).message}`, { cause: error })
  }
}

/** All of `chunk` (a write may take less than it was given). */
async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  for (let at = 0; at < chunk.length; ) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten
}

/**
 * Read a body, whole, into memory while it stays under `memoryLimit`; past it, into a file. The
 * errors are raw-body's (413 `entity.too.large`, 400 `request.size.invalid` or `request.aborted`),
 * or a SpoolError (503) when the disk fails; a failed read leaves no file behind.
 */
export async function readLargeBody(req: IncomingMessage, options: ReadLargeOptions): Promise<Read> {
  const header = req.headers['content-length']
  const declared = header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined
  const hmacs: Hmac[] = options.secrets.map((secret) => createHmac('sha256', secret))
  const held: Buffer[] = []
  let size = 0
  let file: string | undefined
  let handle: FileHandle | undefined
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > options.limit) throw createHttpError(413, 'request entity too large', { type: 'entity.too.large', limit: options.limit })
      for (const hmac of hmacs) hmac.update(chunk)
      if (handle) {
        const to = handle
        await onDisk('write the body to its file', () => writeAll(to, chunk))
        continue
      }
      held.push(chunk)
      if (size <= options.memoryLimit) continue
      file = path.join(options.dir, `${PREFIX}${randomUUID()}`)
      const at = file
      handle = await onDisk(`create ${at}`, async () => {
        await mkdir(options.dir, { recursive: true, mode: 0o700 })
        return open(at, 'wx', 0o600)
      })
      const to = handle
      for (const part of held.splice(0)) await onDisk('write the body to its file', () => writeAll(to, part))
    }
    if (declared !== undefined && size !== declared) {
      throw createHttpError(400, 'request size did not match content length', { type: 'request.size.invalid', expected: declared, received: size })
    }
    if (!handle) return { memory: Buffer.concat(held, size) }
    const to = handle
    handle = undefined
    await onDisk('close the body\'s file', () => to.close())
    const at = file!
    return { spooled: { file: at, size, digests: hmacs.map((h) => h.digest()), remove: () => rm(at, { force: true }) } }
  } catch (error) {
    await handle?.close().catch(() => undefined)
    if (file) await rm(file, { force: true }).catch(() => undefined)
    const e = error as { status?: number; code?: string }
    if (e.status) throw error
    // The stream failed: the sender hung up mid-body (Node's "aborted", ECONNRESET).
    throw createHttpError(400, 'request aborted', { type: 'request.aborted', received: size })
  }
}

/** Files a process left when it stopped while writing or decoding a body: garbage now. */
export async function removeLeftBodies(dir: string): Promise<number> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return 0
  }
  const left = names.filter((n) => n.startsWith(PREFIX))
  await Promise.all(left.map((n) => rm(path.join(dir, n), { force: true })))
  return left.length
}

export type DecodedPart = Extract<DecodeResult, { ok: true }>

/**
 * A spooled body's decoded parts, or the failure that refuses it whole. The signature is checked
 * first (against the digests computed as it was read); then the file is read in slices, each a
 * batch of its own, signed again with the secret that signed the whole so that the decoder's rule
 * holds as for any body (nothing is parsed unless its signature matches). A body not in the
 * service's shape (`NotSliceable`) is read and decoded whole.
 */
export async function decodeSpooled(body: SpooledBody, signature: string, secrets: readonly string[], organization: string, decoder: DecodePool, sliceBytes = SLICE_BYTES): Promise<DecodedPart[] | Extract<DecodeResult, { ok: false }>> {
  const matched = matchDigests(body.digests, signature)
  if (matched === -1) return { ok: false, status: 401, code: 'bad_signature', message: 'signature does not match the body' }
  const secret = secrets[matched]!
  const parts: DecodedPart[] = []
  // Every slice must be of the organization the first one names (when the header names none).
  let claimed = organization
  // The bytes read back must be the bytes that were signed (a disk that lost some would slip
  // through the slices' own signatures): checked before any part is journaled.
  const reread = createHmac('sha256', secret)
  let size = 0
  const decode = async (slices: Slice[]) => {
    for (const slice of slices) {
      const result = await decoder.decode(slice.body, signBody(slice.body, secret), claimed, slice.first)
      if (!result.ok) return result
      claimed ||= result.organizationId
      parts.push(result)
    }
    return undefined
  }
  try {
    const slicer = new EventSlicer(sliceBytes)
    for await (const chunk of readBack(body.file)) {
      reread.update(chunk)
      size += chunk.length
      const failed = await decode(slicer.push(chunk))
      if (failed) return failed
    }
    const failed = await decode(slicer.end())
    if (failed) return failed
  } catch (error) {
    if (!(error instanceof NotSliceable)) throw error
    const whole = await onDisk('read the body back', () => readFile(body.file))
    if (!timingSafeEqual(createHmac('sha256', secret).update(whole).digest(), body.digests[matched]!)) {
      throw new SpoolError(`the body read back from ${body.file} is not the body received (${whole.length} of ${body.size} bytes)`)
    }
    const result = await decoder.decode(whole, signature, organization)
    return result.ok ? [result] : result
  }
  if (size !== body.size || !timingSafeEqual(reread.digest(), body.digests[matched]!)) {
    throw new SpoolError(`the body read back from ${body.file} is not the body received (${size} of ${body.size} bytes)`)
  }
  return parts
}

/** The file's chunks; a failure to read it is a SpoolError. */
async function* readBack(file: string): AsyncGenerator<Buffer> {
  const stream = createReadStream(file, { highWaterMark: READ_CHUNK })
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  try {
    for (;;) {
      const next = await onDisk('read the body back', () => chunks.next())
      if (next.done) return
      yield next.value
    }
  } finally {
    stream.destroy()
  }
}
