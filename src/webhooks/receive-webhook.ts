// POST /webhooks: the raw bytes are read under a size limit; the decoder (a thread of the ingest
// pool, or inline) checks the signature, with the secrets of the organization the delivery claims
// to come from, before anything parses them; then it parses the batch and validates each event
// alone. The string events become jobs and go to the intake; an event that can't be used is
// logged with the delivery and its index, counted, and (when it names its string) parked with "".
// Every refusal is an http-error with a message the sender (or the operator reading the log) can
// act on; a refused request leaves nothing behind.
import createHttpError from 'http-errors'
import type { Middleware } from 'koa'
import { readBody } from './body-buffers.js'
import type { Logger } from '../util/logger.js'
import type { Metrics } from '../util/metrics.js'
import type { IncomingJobs, IntakeResult } from '../queue/intake.js'
import type { EncodedJobs } from '../queue/journal.js'
import type { Job } from '../protocol/job.js'
import type { DecodePool } from './decode-pool.js'
import type { DecodeResult } from './decode-batch.js'
import { parseAppSecrets, secretsFor } from './app-secrets.js'
import { decodeSpooled, readLargeBody, SpoolError, type DecodedPart, type SpooledBody } from './large-body.js'
import type { IncomingMessage } from 'node:http'
import { eventLabel } from './event-label.js'
import type { OtherEvent } from '../protocol/service-events.js'
import { decodeJobs, type BatchOrigin } from '../queue/job-codec.js'

/** Invalid events of one delivery logged one by one; the rest get one line with their count. */
export const INVALID_EVENTS_LOGGED = 10

export interface WebhookDeps {
  appSecrets(): readonly string[]
  decoder: DecodePool
  headerPrefix: string
  bodyLimit: number
  /**
   * Bodies past `memoryLimit` bytes (or of unknown length, once past it) are written to a file in
   * `dir` as they arrive and decoded in slices (large-body.ts). Without it, every body is read
   * into memory.
   */
  spool?: { memoryLimit: number; dir: string; sliceBytes?: number }
  log: Logger
  metrics: Metrics
  /** Is this a module key of ours (the webhook module's or a pipeline's)? */
  knownModuleKey(key: string): boolean
  hasPipeline(key: string): boolean
  newBatchId(): string
  /**
   * The domain to report under: the one bound to the organization when it was connected; the
   * header's only while none is (organization-domains.ts).
   */
  resolveDomain(organizationId: string, domainHeader: string): Promise<string>
  accept(batchId: string, jobs: IncomingJobs, encoded: EncodedJobs): Promise<IntakeResult>
  /** Why the intake would refuse `bytes` of jobs text from this organization now, if it would. */
  refusal?(organizationId: string, bytes: number): string | undefined
  otherEvents(events: OtherEvent[], origin: BatchOrigin): Promise<void>
}

