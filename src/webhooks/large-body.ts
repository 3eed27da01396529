// Webhook bodies too large to hold in memory before they are verified. The service's batches have
// no documented size (platform notes: "a batch may carry many thousands of strings"), and a batch
// refused for its size costs the service a retry, then its strings are FAILED. So a body over
// BODY_MEMORY_LIMIT (or of unknown length, once past it) is written to a file in DATA_DIR as it
// arrives, its HMAC under each of the delivery's secrets computed on the way; only a signature
// that matches lets it be read back, in slices of a few events (event-slices.ts), each decoded as
// a batch of its own by the ingest pool. Memory per large body: a slice and the chunks being read,
// plus the jobs its strings become; an unverified one costs disk up to BODY_LIMIT, deleted as soon
// as it is answered.
import { createHmac, randomUUID, type Hmac } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import path from 'node:path'
import createHttpError from 'http-errors'
import { signBody } from '../protocol/webhook-signature.js'
import type { DecodeResult } from './decode-batch.js'
import type { DecodePool } from './decode-pool.js'
import { EventSlicer, NotSliceable } from './event-slices.js'
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
 * Read a body, whole, into memory while it stays under `memoryLimit`; past it, into a file. The
 * errors are raw-body's (413 `entity.too.large`, 400 `request.size.invalid` or `request.aborted`),
 * and a failed read leaves no file behind.
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
        await handle.write(chunk)
        continue
      }
      held.push(chunk)
      if (size <= options.memoryLimit) continue
      await mkdir(options.dir, { recursive: true })
      file = path.join(options.dir, `${PREFIX}${randomUUID()}`)
      handle = await open(file, 'wx', 0o600)
      for (const part of held.splice(0)) await handle.write(part)
    }
    if (declared !== undefined && size !== declared) {
      throw createHttpError(400, 'request size did not match content length', { type: 'request.size.invalid', expected: declared, received: size })
    }
    if (!handle) return { memory: Buffer.concat(held, size) }
    await handle.close()
    handle = undefined
    const at = file!
    return { spooled: { file: at, size, digests: hmacs.map((h) => h.digest()), remove: () => rm(at, { force: true }) } }
  } catch (error) {
    await handle?.close().catch(() => undefined)
    if (file) await rm(file, { force: true })
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
  try {
    const slicer = new EventSlicer(sliceBytes)
    const decode = async (slices: { body: Buffer; first: number }[]) => {
      for (const slice of slices) {
        const result = await decoder.decode(slice.body, signBody(slice.body, secret), claimed, slice.first)
        if (!result.ok) return result
        claimed ||= result.organizationId
        parts.push(result)
      }
      return undefined
    }
    for await (const chunk of createReadStream(body.file, { highWaterMark: READ_CHUNK }) as AsyncIterable<Buffer>) {
      const failed = await decode(slicer.push(chunk))
      if (failed) return failed
    }
    return (await decode(slicer.end())) ?? parts
  } catch (error) {
    if (!(error instanceof NotSliceable)) throw error
    const whole = await readFile(body.file)
    const result = await decoder.decode(whole, signature, organization)
    return result.ok ? [result] : result
  }
}
