// The service's side of webhook delivery (sections 2.5, 2.6, 5.3, 6 and the platform notes):
// strings in NEED_PROCESS become `string.status_on_step.recalculation_triggered` events, one per
// (string, target language), sent in signed batches, one organization per batch, signed with that
// organization's app_secret. A non-2XX spends one of a few retries on the sender's own schedule
// (Retry-After is ignored, as the platform notes assume of the service); after the last, the
// batch's strings become FAILED until a Resend. X-Module-Key names the app's `webhook` module.
import { signBody } from '../protocol/webhook-signature.js'
import { RECALCULATION_EVENT } from '../protocol/service-events.js'
import type { Logger } from '../util/logger.js'
import type { EmulatorSettings } from './emulator-settings.js'
import { SOURCE_LANGUAGE, type SampleProject, type SampleString } from './sample-project.js'
import { serviceLanguage } from './service-languages.js'
import type { Tenant } from './tenant.js'

export interface SendOptions {
  /** Only these strings (default: all). */
  stringIds?: number[]
  /** Only these target languages (default: the step's). */
  languageIds?: string[]
  /** At most this many events. */
  limit?: number
  /** Send whatever the status (duplicate deliveries, resends); default only NEED_PROCESS. */
  anyStatus?: boolean
  /**
   * Send NEED_PROCESS strings again whose delivery the app already confirmed (a deliberate repeat).
   * Default false: as the service, a confirmed arrival is not sent again; an app that confirms a
   * string and loses it is not rescued by the next send.
   */
  redeliver?: boolean
  batchSize?: number
  parallel?: number
  originEvent?: string
  /** Deliver here instead of the configured webhook URL. */
  url?: string
  /** Only this organization (id or domain); default every organization, each in its own batches. */
  organization?: string
  /** Add fields the receiver does not know yet to every event and its stringStatus (events gain fields over time). */
  unknownFields?: boolean
  /** Send the events of these strings without their string id (`translation.id`): malformed events in a good batch. */
  malformedStringIds?: number[]
}

export interface DeliveryReport {
  batches: number
  events: number
  /** POSTs made, retries included. */
  attempts: number
  /** Batches confirmed with a 2XX. */
  delivered: number
  failedBatches: number
  /** Every answer by status code; `network` for no answer (refused, reset, timeout). */
  statuses: Record<string, number>
  /** Non-2XX answers by status code. */
  non2xx: Record<string, number>
  /** Strings marked FAILED after the last retry. */
  failedStrings: Array<{ stringId: number; languageId: string }>
  durationMs: number
}

export interface RawRequest {
  body: string | Buffer
  headers?: Record<string, string>
  /** Add the standard headers (5.3) signed over `body`; explicit `headers` win. Default true. */
  standardHeaders?: boolean
  url?: string
  method?: string
  /** Organization (id or domain) whose headers and secret sign the body. Default the first. */
  organization?: string
}

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

function emptyReport(): DeliveryReport {
  return { batches: 0, events: 0, attempts: 0, delivered: 0, failedBatches: 0, statuses: {}, non2xx: {}, failedStrings: [], durationMs: 0 }
}

function mergeInto(total: DeliveryReport, part: DeliveryReport): void {
  total.batches += part.batches
  total.events += part.events
  total.attempts += part.attempts
  total.delivered += part.delivered
  total.failedBatches += part.failedBatches
  for (const [k, v] of Object.entries(part.statuses)) total.statuses[k] = (total.statuses[k] ?? 0) + v
  for (const [k, v] of Object.entries(part.non2xx)) total.non2xx[k] = (total.non2xx[k] ?? 0) + v
  total.failedStrings.push(...part.failedStrings)
  total.durationMs += part.durationMs
}

/**
 * Serializes events by splicing pre-serialized shared parts: a batch of 100 costs little. Exported
 * for `switchyard bench`, which builds the same events for its load generator.
 */
export class EventWriter {
  private readonly project: string
  private readonly files = new Map<number, string>()
  private readonly languages = new Map<string, string>()
  private readonly source: string
  private readonly step: string
  private readonly user: string
  private readonly records = new Map<number, string>()

  constructor(private readonly sample: SampleProject, private readonly originEvent: string) {
    this.project = JSON.stringify(sample.project)
    for (const [id, file] of sample.files) this.files.set(id, JSON.stringify({ ...file, project: sample.project }))
    for (const code of sample.languages) this.languages.set(code, JSON.stringify(serviceLanguage(code)))
    this.source = JSON.stringify(SOURCE_LANGUAGE)
    this.step = JSON.stringify(sample.step)
    this.user = JSON.stringify(sample.user)
  }