export function createWebhookHandler(deps: WebhookDeps): Middleware {
  const prefix = deps.headerPrefix.toLowerCase()
  const h = {
    signature: `${prefix}signature`,
    // Section 5.3 names it X-Module-Key, outside the prefix; a prefixed form is accepted too.
    moduleKey: 'x-module-key',
    prefixedModuleKey: `${prefix}module-key`,
    id: `${prefix}id`,
    domain: `${prefix}domain`,
  }
  const headerName = (n: string) => `${deps.headerPrefix}${n}`

  return async (ctx) => {
    const { metrics } = deps
    const refuse = (status: number, code: string, message: string) => {
      metrics.batches.inc({ result: code })
      return createHttpError(status, message, { code, expose: true })
    }
    const signature = ctx.get(h.signature)
    const moduleKey = ctx.get(h.moduleKey) || ctx.get(h.prefixedModuleKey)
    // Every line about this delivery names the organization it came from (headers, unverified
    // until the signature is checked) and, once accepted, the delivery's batch id.
    // Made when first needed: most accepted batches log nothing (a child logger per request was
    // measurable in the bench).
    const bindings: Record<string, string | undefined> = { organization: ctx.get(h.id).slice(0, 64) || undefined, domain: ctx.get(h.domain).slice(0, 100) || undefined }
    let child: Logger | undefined
    const log = () => (child ??= deps.log.child(bindings))
    if (!signature) throw refuse(400, 'missing_signature', `missing ${headerName('Signature')} header`)
    if (!moduleKey) throw refuse(400, 'missing_module_key', 'missing X-Module-Key header')
    const secrets = deps.appSecrets()
    if (secrets.length === 0) {
      log().error('a webhook arrived but no APP_SECRET is configured: set APP_SECRET to the app secret the service shows for this app')
      throw refuse(401, 'no_secret', 'webhook signatures cannot be verified: the worker has no app secret configured')
    }
    // NaN when the body comes without a length (chunked).
    const declared = /^\d+$/.test(ctx.get('content-length')) ? Number(ctx.get('content-length')) : NaN
    if (Number.isFinite(declared) && declared > deps.bodyLimit) {
      ctx.req.resume()
      throw refuse(413, 'too_large', `body of ${declared} bytes is over the limit of ${deps.bodyLimit}`)
    }
    const organizationHeader = ctx.get(h.id).slice(0, 200)
    const decoded = await readAndDecode(ctx.req, signature, organizationHeader, secrets, declared, deps, refuse, log)
    if (!decoded.ok) {
      if (decoded.code === 'bad_signature') {
        log().warn({ moduleKey: moduleKey.slice(0, 100), bytes: decoded.bytes }, `webhook signature does not match: check that APP_SECRET holds this organization's app secret (ORG_ID=SECRET, or a plain secret for every organization)`)
      } else if (decoded.code === 'unknown_organization') {
        log().warn({ bytes: decoded.bytes }, `a webhook arrived from an organization with no app secret here: add ORG_ID=SECRET for it to APP_SECRET`)
      } else if (decoded.code === 'organization_mismatch') {
        log().warn({ bytes: decoded.bytes }, `a signed webhook names another organization than its ${headerName('Id')} header: refused (${decoded.message})`)
      }
      throw refuse(decoded.status, decoded.code, decoded.message)
    }
    const parts = decoded.parts
    if (!deps.knownModuleKey(moduleKey)) {
      log().warn({ moduleKey: moduleKey.slice(0, 100) }, `webhook for module key "${moduleKey.slice(0, 100)}" that no pipeline declares`)
      throw refuse(404, 'unknown_module', `no module with key "${moduleKey.slice(0, 100)}"`)
    }
    for (const key of new Set(parts.flatMap((p) => p.moduleKeys))) {
      // Accepted all the same: the strings wait in the journal (parked) until a pipeline declares
      // the key and the worker restarts; refusing would make the service mark them FAILED.
      if (!deps.hasPipeline(key)) log().warn({ moduleKey: key.slice(0, 100) }, `strings arrived for module key "${key.slice(0, 100)}" that no pipeline declares; add a pipeline with that key (they wait, parked) or remove the step`)
    }

    // A slice's is '' when the delivery has no id header, a plain secret and no event of it names one.
    const organizationId = parts.find((p) => p.organizationId)?.organizationId ?? ''
    bindings.organization = organizationId.slice(0, 64) || undefined
    const domain = await deps.resolveDomain(organizationId, ctx.get(h.domain).slice(0, 200))
    // A large delivery is journaled in parts (its slices, large-body.ts), each a batch of its own;
    // the disk budget is asked for all of it first, and then not again part by part, so that it
    // is never refused half journaled (only a shutdown can cut it short).
    if (parts.length > 1) {
      const reason = deps.refusal?.(organizationId || domain, parts.reduce((n, p) => n + p.jobs.length, 0))
      if (reason) throw busy({ status: 'busy', retryAfterSeconds: 60, reason }, parts.reduce((n, p) => n + p.count, 0), 0)
    }
    const total = { accepted: 0, duplicates: 0, events: 0, invalid: 0 }
    /** Invalid events past the first INVALID_EVENTS_LOGGED whose string is parked. */
    let unloggedParked = 0
    for (let k = 0; k < parts.length; k++) {
      const part = parts[k]!
      const batchId = deps.newBatchId()
      if (k === 0) {
        bindings.delivery = batchId
        if (child) child = child.child({ delivery: batchId })
      }
      const origin: BatchOrigin = { organizationId, domain, batchId }
      // Jobs are made only if the batch goes straight into the window (intake.ts).
      let made: Job[] | undefined
      const text = part.jobs
      const jobs: IncomingJobs = { count: part.count, organizationId, domain, step: part.step, revised: part.revised, admitted: parts.length > 1 && deps.refusal !== undefined, jobs: () => (made ??= decodeJobs(text, origin)) }
      for (const [event, n] of part.eventCounts) metrics.events.inc({ event: eventLabel(event) }, n)
      const result = await deps.accept(batchId, jobs, { organizationId, domain, text })
      if (result.status === 'busy') throw busy(result, jobs.count, k)
      for (const bad of part.invalid) {
        metrics.invalidEvents.inc({ result: bad.parked ? 'parked' : 'logged' })
        // One line each for the first few; a delivery of thousands of them would flood the log.
        if (total.invalid++ < INVALID_EVENTS_LOGGED) log().warn({ index: bad.index, parked: bad.parked }, `event ${bad.index} of the delivery cannot be used (${bad.reason})${bad.parked ? '; its string is reported with "" (parked as TODO)' : '; it names no string to report'}`)
        else if (bad.parked) unloggedParked++
      }
      if (part.others.length) await deps.otherEvents(part.others, origin)
      total.accepted += result.accepted
      total.duplicates += result.duplicates
      total.events += part.others.length
    }
    if (total.invalid > INVALID_EVENTS_LOGGED) {
      const more = total.invalid - INVALID_EVENTS_LOGGED
      log().warn({ notLogged: more, parked: unloggedParked }, `${more} more events of the delivery cannot be used (not logged one by one; counted in switchyard_webhook_invalid_events_total): ${unloggedParked} of them reported with "" (parked as TODO), the others name no string to report`)
    }
    metrics.batches.inc({ result: 'accepted' })
    if (deps.log.isLevelEnabled('debug')) log().debug({ ...total, parts: parts.length }, 'batch accepted')
    ctx.status = 200
    ctx.body = total

    function busy(result: Extract<IntakeResult, { status: 'busy' }>, strings: number, journaled: number) {
      metrics.batches.inc({ result: 'busy' })
      const kept = journaled ? ` (the first ${journaled} of its ${parts.length} parts were journaled; their strings sent again are absorbed as repeats)` : ''
      if (result.reason) log().warn({ strings, retryAfter: result.retryAfterSeconds }, `batch refused with 503: ${result.reason}${kept}`)
      else log().info({ retryAfter: result.retryAfterSeconds }, `stopping: the listener has closed; batch refused with 503${kept}`)
      ctx.set('Retry-After', String(result.retryAfterSeconds))
      return createHttpError(503, result.reason ? `${result.reason}; retry later` : 'the worker is stopping; retry later', { code: 'busy', expose: true })
    }
  }
}

