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
import { eventLabel } from './event-label.js'
import type { OtherEvent } from '../protocol/service-events.js'
import { decodeJobs, type BatchOrigin } from '../queue/job-codec.js'

export interface WebhookDeps {
  appSecrets(): readonly string[]
  decoder: DecodePool
  headerPrefix: string
  bodyLimit: number
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
    const declared = Number(ctx.get('content-length'))
    if (Number.isFinite(declared) && declared > deps.bodyLimit) {
      ctx.req.resume()
      throw refuse(413, 'too_large', `body of ${declared} bytes is over the limit of ${deps.bodyLimit}`)
    }
    let raw: Buffer
    try {
      raw = await readBody(ctx.req, deps.bodyLimit, deps.decoder.buffers)
    } catch (error) {
      const e = error as { type?: string; status?: number; message?: string }
      if (e.type === 'entity.too.large') throw refuse(413, 'too_large', `body is over the limit of ${deps.bodyLimit} bytes`)
      throw refuse(e.status && e.status < 500 ? e.status : 400, 'bad_body', `could not read the body: ${e.message ?? 'aborted'}`)
    }
    const bytes = raw.length
    let decoded
    try {
      decoded = await deps.decoder.decode(raw, signature, ctx.get(h.id).slice(0, 200))
    } catch (error) {
      // A thread of the pool failed (it is replaced); the service delivers the batch again.
      log().error({ err: error, bytes }, 'decoding the webhook failed')
      throw refuse(500, 'decode_failed', 'the worker could not decode the batch; deliver it again')
    }
    if (!decoded.ok) {
      if (decoded.code === 'bad_signature') {
        log().warn({ moduleKey: moduleKey.slice(0, 100), bytes }, `webhook signature does not match: check that APP_SECRET holds this organization's app secret (ORG_ID=SECRET, or a plain secret for every organization)`)
      } else if (decoded.code === 'unknown_organization') {
        log().warn({ bytes }, `a webhook arrived from an organization with no app secret here: add ORG_ID=SECRET for it to APP_SECRET`)
      } else if (decoded.code === 'organization_mismatch') {
        log().warn({ bytes }, `a signed webhook names another organization than its ${headerName('Id')} header: refused (${decoded.message})`)
      }
      throw refuse(decoded.status, decoded.code, decoded.message)
    }
    if (!deps.knownModuleKey(moduleKey)) {
      log().warn({ moduleKey: moduleKey.slice(0, 100) }, `webhook for module key "${moduleKey.slice(0, 100)}" that no pipeline declares`)
      throw refuse(404, 'unknown_module', `no module with key "${moduleKey.slice(0, 100)}"`)
    }
    for (const key of decoded.moduleKeys) {
      // Accepted all the same: the strings wait in the journal (parked) until a pipeline declares
      // the key and the worker restarts; refusing would make the service mark them FAILED.
      if (!deps.hasPipeline(key)) log().warn({ moduleKey: key.slice(0, 100) }, `strings arrived for module key "${key.slice(0, 100)}" that no pipeline declares; add a pipeline with that key (they wait, parked) or remove the step`)
    }

    const organizationId = decoded.organizationId
    bindings.organization = organizationId.slice(0, 64) || undefined
    const domain = await deps.resolveDomain(organizationId, ctx.get(h.domain).slice(0, 200))
    const batchId = deps.newBatchId()
    bindings.delivery = batchId
    if (child) child = child.child({ delivery: batchId })
    const origin: BatchOrigin = { organizationId, domain, batchId }
    // Jobs are made only if the batch goes straight into the window (intake.ts).
    let made: Job[] | undefined
    const text = decoded.jobs
    const jobs: IncomingJobs = { count: decoded.count, organizationId, domain, step: decoded.step, jobs: () => (made ??= decodeJobs(text, origin)) }
    for (const [event, n] of decoded.eventCounts) metrics.events.inc({ event: eventLabel(event) }, n)

    const result = await deps.accept(batchId, jobs, { organizationId, domain, text: decoded.jobs })
    if (result.status === 'busy') {
      metrics.batches.inc({ result: 'busy' })
      if (result.reason) log().warn({ strings: jobs.count, retryAfter: result.retryAfterSeconds }, `batch refused with 503: ${result.reason}`)
      else log().info({ retryAfter: result.retryAfterSeconds }, 'stopping: batch refused with 503')
      ctx.set('Retry-After', String(result.retryAfterSeconds))
      throw createHttpError(503, result.reason ? `${result.reason}; retry later` : 'the worker is stopping; retry later', { code: 'busy', expose: true })
    }
    for (const bad of decoded.invalid) {
      metrics.invalidEvents.inc({ result: bad.parked ? 'parked' : 'logged' })
      log().warn({ index: bad.index, parked: bad.parked }, `event ${bad.index} of the delivery cannot be used (${bad.reason})${bad.parked ? '; its string is reported with "" (parked as TODO)' : '; it names no string to report'}`)
    }
    if (decoded.others.length) await deps.otherEvents(decoded.others, origin)
    metrics.batches.inc({ result: 'accepted' })
    if (deps.log.isLevelEnabled('debug')) log().debug({ accepted: result.accepted, duplicates: result.duplicates, events: decoded.others.length, invalid: decoded.invalid.length }, 'batch accepted')
    ctx.status = 200
    ctx.body = { accepted: result.accepted, duplicates: result.duplicates, events: decoded.others.length, invalid: decoded.invalid.length }
  }
}