  private record(str: SampleString): string {
    let json = this.records.get(str.id)
    if (json === undefined) {
      const { organization, project } = this.sample
      const own = JSON.stringify({
        id: str.id,
        identifier: str.key,
        key: str.key,
        text: str.text,
        type: str.type,
        context: str.context,
        maxLength: String(str.maxLength),
        isHidden: false,
        isDuplicate: false,
        masterStringId: null,
        revision: str.revision,
        hasPlurals: str.hasPlurals,
        labelIds: str.labelIds,
        url: `https://${organization.domain}.service.test/editor/${project.id}/${str.fileId}#${str.id}`,
        createdAt: str.createdAt,
        updatedAt: null,
      })
      json = `${own.slice(0, -1)},"file":${this.files.get(str.fileId)},"project":${this.project}}`
      this.records.set(str.id, json)
    }
    return json
  }

  event(str: SampleString, languageId: string): string {
    return (
      `{"event":"${RECALCULATION_EVENT}","stringStatus":{"status":"NEED_PROCESS","output":"",` +
      `"originEvent":${JSON.stringify(this.originEvent)},"organizationId":${JSON.stringify(this.sample.organization.id)},` +
      `"translation":${this.record(str)},"sourceLanguage":${this.source},"affectedLanguage":${this.languages.get(languageId)},` +
      `"workflowStep":${this.step},"user":${this.user}}}`
    )
  }
}

interface Batch {
  body: Buffer
  keys: Array<{ stringId: number; languageId: string }>
  /** The arrival each key's event was sent for (keys[i] -> arrivals[i]). */
  arrivals?: number[]
  tenant: Tenant
}