type Refuse = (status: number, code: string, message: string) => Error
type Decoded = { ok: true; parts: DecodedPart[] } | (Extract<DecodeResult, { ok: false }> & { bytes: number })

/**
 * The body read (into memory, or past BODY_MEMORY_LIMIT into a file) and decoded: its parts (one,
 * or a large body's slices), or why it is refused. Refusals of the read itself are thrown.
 */
async function readAndDecode(req: IncomingMessage, signature: string, organization: string, entries: readonly string[], declared: number, deps: WebhookDeps, refuse: Refuse, log: () => Logger): Promise<Decoded> {
  // Only a delivery that names its organization is written to disk: its HMAC is computed on the
  // event loop as it arrives, under that organization's secrets (and the plain ones), not every
  // secret configured. The service always sends the id header.
  const spool = deps.spool && organization && (!Number.isFinite(declared) || declared > deps.spool.memoryLimit) ? deps.spool : undefined
  if (deps.spool && !organization && declared > deps.spool.memoryLimit) {
    req.resume()
    throw refuse(413, 'too_large', `body of ${declared} bytes without an organization id header: only a delivery that names its organization may be over BODY_MEMORY_LIMIT (${deps.spool.memoryLimit})`)
  }
  const secrets = spool ? secretsFor(parseAppSecrets(entries), organization).map((s) => s.secret) : []
  if (spool && secrets.length === 0) {
    req.resume()
    return { ok: false, status: 401, code: 'unknown_organization', message: `no app secret is configured for organization "${organization.slice(0, 64)}"`, bytes: Number.isFinite(declared) ? declared : 0 }
  }
  let raw: Buffer | undefined
  let spooled: SpooledBody | undefined
  // Without a spool (or an id header), a body is read into memory, up to BODY_MEMORY_LIMIT then.
  const memoryOnly = deps.spool ? Math.min(deps.bodyLimit, deps.spool.memoryLimit) : deps.bodyLimit
  try {
    if (!spool) raw = await readBody(req, memoryOnly, deps.decoder.buffers)
    else {
      const read = await readLargeBody(req, { limit: deps.bodyLimit, memoryLimit: spool.memoryLimit, dir: spool.dir, secrets })
      if ('memory' in read) raw = read.memory
      else spooled = read.spooled
    }
  } catch (error) {
    throw readRefusal(error, spool ? deps.bodyLimit : memoryOnly, refuse, log)
  }
  const bytes = raw?.length ?? spooled!.size
  try {
    const result = raw ? await deps.decoder.decode(raw, signature, organization) : await decodeSpooled(spooled!, signature, secrets, organization, deps.decoder, spool!.sliceBytes)
    if (Array.isArray(result)) return { ok: true, parts: result }
    return result.ok ? { ok: true, parts: [result] } : { ...result, bytes }
  } catch (error) {
    if (error instanceof SpoolError) throw readRefusal(error, deps.bodyLimit, refuse, log)
    // A thread of the pool failed (it is replaced); the service delivers the batch again.
    log().error({ err: error, bytes }, 'decoding the webhook failed')
    throw refuse(500, 'decode_failed', 'the worker could not decode the batch; deliver it again')
  } finally {
    await spooled?.remove().catch((error: unknown) => log().warn({ err: error, file: spooled!.file }, 'could not delete a webhook body written to disk; it is deleted at the next start'))
  }
}

/** The answer to a body that could not be read (or written to disk and read back). */
function readRefusal(error: unknown, limit: number, refuse: Refuse, log: () => Logger): Error {
  const e = error as { type?: string; status?: number; message?: string }
  if (e.type === 'entity.too.large') return refuse(413, 'too_large', `body is over the limit of ${limit} bytes`)
  if (error instanceof SpoolError) {
    log().error({ err: error }, `a webhook body over BODY_MEMORY_LIMIT could not be stored on disk (${error.message}): check that DATA_DIR/incoming is writable and has room; the batch was refused with 503 and the service will deliver it again`)
    return Object.assign(refuse(503, 'spool_failed', 'the worker could not store the body; deliver it again'), { headers: { 'Retry-After': '60' } })
  }
  return refuse(e.status && e.status < 500 ? e.status : 400, 'bad_body', `could not read the body: ${e.message ?? 'aborted'}`)
}
