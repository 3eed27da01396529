// POST /webhooks: the raw bytes are read under a size limit; the decoder (a thread of the ingest
// pool, or inline) checks the signature before anything parses them, then parses and validates
// the batch; its string events become jobs and go to the intake.
// Every refusal is an http-error with a message the sender (or the operator reading the log) can
// act on; a refused request leaves nothing behind.
import createHttpError from 'http-errors'
import type { Middleware } from 'koa'
import getRawBody from 'raw-body'
import type { Logger } from '../util/logger.js'
import type { Metrics } from '../util/metrics.js'
import type { IntakeResult } from '../queue/intake.js'
import type { EncodedJobs } from '../queue/journal.js'
import type { Job } from '../queue/job.js'
import type { BatchDecoder } from './batch-decoder.js'
import { eventLabel } from './event-label.js'
import type { OtherEvent } from './event-types.js'
import { toJobs, type BatchOrigin } from './unbatch.js'

export interface WebhookDeps {
  appSecrets(): readonly string[]
  decoder: BatchDecoder
  headerPrefix: string
  bodyLimit: number
  log: Logger
  metrics: Metrics
  /** Is this a module key of ours (the webhook module's or a pipeline's)? */
  knownModuleKey(key: string): boolean
  hasPipeline(key: string): boolean
  newBatchId(): string
  /** Organization id -> domain, learned from earlier deliveries or the OAuth connection. */
  resolveDomain(organizationId: string, domainHeader: string): Promise<string>
  accept(batchId: string, jobs: Job[], encoded: EncodedJobs): Promise<IntakeResult>
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
      raw = await getRawBody(ctx.req, { limit: deps.bodyLimit })
    } catch (error) {
      const e = error as { type?: string; status?: number; message?: string }
      if (e.type === 'entity.too.large') throw refuse(413, 'too_large', `body is over the limit of ${deps.bodyLimit} bytes`)
      throw refuse(e.status && e.status < 500 ? e.status : 400, 'bad_body', `could not read the body: ${e.message ?? 'aborted'}`)
    }
    const bytes = raw.length
    let decoded
    try {
      decoded = await deps.decoder.decode(raw, signature)
    } catch (error) {
      // A thread of the pool failed (it is replaced); the service delivers the batch again.
      log().error({ err: error, bytes }, 'decoding the webhook failed')
      throw refuse(500, 'decode_failed', 'the worker could not decode the batch; deliver it again')
    }
    if (!decoded.ok) {
      if (decoded.code === 'bad_signature') {
        log().warn({ moduleKey: moduleKey.slice(0, 100), bytes }, `webhook signature does not match: check that APP_SECRET matches the app's secret`)
      }
      throw refuse(decoded.status, decoded.code, decoded.message)
    }
    if (!deps.knownModuleKey(moduleKey)) {
      log().warn({ moduleKey: moduleKey.slice(0, 100) }, `webhook for module key "${moduleKey.slice(0, 100)}" that no pipeline declares`)
      throw refuse(404, 'unknown_module', `no module with key "${moduleKey.slice(0, 100)}"`)
    }
    if (decoded.eventError) throw refuse(400, 'invalid_event', decoded.eventError)
    for (const key of decoded.moduleKeys) {
      if (!deps.hasPipeline(key)) {
        log().warn({ moduleKey: key }, `strings arrived for module key "${key}" that no pipeline declares; add a pipeline with that key or remove the step`)
        throw refuse(404, 'unknown_module', `no pipeline for module key "${key}"`)
      }
    }

    const organizationId = ctx.get(h.id)
    const domain = await deps.resolveDomain(organizationId, ctx.get(h.domain))
    const batchId = deps.newBatchId()
    bindings.delivery = batchId
    if (child) child = child.child({ delivery: batchId })
    const origin: BatchOrigin = { organizationId, domain, batchId }
    const jobs = toJobs(decoded.jobs, origin)
    for (const [event, n] of decoded.eventCounts) metrics.events.inc({ event: eventLabel(event) }, n)

    const result = await deps.accept(batchId, jobs, { organizationId, domain, text: decoded.jobs })
    if (result.status === 'busy') {
      metrics.batches.inc({ result: 'busy' })
      log().info({ strings: jobs.length, retryAfter: result.retryAfterSeconds }, `${result.reason ?? 'queue full'}: batch refused with 503`)
      ctx.set('Retry-After', String(result.retryAfterSeconds))
      throw createHttpError(503, result.reason ? `${result.reason}; retry later` : 'queue is full; retry later', { code: 'busy', expose: true })
    }
    if (decoded.others.length) await deps.otherEvents(decoded.others, origin)
    metrics.batches.inc({ result: 'accepted' })
    if (deps.log.isLevelEnabled('debug')) log().debug({ accepted: result.accepted, duplicates: result.duplicates, events: decoded.others.length }, 'batch accepted')
    ctx.status = 200
    ctx.body = { accepted: result.accepted, duplicates: result.duplicates, events: decoded.others.length }
  }
}