/** An event with fields the receiver does not know yet, and/or without its string id. */
function alterEvent(json: string, unknownFields: boolean, malformed: boolean): string {
  const event = JSON.parse(json) as { stringStatus: { translation: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>
  if (unknownFields) {
    event.deliveryAttemptHint = { since: '2027-01', note: 'a field added after this app was written' }
    event.stringStatus.reviewerComment = null
    event.stringStatus.translation.aiScore = 0.97
  }
  if (malformed) delete event.stringStatus.translation.id
  return JSON.stringify(event)
}

export class WebhookSender {
  /** Everything sent since start (or the last counter reset). */
  totals: DeliveryReport = emptyReport()

  constructor(
    private readonly settings: EmulatorSettings,
    private readonly tenants: () => Tenant[],
    /** The organization named by id or domain, or the first; throws on an unknown one. */
    private readonly tenant: (key?: string) => Tenant,
    private readonly log: Logger,
  ) {}

  resetTotals(): void {
    this.totals = emptyReport()
  }

  /** Standard headers of section 5.3 for a body, for one organization (default the first). */
  headersFor(body: string | Buffer, tenant: Tenant = this.tenant()): Record<string, string> {
    const s = this.settings
    return {
      'User-Agent': s.userAgent,
      'Content-Type': 'application/json',
      [`${s.headerPrefix}Id`]: tenant.id,
      [`${s.headerPrefix}Domain`]: tenant.domain,
      [`${s.headerPrefix}Signature`]: signBody(body, tenant.appSecret),
      [s.moduleKeyHeader]: s.webhookModuleKey,
    }
  }

  /** Sends the strings waiting on the step (NEED_PROCESS), batched and signed, per organization. */
  async sendPending(options: SendOptions = {}): Promise<DeliveryReport> {
    const tenants = options.organization !== undefined ? [this.tenant(options.organization)] : this.tenants()
    const batches: Batch[] = []
    for (const tenant of tenants) batches.push(...this.pendingBatches(tenant, options))
    return this.deliverAll(batches, options)
  }

  private pendingBatches(tenant: Tenant, options: SendOptions): Batch[] {
    const { sample, statuses } = tenant.world
    const writer = new EventWriter(sample, options.originEvent ?? 'string.added')
    const malformed = options.malformedStringIds ? new Set(options.malformedStringIds) : undefined
    // A language taken out of the step is no longer sent (its strings left the step).
    const languages = (options.languageIds ?? sample.languages).filter((l) => sample.step.languages.includes(l))
    const strings = options.stringIds
      ? options.stringIds.map((id) => sample.byId.get(id)).filter((s): s is SampleString => s !== undefined)
      : sample.strings
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    const batchSize = options.batchSize ?? this.settings.batchSize
    const batches: Array<{ parts: string[]; keys: Array<{ stringId: number; languageId: string }>; arrivals: number[] }> = []
    let current: (typeof batches)[number] = { parts: [], keys: [], arrivals: [] }
    let count = 0
    // String-major order: a batch holds the languages of a string together, as the service does.
    outer: for (const str of strings) {
      for (const languageId of languages) {
        const entry = statuses.get(str.id, languageId)
        if (!entry || (!options.anyStatus && entry.status !== 'NEED_PROCESS')) continue
        if (!options.anyStatus && !options.redeliver && entry.delivered === entry.arrivals) continue
        if (count >= limit) break outer
        let event = writer.event(str, languageId)
        if (options.unknownFields || malformed?.has(str.id)) event = alterEvent(event, options.unknownFields === true, malformed?.has(str.id) === true)
        current.parts.push(event)
        current.keys.push({ stringId: str.id, languageId })
        current.arrivals.push(entry.arrivals)
        count++
        if (current.parts.length >= batchSize) {
          batches.push(current)
          current = { parts: [], keys: [], arrivals: [] }
        }
      }
    }
    if (current.parts.length > 0) batches.push(current)
    // Encoded once: the same bytes are signed and sent.
    return batches.map((b) => ({ body: Buffer.from(`{"events":[${b.parts.join(',')}]}`), keys: b.keys, arrivals: b.arrivals, tenant }))
  }

  /** Sends arbitrary event objects (project.translated, ...) as batches of `{ events }`. */
  async sendEvents(events: unknown[], options: Pick<SendOptions, 'batchSize' | 'parallel' | 'url' | 'organization'> = {}): Promise<DeliveryReport> {
    const batchSize = options.batchSize ?? this.settings.batchSize
    const tenant = this.tenant(options.organization)
    const bodies: Batch[] = []
    for (let i = 0; i < events.length; i += batchSize) {
      bodies.push({ body: Buffer.from(JSON.stringify({ events: events.slice(i, i + batchSize) })), keys: [], tenant })
    }
    return this.deliverAll(bodies, options)
  }

  /** One request exactly as given (fuzz tests): no retry, no status change. */
  async sendRaw(request: RawRequest): Promise<RawResponse> {
    const url = request.url ?? this.requireUrl()
    const headers = { ...(request.standardHeaders === false ? {} : this.headersFor(request.body, this.tenant(request.organization))), ...(request.headers ?? {}) }
    const response = await fetch(url, {
      method: request.method ?? 'POST',
      headers,
      body: request.body,
      signal: AbortSignal.timeout(this.settings.deliveryTimeoutMs),
    })
    return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() }
  }

  private requireUrl(): string {
    const url = this.settings.webhookUrl
    if (!url) throw new Error('emulator: no webhook URL configured (configure({ webhookUrl }))')
    return url
  }

  private async deliverAll(
    batches: Batch[],
    options: Pick<SendOptions, 'parallel' | 'url'>,
  ): Promise<DeliveryReport> {
    const url = options.url ?? this.requireUrl()
    const report = emptyReport()
    const started = performance.now()
    const parallel = Math.max(1, options.parallel ?? this.settings.parallel)
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < batches.length) {
        const batch = batches[next++]!
        report.batches++
        report.events += batch.keys.length
        const ok = await this.deliver(url, batch.body, batch.tenant, report)
        if (ok) {
          report.delivered++
          const { statuses } = batch.tenant.world
          batch.keys.forEach((key, i) => {
            const entry = statuses.get(key.stringId, key.languageId)
            const arrival = batch.arrivals?.[i]
            if (entry && arrival !== undefined && arrival > entry.delivered) entry.delivered = arrival
          })
        } else {
          report.failedBatches++
          const { statuses } = batch.tenant.world
          for (const key of batch.keys) {
            // A string the app already reported (it answered 500 yet did its job) keeps its status.
            if (statuses.get(key.stringId, key.languageId)?.status === 'NEED_PROCESS') {
              statuses.set(key.stringId, key.languageId, 'FAILED')
              report.failedStrings.push(key)
            }
          }
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(parallel, batches.length) }, worker))
    report.durationMs = Math.round(performance.now() - started)
    mergeInto(this.totals, report)
    this.log.debug({ batches: report.batches, delivered: report.delivered, failed: report.failedBatches }, 'emulator: webhook batches sent')
    return report
  }

  private async deliver(url: string, body: Buffer, tenant: Tenant, report: DeliveryReport): Promise<boolean> {
    const headers = this.headersFor(body, tenant)
    const { retries, retryDelayMs, deliveryTimeoutMs } = this.settings
    for (let attempt = 0; attempt <= retries; attempt++) {
      report.attempts++
      let status: number | 'network' = 'network'
      try {
        const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(deliveryTimeoutMs) })
        status = response.status
        await response.arrayBuffer().catch(() => undefined)
      } catch {
        status = 'network'
      }
      report.statuses[status] = (report.statuses[status] ?? 0) + 1
      if (typeof status === 'number' && status >= 200 && status < 300) return true
      report.non2xx[status] = (report.non2xx[status] ?? 0) + 1
      if (attempt === retries) break
      // The sender's own schedule: Retry-After is not honoured (nothing says the platform does).
      const wait = retryDelayMs
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    }
    return false
  }
}
