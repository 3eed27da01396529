// POST /webhooks: the raw bytes are read under a size limit and the signature checked before
// anything parses them; then the batch is parsed, validated, unbatched and handed to the intake.
// Every refusal is an http-error with a message the sender (or the operator reading the log) can
// act on; a refused request leaves nothing behind.
import createHttpError from 'http-errors'
import type { Middleware } from 'koa'
import getRawBody from 'raw-body'
import type { Logger } from '../util/logger.js'
import type { Metrics } from '../util/metrics.js'
import type { IntakeResult } from '../queue/intake.js'
import type { Job } from '../queue/job.js'
import { describeSchemaError, validateBatch } from './batch-schema.js'
import type { OtherEvent } from './event-types.js'
import { EventError, unbatch, type BatchOrigin } from './unbatch.js'
import { verifySignature } from './verify-signature.js'

export interface WebhookDeps {
  appSecrets(): readonly string[]
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
  accept(batchId: string, jobs: Job[]): Promise<IntakeResult>
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
    let log = deps.log.child({ organization: ctx.get(h.id).slice(0, 64) || undefined, domain: ctx.get(h.domain).slice(0, 100) || undefined })
    if (!signature) throw refuse(400, 'missing_signature', `missing ${headerName('Signature')} header`)
    if (!moduleKey) throw refuse(400, 'missing_module_key', 'missing X-Module-Key header')
    const secrets = deps.appSecrets()
    if (secrets.length === 0) {
      log.error('a webhook arrived but no APP_SECRET is configured: set APP_SECRET to the app secret the service shows for this app')
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
    if (!verifySignature(raw, signature, secrets)) {
      log.warn({ moduleKey: moduleKey.slice(0, 100), bytes: raw.length }, `webhook signature does not match: check that APP_SECRET matches the app's secret`)
      throw refuse(401, 'bad_signature', 'signature does not match the body')
    }

    let body: unknown
    try {
      body = JSON.parse(raw.toString('utf8'))
    } catch (error) {
      throw refuse(400, 'malformed_json', `body is not valid JSON: ${(error as Error).message}`)
    }
    if (!validateBatch(body)) throw refuse(400, 'invalid_batch', describeSchemaError(validateBatch.errors))
    if (!deps.knownModuleKey(moduleKey)) {
      log.warn({ moduleKey: moduleKey.slice(0, 100) }, `webhook for module key "${moduleKey.slice(0, 100)}" that no pipeline declares`)
      throw refuse(404, 'unknown_module', `no module with key "${moduleKey.slice(0, 100)}"`)
    }

    const organizationId = ctx.get(h.id)
    const domain = await deps.resolveDomain(organizationId, ctx.get(h.domain))
    const batchId = deps.newBatchId()
    log = log.child({ delivery: batchId })
    const origin: BatchOrigin = { organizationId, domain, batchId }
    let unbatched
    try {
      unbatched = unbatch((body as { events: Array<{ event: string }> }).events, origin)
    } catch (error) {
      if (error instanceof EventError) throw refuse(400, 'invalid_event', error.message)
      throw error
    }
    for (const key of unbatched.moduleKeys) {
      if (!deps.hasPipeline(key)) {
        log.warn({ moduleKey: key }, `strings arrived for module key "${key}" that no pipeline declares; add a pipeline with that key or remove the step`)
        throw refuse(404, 'unknown_module', `no pipeline for module key "${key}"`)
      }
    }
    for (const e of (body as { events: Array<{ event: string }> }).events) metrics.events.inc({ event: e.event.slice(0, 80) })

    const result = await deps.accept(batchId, unbatched.jobs)
    if (result.status === 'busy') {
      metrics.batches.inc({ result: 'busy' })
      log.info({ strings: unbatched.jobs.length, retryAfter: result.retryAfterSeconds }, 'queue full: batch refused with 503')
      ctx.set('Retry-After', String(result.retryAfterSeconds))
      throw createHttpError(503, 'queue is full; retry later', { code: 'busy', expose: true })
    }
    if (unbatched.others.length) await deps.otherEvents(unbatched.others, origin)
    metrics.batches.inc({ result: 'accepted' })
    log.debug({ accepted: result.accepted, duplicates: result.duplicates, events: unbatched.others.length }, 'batch accepted')
    ctx.status = 200
    ctx.body = { accepted: result.accepted, duplicates: result.duplicates, events: unbatched.others.length }
  }
}
